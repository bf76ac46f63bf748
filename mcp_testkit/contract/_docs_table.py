"""The table of properties in docs/contract.md, rendered from the property modules' own words, so that the page
and the contract cannot drift apart. `python -m mcp_testkit.contract._docs_table` rewrites the page's table;
`--check` only says whether it is current."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from mcp_testkit.contract._properties import PROPERTIES, Property

__all__ = ["END", "START", "main", "render_table", "rewrite", "table_in"]

START = "<!-- properties:start -->"
END = "<!-- properties:end -->"
DOCS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "contract.md"
"""The page whose table this renders, in the source tree the package was imported from."""


def render_table(properties: Mapping[str, Property] = PROPERTIES) -> str:
    """The markdown table of `properties`, one row each, in registry order."""
    lines = ["| id | property | covers | what breaks it |", "| --- | --- | --- | --- |"]
    lines += [f"| {p.property_id} | {p.guarantee} | {p.covers} | {p.breaks} |" for p in properties.values()]
    return "\n".join(lines)


def _bounds(text: str) -> tuple[int, int]:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {START} ... {END} section for the table of properties")
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
    """Rewrite the table of docs/contract.md (or of the page named); with `--check`, exit 1 when it is stale."""
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [arg for arg in args if arg != "--check"]
    page = Path(paths[0]) if paths else DOCS_PAGE
    text = page.read_text(encoding="utf-8")
    fresh = rewrite(text)
    if fresh == text:
        print(f"{page}: the table of properties is current")
        return 0
    if check:
        print(f"{page}: the table of properties is stale; run python -m mcp_testkit.contract._docs_table")
        return 1
    page.write_text(fresh, encoding="utf-8")
    print(f"{page}: the table of properties rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
