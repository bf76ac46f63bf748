"""The docs' diagrams: the sequence diagrams mkdocs_diagrams.py draws at build time from real journals (one arrow
each way per record, a fault marker where a fault hit, every page's marker naming a known exchange), and the
architecture picture, a plain SVG whose every module name exists in the package."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from test_docs_site import _mkdocs

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MARKER = re.compile(r"^<!-- diagram: ([a-z0-9-]+) -->$", re.MULTILINE)


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    """mkdocs_diagrams.py, loaded from its file as mkdocs loads a hook."""
    _mkdocs()
    spec = importlib.util.spec_from_file_location("mkdocs_diagrams", ROOT / "mkdocs_diagrams.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markers() -> dict[str, list[str]]:
    """Each page of docs/ that asks for diagrams, with their names in order."""
    found = {page.name: MARKER.findall(page.read_text(encoding="utf-8")) for page in sorted(DOCS.glob("*.md"))}
    return {page: names for page, names in found.items() if names}


def test_every_marker_names_a_diagram_and_every_diagram_is_shown(hook: ModuleType) -> None:
    """A page's `<!-- diagram: NAME -->` names an exchange the hook runs, and each exchange is shown on a page."""
    markers = _markers()
    shown = {name for names in markers.values() for name in names}
    assert shown == set(hook.EXCHANGES)
    assert {"journal.md", "faults.md", "server.md"} <= set(markers)


@pytest.mark.parametrize("name", ["call-with-a-fault", "lost-session", "era-modern-client-old-server",
                                  "era-old-client-modern-server", "era-modern-client-modern-server"])
def test_each_diagram_draws_its_real_journal(hook: ModuleType, name: str) -> None:
    """The exchange runs against a real server, and its SVG has a request arrow and an answer arrow per record,
    a fault marker per faulted record, two lifelines, and links nowhere."""
    journal = hook.journal_of(name)
    records = list(journal)
    drawn = hook.svg(records, prefix=f"{name}-", compact=True)
    assert len(re.findall(r'class="arrow request', drawn)) == len(records) > 0
    assert len(re.findall(r'class="arrow answer', drawn)) == len(records)
    assert [int(s) for s in re.findall(r'class="fault" data-seq="(\d+)"', drawn)] == [
        r.seq for r in records if r.fault is not None
    ]
    assert len(re.findall(r'<line class="lane"', drawn)) == 2
    assert "<a " not in drawn
    assert "href" not in drawn
    assert drawn.startswith('<svg xmlns="http://www.w3.org/2000/svg" class="mcp-journal"')


def test_diagrams_show_what_the_pages_say(hook: ModuleType) -> None:
    """The fault diagram marks the fault, the lost session opens a second one, the era fallback probes first and
    its bands name the stateless era then the handshake era, and the refused legacy client gets 400 -32022."""
    assert "ErrorResult(text=&#x27;store unavailable&#x27;)" in hook.journal_svg("call-with-a-fault")
    lost = hook.journal_svg("lost-session")
    assert "LoseSession()" in lost
    assert lost.count('class="session"') == 2
    fallback = [r.rpc_method for r in hook.journal_of("era-modern-client-old-server")]
    assert fallback[:2] == ["server/discover", "initialize"]
    bands = re.findall(r'<g class="era">.*?<text[^>]*>([^<]+)</text>', hook.journal_svg("era-modern-client-old-server"))
    assert bands == ["stateless era (2026-07-28)", "handshake era (2025-11-25)"]
    assert "400 error -32022" in hook.journal_svg("era-old-client-modern-server")


def test_an_unknown_diagram_fails_the_build_naming_the_page(hook: ModuleType) -> None:
    """A marker naming no exchange raises mkdocs' PluginError with the page and the names there are."""
    from mkdocs.exceptions import PluginError

    class File:
        src_path = "faults.md"

    class Page:
        file = File()

    page: Any = Page()
    with pytest.raises(PluginError, match=r"faults\.md: no diagram named 'no-such'.*lost-session"):
        hook.on_page_content("<p>x</p>\n<!-- diagram: no-such -->\n", page=page, config={}, files=None)


def test_architecture_picture_names_only_modules_that_exist() -> None:
    """Every module or folder the architecture SVG names is a file or folder of mcp_testkit/, and the page shows
    the picture (no Mermaid block left that the site would show as text)."""
    picture = (DOCS / "img" / "architecture.svg").read_text(encoding="utf-8")
    names = re.findall(r'<text class="module"[^>]*>([^<]+)</text>', picture)
    assert len(names) >= 14
    missing = [name for name in names if not (ROOT / "mcp_testkit" / name).exists()]
    assert missing == []
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    assert "](img/architecture.svg)" in page
    assert "```mermaid" not in page


@pytest.mark.parametrize("page", ["architecture.md", "glossary.md"])
def test_the_map_names_only_files_that_exist(page: str) -> None:
    """Every module or folder the architecture page and the glossary name in code (`server/_eras/_run.py`, `_wire/`,
    a bare `_refusals.py` in its folder's paragraph) is a file or folder of the repository, so the map cannot name
    what moved or went."""
    known = [path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*") if ".git" not in path.parts]
    named = set(re.findall(r"`([A-Za-z_./]+(?:\.py|/))`", (DOCS / page).read_text(encoding="utf-8")))
    missing = sorted(
        name
        for name in named
        if not any(path == name.rstrip("/") or path.endswith("/" + name.rstrip("/")) for path in known)
    )
    assert missing == []
