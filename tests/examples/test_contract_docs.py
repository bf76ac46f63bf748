"""docs/contract.md's adapter, beyond running as printed (tests/examples/test_docs.py): it is a BridgeAdapter."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks(page: str) -> list[str]:
    return BLOCK.findall((DOCS / page).read_text())


def test_contract_page_adapter_is_a_bridge_adapter() -> None:
    """The adapter written out in docs/contract.md satisfies the BridgeAdapter protocol on its own."""
    from mcp_testkit.adapters import BridgeAdapter

    namespace: dict[str, object] = {"__name__": "docs_contract_adapter"}
    [block] = [block for block in _blocks("contract.md") if "class MyBridgeAdapter" in block]
    exec(compile(block, str(DOCS / "contract.md"), "exec"), namespace)
    adapter = namespace["MyBridgeAdapter"]()  # type: ignore[operator]
    assert isinstance(adapter, BridgeAdapter)
    assert (adapter.name, adapter.page_limit, adapter.retry) == ("my-bridge", 100, 2)
