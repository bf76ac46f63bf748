"""The table of properties in docs/contract.md is the one rendered from the property modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_testkit.contract import PROPERTIES
from mcp_testkit.contract._docs_table import END, START, main, render_table, rewrite, table_in

PAGE = Path(__file__).resolve().parents[2] / "docs" / "contract.md"


def test_the_docs_table_is_the_one_rendered_from_the_properties() -> None:
    """docs/contract.md shows, between its markers, exactly the table the property modules render."""
    shown = table_in(PAGE.read_text(encoding="utf-8"))
    assert shown == render_table(), (
        "the table of properties in docs/contract.md differs from the property modules' words: edit the words in "
        "mcp_testkit/contract/_properties/, then run `python -m mcp_testkit.contract._docs_table` to rewrite it"
    )


def test_every_property_has_a_row_with_its_own_words() -> None:
    """Each registered property has a row of its own, with what it guarantees, covers and what breaks it."""
    rows = render_table().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| {pid}" for pid in PROPERTIES]
    for prop in PROPERTIES.values():
        assert all((prop.guarantee, prop.covers, prop.breaks)), prop.property_id
        assert "|" not in prop.guarantee + prop.covers + prop.breaks, prop.property_id


def test_the_rewrite_replaces_a_stale_table_and_nothing_else(tmp_path: Path) -> None:
    """`python -m mcp_testkit.contract._docs_table` rewrites a stale table between the markers and keeps the page."""
    page = tmp_path / "contract.md"
    page.write_text(f"# Title\n\nbefore\n\n{START}\n| old | table |\n{END}\n\nafter\n", encoding="utf-8")
    assert main([str(page), "--check"]) == 1
    assert main([str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert text == f"# Title\n\nbefore\n\n{START}\n{render_table()}\n{END}\n\nafter\n"
    assert main([str(page), "--check"]) == 0
    assert rewrite(text) == text


def test_a_page_without_markers_is_refused() -> None:
    """A page without the two markers is an error naming them, not a silent no-op."""
    with pytest.raises(ValueError, match="properties:start"):
        rewrite("# no table here\n")
