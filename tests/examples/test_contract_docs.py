"""The code examples of docs/contract.md and docs/strategies.md, each page's blocks run in order, as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ("contract.md", "strategies.md")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text())


def test_every_page_has_examples() -> None:
    """Each page keeps runnable examples, so the extraction below cannot silently find none."""
    assert all(len(_blocks(page)) >= 3 for page in PAGES)


@pytest.mark.parametrize("page", PAGES)
def test_docs_examples_run(page: str) -> None:
    """The page's examples run in order in one namespace (later blocks use earlier ones) and their assertions hold."""
    namespace: dict[str, object] = {"__name__": f"docs_{page.removesuffix('.md')}"}
    for number, block in enumerate(_blocks(page), 1):
        exec(compile(block, f"{DOCS / page}#{number}", "exec"), namespace)


def test_contract_page_adapter_is_a_bridge_adapter() -> None:
    """The adapter written out in docs/contract.md satisfies the BridgeAdapter protocol on its own."""
    from mcp_testkit.adapters import BridgeAdapter

    namespace: dict[str, object] = {"__name__": "docs_contract_adapter"}
    [block] = [block for block in _blocks("contract.md") if "class MyBridgeAdapter" in block]
    exec(compile(block, str(DOCS / "contract.md"), "exec"), namespace)
    adapter = namespace["MyBridgeAdapter"]()  # type: ignore[operator]
    assert isinstance(adapter, BridgeAdapter)
    assert (adapter.name, adapter.page_limit, adapter.retry) == ("my-bridge", 100, 2)
