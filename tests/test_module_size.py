"""Small modules, classes and functions (docs/architecture.md): no module of the package over 600 lines, no class
over 250, no function over 80, so that a reader finds one concern per file and one step per function; an exception
is listed here with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_testkit

ROOT = Path(mcp_testkit.__file__).parent
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 250
MAX_FUNCTION_LINES = 80
EXCEPTIONS: dict[str, str] = {
    "server/__init__.py:TestMcpServer": "the one facade a test scripts, serves and reads back: some sixty public "
    "verbs and properties, each one line calling a part (tools, required headers, offerings, faults: "
    "`server/_*_scripting.py`) or a few lines reading the current state; its keywords live in `_settings.py` and "
    "its life on a socket in `_wire/lifecycle.py`, and what is left is one reader's index of the whole API",
}
"""`path`, `path:Class` or `path:function` (a method as `path:Class.method`) relative to the package, with the reason
it may be longer."""


def _sources() -> list[Path]:
    return sorted(ROOT.rglob("*.py"))


def test_no_module_over_the_limit() -> None:
    """Every module of the package is at most 600 lines long, unless listed with its reason."""
    long = [
        f"{path.relative_to(ROOT)}: {lines} lines"
        for path in _sources()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
        and str(path.relative_to(ROOT)) not in EXCEPTIONS
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them along a seam):\n" + "\n".join(long)


def test_no_class_over_the_limit() -> None:
    """Every class of the package is at most 250 lines long, unless listed with its reason."""
    long = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                name = f"{path.relative_to(ROOT)}:{node.name}"
                if lines > MAX_CLASS_LINES and name not in EXCEPTIONS:
                    long.append(f"{name}: {lines} lines")
    assert not long, f"classes over {MAX_CLASS_LINES} lines (give a part its own class):\n" + "\n".join(long)


def _functions(tree: ast.AST) -> list[tuple[str, int]]:
    """Each function's name (`Class.method` for a method) and its length in lines."""
    found = []

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and child.end_lineno is not None:
                found.append((owner + child.name, child.end_lineno - child.lineno + 1))
                visit(child, owner + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, owner + child.name + ".")
            else:
                visit(child, owner)

    visit(tree, "")
    return found


def test_no_function_over_the_limit() -> None:
    """Every function of the package is at most 80 lines long, unless listed with its reason."""
    long = [
        f"{path.relative_to(ROOT)}:{name}: {lines} lines"
        for path in _sources()
        for name, lines in _functions(ast.parse(path.read_text(encoding="utf-8")))
        if lines > MAX_FUNCTION_LINES and f"{path.relative_to(ROOT)}:{name}" not in EXCEPTIONS
    ]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them at a step):\n" + "\n".join(long)


def test_exceptions_are_still_needed() -> None:
    """Each listed exception still names a module or class over its limit, so the list cannot go stale."""
    stale = []
    for name in EXCEPTIONS:
        path, _, cls = name.partition(":")
        source = (ROOT / path).read_text(encoding="utf-8")
        if not cls:
            if len(source.splitlines()) <= MAX_MODULE_LINES:
                stale.append(name)
            continue
        tree = ast.parse(source)
        spans = [
            n.end_lineno - n.lineno + 1
            for n in ast.walk(tree)
            if isinstance(n, ast.ClassDef) and n.name == cls and n.end_lineno is not None
        ]
        functions = dict(_functions(tree))
        if cls in functions and spans == []:
            if functions[cls] <= MAX_FUNCTION_LINES:
                stale.append(name)
        elif not spans or max(spans) <= MAX_CLASS_LINES:
            stale.append(name)
    assert not stale, "exceptions no longer needed: " + ", ".join(stale)
