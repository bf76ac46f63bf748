"""The table of the shipped adapters' declarations in docs/adapters.md is the one rendered from the adapters."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import mcp_testkit.adapters
from mcp_testkit.adapters._docs_table import COLUMNS, END, SHIPPED, START, factory, main, render_table, table_in

PAGE = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"
NO_ROW = {
    "HostedBridgeAdapter": "a base: each subclass is a bridge",
    "DriverAdapter": "it declares what its driver's hello says",
}


def test_the_docs_table_is_the_one_rendered_from_the_adapters() -> None:
    """docs/adapters.md shows, between its markers, exactly the declarations the shipped adapters make."""
    assert table_in(PAGE.read_text(encoding="utf-8")) == render_table(), (
        "the table of declarations in docs/adapters.md differs from the adapters' own: run "
        "`python -m mcp_testkit.adapters._docs_table` to rewrite it"
    )


def test_each_row_says_what_its_adapter_declares() -> None:
    """A row's cells are its adapter's attributes, read from an adapter made at its defaults (a changed declaration
    changes the row)."""
    rows = render_table().splitlines()[2:]
    assert len(rows) == len(SHIPPED)
    for spec, row in zip(SHIPPED, rows, strict=True):
        adapter = factory(spec)()
        cells = dict(zip(COLUMNS, row.strip("| ").split(" | ")[1:], strict=True))
        assert cells["retry"] == str(adapter.retry), spec
        assert cells["concurrency"] == str(getattr(adapter, "concurrency", None) or "none"), spec
        timeout = getattr(adapter, "connect_timeout_s", None)
        assert cells["connect_timeout_s"] == (f"{timeout:g} s" if timeout is not None else "none"), spec
        assert all(f'"{name}"' in cells["capabilities"] for name in getattr(adapter, "capabilities", ())), spec


def test_every_shipped_adapter_has_a_row() -> None:
    """Every adapter class of mcp_testkit.adapters and its submodules is in the table, or listed here with why not."""
    found: set[str] = set()
    for module_info in pkgutil.iter_modules(mcp_testkit.adapters.__path__, "mcp_testkit.adapters."):
        module = importlib.import_module(module_info.name)
        for name, value in vars(module).items():
            adapter = hasattr(value, "connect") and not getattr(value, "_is_protocol", False)
            if inspect.isclass(value) and value.__module__ == module.__name__ and adapter:
                if not name.startswith("_") and name not in NO_ROW:
                    found.add(name)
    shown = {spec.partition(":")[2].split(".")[0] for spec in SHIPPED}
    assert found == shown


def test_a_stale_table_is_rewritten_and_a_page_without_markers_refused(tmp_path: Path) -> None:
    """`python -m mcp_testkit.adapters._docs_table` rewrites a stale table between the markers and keeps the page."""
    page = tmp_path / "adapters.md"
    page.write_text(f"# Adapters\n\n{START}\n| old |\n{END}\n\nafter\n", encoding="utf-8")
    assert main([str(page), "--check"]) == 1
    assert main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == f"# Adapters\n\n{START}\n{render_table()}\n{END}\n\nafter\n"
    assert main([str(page), "--check"]) == 0
    page.write_text("# no table\n", encoding="utf-8")
    with pytest.raises(ValueError, match="declarations:start"):
        main([str(page)])
