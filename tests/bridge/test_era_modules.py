"""Each era of the bridge lives in its own module: no other module of the bridge names an era or an era's session."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_testkit.bridge

BRIDGE = Path(mcp_testkit.bridge.__file__).parent
ERA_NAMES = {"HANDSHAKE", "STATELESS", "McpSession", "StatelessSession"}
ERA_HOMES = {
    "_handshake.py": "the handshake era over HTTP",
    "_stateless.py": "the stateless era",
    "_stdio.py": "a command server, spoken in the handshake era",
    "_era_choice.py": "the one place the era is chosen and its session opened",
    "_get_stream.py": "the handshake era's GET stream, where a caching bridge hears list_changed",
}


def test_only_the_era_modules_name_an_era() -> None:
    """Outside the era modules and the era choice, the bridge asks the session (its hooks), never its era."""
    found = []
    for path in sorted(BRIDGE.glob("*.py")):
        if path.name in ERA_HOMES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            named = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
            if named in ERA_NAMES:
                found.append(f"{path.name}:{node.lineno} names {named}")
            if isinstance(node, ast.alias) and node.name.rpartition(".")[2] in ERA_NAMES:
                found.append(f"{path.name}:{node.lineno} imports {node.name}")
    assert not found, "era-specific code outside the era modules (" + ", ".join(ERA_HOMES) + "): " + "; ".join(found)
