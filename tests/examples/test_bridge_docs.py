"""The examples of docs/bridge.md on approvals, guardrails, the tool cache, deferred servers, command servers and
resumption, run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "bridge.md"
SECTIONS = (
    "Approval gates",
    "Result guardrails",
    "The tool-list cache",
    "Deferred servers",
    "Command servers",
    "Resuming broken streams",
)
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _examples() -> dict[str, list[str]]:
    """The python blocks of each section, by its heading."""
    found: dict[str, list[str]] = {}
    for part in re.split(r"^## ", PAGE.read_text(), flags=re.M)[1:]:
        heading, _, body = part.partition("\n")
        if heading in SECTIONS:
            found[heading] = BLOCK.findall(body)
    return found


EXAMPLES = _examples()


def test_every_section_has_one_example() -> None:
    """Each of these sections keeps exactly one runnable example, so the extraction cannot silently find none."""
    assert {heading: len(blocks) for heading, blocks in EXAMPLES.items()} == dict.fromkeys(SECTIONS, 1)


@pytest.mark.parametrize("section", SECTIONS)
def test_bridge_docs_example_runs(section: str) -> None:
    """The section's example runs as written (its own servers, its own event loop) and its assertions hold."""
    (code,) = EXAMPLES[section]
    exec(compile(code, f"{PAGE}#{section}", "exec"), {"__name__": f"docs_bridge_{section}"})
