"""README.md's Quickstart (its code example runs in tests/examples/test_docs.py, as every page's does)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).parents[2] / "README.md"


def test_readme_quickstart_has_two_commands() -> None:
    """The Quickstart keeps exactly two commands: install-and-check, install-and-test."""
    block = re.search(r"## Quickstart.*?```bash\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    commands = [line for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["pip install -e . && mcp-testkit check", "pip install -e '.[dev]' && pytest"]
