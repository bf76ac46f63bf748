"""The Mermaid text parses with Mermaid's own CLI (mmdc, pinned in tests/mermaid, driving Debian's chromium):
`journal.to_mermaid()` of a journal with faults, two sessions, a cancel and a 2026-07-28 exchange renders with an
arrow per request and per answer, and so does every ```mermaid block of README.md and docs/. Without Node.js or
chromium the tests skip saying what to install; under CI=true they fail instead."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import anyio
from node_trees import MERMAID, installed, node
from test_diagram import _busy_journal, _chromium

ROOT = Path(__file__).resolve().parent.parent
MMDC_TIMEOUT_S = 180.0
"""One mmdc run: it starts chromium, loads Mermaid and renders each diagram of its input."""
BLOCK = re.compile(r"^```mermaid\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _mmdc() -> list[str]:
    """The mmdc command line of the pinned tree, configured for Debian's chromium without a sandbox."""
    runtime = node("the Mermaid CLI check")
    _chromium()
    tree = installed(MERMAID)
    package = tree / "node_modules" / "@mermaid-js" / "mermaid-cli"
    entry = json.loads((package / "package.json").read_text(encoding="utf-8"))["bin"]["mmdc"]
    return [runtime, str(package / entry), "--puppeteerConfigFile", str(tree / "puppeteer-config.json"), "--quiet"]


def _render(source: Path, target: Path) -> subprocess.CompletedProcess[str]:
    command = [*_mmdc(), "--input", str(source), "--output", str(target)]
    return subprocess.run(command, capture_output=True, text=True, timeout=MMDC_TIMEOUT_S, cwd=source.parent)


def test_journal_mermaid_parses_with_an_arrow_per_request_and_answer(tmp_path: Path) -> None:
    """mmdc renders the busy journal's Mermaid text, and the picture has one message per request and one per
    answer, and a note per fault, per session and where the era changes."""
    journal = anyio.run(_busy_journal)
    records = list(journal)
    source = tmp_path / "journal.mmd"
    source.write_text(journal.to_mermaid(title="tickets"), encoding="utf-8")
    rendered = _render(source, tmp_path / "journal.svg")
    assert rendered.returncode == 0, rendered.stderr
    picture = (tmp_path / "journal.svg").read_text(encoding="utf-8")
    assert len(re.findall(r'class="messageText"', picture)) == 2 * len(records)
    faults = sum(record.fault is not None for record in records)
    sessions = len({record.session_id for record in records if record.session_id})
    assert (faults, sessions) == (2, 2)
    eras = 2  # a note where the handshake era starts and one where the stateless era does
    assert len(re.findall(r'class="noteText"', picture)) == faults + sessions + eras
    assert "cancel request 7" in picture
    assert "stateless era (2026-07-28)" in picture


def test_every_mermaid_block_of_the_docs_parses(tmp_path: Path) -> None:
    """Each ```mermaid block of README.md and docs/*.md renders with mmdc (one run, one SVG per block)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [
        (page.relative_to(ROOT), block) for page in pages for block in BLOCK.findall(page.read_text(encoding="utf-8"))
    ]
    assert blocks, "docs/journal.md shows a journal's Mermaid text"
    source = tmp_path / "blocks.md"
    source.write_text("".join(f"{page}:\n\n```mermaid\n{block}```\n\n" for page, block in blocks), encoding="utf-8")
    rendered = _render(source, tmp_path / "out.md")
    assert rendered.returncode == 0, f"{[str(page) for page, _ in blocks]}: {rendered.stderr}"
    assert len(list(tmp_path.glob("out-*.svg"))) == len(blocks)


def test_a_broken_diagram_fails_the_check(tmp_path: Path) -> None:
    """mmdc exits non-zero with Mermaid's parse error for text that is not a diagram, so the checks above can fail."""
    source = tmp_path / "broken.mmd"
    source.write_text("sequenceDiagram\n    C->>>S: #1 initialize\n", encoding="utf-8")
    rendered = _render(source, tmp_path / "broken.svg")
    assert rendered.returncode != 0
    assert "Parse error" in rendered.stderr
