"""The code examples of docs/index.md, docs/server.md and docs/journal.md, each run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("index.md", "server.md", "journal.md")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _examples() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for number, block in enumerate(BLOCK.findall((DOCS / page).read_text()), 1):
            found.append((f"{page}#{number}", block))
    return found


EXAMPLES = _examples()


def test_every_page_has_examples() -> None:
    """Each documented page keeps at least one runnable example, so the extraction below cannot silently find none."""
    assert {name.split("#")[0] for name, _ in EXAMPLES} == set(PAGES)


@pytest.mark.parametrize(("name", "code"), EXAMPLES, ids=[name for name, _ in EXAMPLES])
def test_docs_example_runs(name: str, code: str) -> None:
    """The example runs as written (its own server, its own event loop) and its assertions hold."""
    exec(compile(code, str(DOCS / name.split("#")[0]), "exec"), {"__name__": f"docs_{name}"})
