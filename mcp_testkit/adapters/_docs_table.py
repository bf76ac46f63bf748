"""The table of the shipped adapters' declarations in docs/adapters.md, rendered from the adapters themselves (each
made at its defaults, as `mcp-testkit check` makes it), so that the page cannot say a number the code does not
declare. `python -m mcp_testkit.adapters._docs_table` rewrites the page's table; `--check` only says whether it is
current."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["END", "SHIPPED", "START", "main", "render_table", "rewrite", "table_in"]

START = "<!-- declarations:start -->"
END = "<!-- declarations:end -->"
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
"""The page whose table this renders, in the source tree the package was imported from."""

SHIPPED = (
    "mcp_testkit.adapters:ReferenceBridgeAdapter",
    "mcp_testkit.adapters:PerCallReferenceAdapter",
    "mcp_testkit.adapters:SdkClientAdapter",
    "mcp_testkit.adapters:SdkClientAdapter.legacy",
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter",
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter",
    "mcp_testkit.adapters.openai_agents:ServerAdapter",
    "mcp_testkit.adapters.openai_agents:InvokeAdapter",
    "mcp_testkit.adapters.openai_agents:RetryingServerAdapter",
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter",
    "mcp_testkit.adapters.langchain_mcp:McpAdapterAdapter",
)
"""Every adapter the package ships for a bridge in this process, as `module:factory` (the driver's adapter declares
what its driver's hello says, so it has no row)."""

COLUMNS = (
    "timeout_s",
    "connect_timeout_s",
    "progress_timeout_s",
    "retry",
    "page_limit",
    "sessions",
    "concurrency",
    "max_result_bytes",
    "capabilities",
    "cannot",
)
"""The declarations shown, in the order of the table: what the contract reads of an adapter."""


def factory(spec: str) -> Any:
    """The factory `spec` names (`module:Class` or `module:Class.attribute`)."""
    module, _, path = spec.partition(":")
    found: Any = importlib.import_module(module)
    for part in path.split("."):
        found = getattr(found, part)
    return found


def _cell(adapter: Any, column: str) -> str:
    value = getattr(adapter, column, None)
    if column in ("capabilities", "cannot"):
        return ", ".join(f'`"{name}"`' for name in sorted(value or ())) or "none"
    if value is None and column == "concurrency":
        return "none (P13's default: 2)"
    if value is None:
        return "none"
    if column.endswith("_s"):
        return f"{value:g} s"
    if column == "max_result_bytes":
        return f"{value} ({value / 2**20:g} MiB)" if value % 2**10 == 0 else str(value)
    return str(value)


def render_table(specs: Sequence[str] = SHIPPED) -> str:
    """The markdown table of the adapters `specs` name, each made at its defaults, one row each."""
    lines = ["| adapter | " + " | ".join(f"`{column}`" for column in COLUMNS) + " |"]
    lines.append("| --- " * (len(COLUMNS) + 1) + "|")
    for spec in specs:
        adapter = factory(spec)()
        name = spec.partition(":")[2]
        lines.append(f"| `{name}` ({adapter.name}) | " + " | ".join(_cell(adapter, c) for c in COLUMNS) + " |")
    return "\n".join(lines)


def _bounds(text: str) -> tuple[int, int]:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {START} ... {END} section for the table of declarations")
    return start + len(START), end


def table_in(text: str) -> str:
    """The table between the markers of a page's text."""
    start, end = _bounds(text)
    return text[start:end].strip("\n")


def rewrite(text: str) -> str:
    """The page's text with the table between its markers rendered afresh."""
    start, end = _bounds(text)
    return f"{text[:start]}\n{render_table()}\n{text[end:]}"


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite the table of docs/adapters.md (or of the page named); with `--check`, exit 1 when it is stale."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [arg for arg in args if arg != "--check"]
    page = Path(paths[0]) if paths else DOCS_PAGE
    text = page.read_text(encoding="utf-8")
    fresh = rewrite(text)
    if fresh == text:
        print(f"{page}: the table of declarations is current")
        return 0
    if check:
        print(f"{page}: the table of declarations is stale; run python -m mcp_testkit.adapters._docs_table")
        return 1
    page.write_text(fresh, encoding="utf-8")
    print(f"{page}: the table of declarations rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
