"""The code examples of docs/adapters.md, each block run on its own, as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
BLOCKS = BLOCK.findall((DOCS / "adapters.md").read_text())


def test_the_page_has_its_examples() -> None:
    """The page keeps its six runnable examples, so the extraction below cannot silently find none."""
    assert len(BLOCKS) == 6


@pytest.mark.parametrize("number", range(1, len(BLOCKS) + 1))
def test_docs_example_runs(number: int) -> None:
    """Each example of the adapters page runs in a fresh namespace and its assertions hold."""
    namespace: dict[str, object] = {"__name__": f"docs_adapters_{number}"}
    exec(compile(BLOCKS[number - 1], f"{DOCS / 'adapters.md'}#{number}", "exec"), namespace)
