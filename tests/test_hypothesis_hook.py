"""The Hypothesis entry point registers the MCP types with `st.from_type`, whatever was imported first."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
from hypothesis import strategies as st
import mcp_types
tool = st.from_type(mcp_types.Tool).example()
result = st.from_type(mcp_types.CallToolResult).example()
assert isinstance(tool, mcp_types.Tool) and isinstance(result, mcp_types.CallToolResult)
print("registered")
"""


@pytest.mark.parametrize(
    "first",
    [
        "import mcp_types\nfrom mcp_testkit import strategies",
        "from mcp_testkit import strategies\nimport mcp_types",
        "import mcp_testkit.server\nfrom mcp_testkit import strategies",
        "import hypothesis\nimport mcp_types",
        "import mcp_types\nimport hypothesis",
    ],
    ids=["types-then-strategies", "strategies-then-types", "server-then-strategies", "hypothesis-first", "types-first"],
)
def test_types_are_registered_whatever_is_imported_first(first: str) -> None:
    """In a fresh interpreter, any order of importing mcp_types, hypothesis and our strategies registers the types."""
    ran = subprocess.run([sys.executable, "-c", first + CHECK], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "registered"
