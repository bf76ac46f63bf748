"""What the tests of the docs' examples share: finding a marked example on a page."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).parents[2] / "docs"


def example(page: Path, name: str) -> str:
    """The code block that follows `<!-- example: NAME -->` on `page`."""
    found = re.search(rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)```", page.read_text(), re.S)
    assert found is not None, f"no example {name!r} in {page}"
    return found.group(1)
