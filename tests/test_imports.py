"""The package's import rules (docs/architecture.md): no cycles, no reach into another package's private names,
and shared modules that stay neutral. Read from the source with `ast`, so a rule holds for every module
whether or not a test imports it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import mcp_testkit

ROOT = Path(mcp_testkit.__file__).parent
PACKAGES = sorted(path.name for path in ROOT.iterdir() if (path / "__init__.py").exists())
"""The subpackages (server, bridge, cassettes, contract, adapters, ...): each one keeps its `_private` names."""
SHARED = (
    "_answer", "_asgi", "_binding", "_eras", "_json", "_origin", "_param_headers", "_renamed", "_runner", "_sse",
    "_tls", "_validation", "_wire",
)
"""The neutral modules: what two packages share lives here, and a neutral module imports no package."""
COMPOSITION_ROOT = {
    "mcp_testkit.cli": "wires each package's commands into one argparse parser, importing them lazily",
    "mcp_testkit.pytest_plugin": "wires each package's fixtures into pytest, importing them lazily",
}
"""Modules allowed to reach into a package's private modules, each with its reason."""


@dataclass(frozen=True)
class Import:
    """One import statement's target module (and imported name) in `module`, and where it sits."""

    module: str
    target: str
    name: str | None
    line: int
    module_level: bool


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run when the module is imported, `if TYPE_CHECKING:` blocks included (mypy runs them)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
            for handler in node.handlers:
                yield from _top_level(handler.body)


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    top = {id(node) for node in _top_level(tree.body)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, alias.name, None, node.lineno, id(node) in top)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([node.module] if node.module else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:
                    yield Import(module, full, None, node.lineno, id(node) in top)
                else:
                    yield Import(module, base, alias.name, node.lineno, id(node) in top)


IMPORTS = [imp for module, path in MODULES.items() for imp in _imports(module, path) if imp.target in MODULES]


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else None


def _cycle() -> list[str] | None:
    """One cycle among module-level imports, as the list of modules around it, or None."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for imp in IMPORTS:
        if imp.module_level and imp.target != imp.module:
            graph[imp.module].add(imp.target)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_no_import_cycle() -> None:
    """No module imports, at module level (TYPE_CHECKING blocks included), a module that imports it back."""
    cycle = _cycle()
    assert cycle is None, "import cycle: " + " -> ".join(cycle or []) + " (move what both need to a neutral module)"


def test_no_reach_into_another_package() -> None:
    """No module imports a `_private` module or name of a package it is not part of (the composition root aside)."""
    reached = []
    for imp in IMPORTS:
        package = _package_of(imp.target)
        if package is None or _package_of(imp.module) == package or imp.module in COMPOSITION_ROOT:
            continue
        private_parts = [part for part in imp.target.split(".")[2:] if part.startswith("_")]
        if private_parts or (imp.name or "").startswith("_"):
            reached.append(f"{imp.module}:{imp.line} imports {imp.target}" + (f".{imp.name}" if imp.name else ""))
    assert not reached, "private names of another package (share them through a neutral module):\n" + "\n".join(
        reached
    )


def test_shared_modules_stay_neutral() -> None:
    """The shared modules import no package of the toolkit, only one another, so any package may use them."""
    leaning = [
        f"{imp.module}:{imp.line} imports {imp.target}"
        for imp in IMPORTS
        if imp.module.rpartition(".")[2] in SHARED and imp.module.count(".") == 1 and _package_of(imp.target)
    ]
    assert not leaning, "a shared module imports a package:\n" + "\n".join(leaning)
    assert all(f"mcp_testkit.{name}" in MODULES for name in SHARED), "a shared module named here no longer exists"


def test_rules_see_the_imports() -> None:
    """The walk finds the imports it judges: a known one of each kind, so an empty walk cannot pass the rules."""
    seen = {(imp.module, imp.target, imp.module_level) for imp in IMPORTS}
    assert ("mcp_testkit.server", "mcp_testkit.journal", True) in {(m, t, lvl) for m, t, lvl in seen}
    assert any(imp.module == "mcp_testkit.server" and not imp.module_level for imp in IMPORTS)
