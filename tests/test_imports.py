"""The package's import rules (docs/architecture.md), with every import counted: at module level, under
`TYPE_CHECKING`, inside functions, and the targets of the lazy `__getattr__` tables.

The layer order is written once, as import-linter contracts in pyproject.toml; this test runs them on
import-linter's own graph (grimp, which reads every import statement of a module, wherever it stands), to which it
adds the lazy tables' targets, which no import statement names. The rules import-linter has no contract for (no
circle between modules, no package reaching into another's `_private` modules, names or attributes) are checked
here on the same graph.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import api as importlinter
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract

import mcp_testkit

ROOT = Path(mcp_testkit.__file__).parent
PYPROJECT = ROOT.parent / "pyproject.toml"
CONTRACT_TYPES = {"layers": LayersContract, "forbidden": ForbiddenContract, "independence": IndependenceContract}
SHARED = {"_wire"}
"""The neutral package: what two packages share lives here, so any package may import its modules."""
COMPOSITION_ROOTS = {
    "mcp_testkit": "re-exports the public API, importing each name's home lazily",
    "mcp_testkit.cli": "wires each package's command into one argparse parser",
    "mcp_testkit.pytest_plugin": "wires each package's fixtures into pytest",
    "mcp_testkit._plugin": "the machinery of the pytest plugin, the other composition root",
}
"""Modules allowed to reach into a package's private modules and names, each with its reason."""
ATTRIBUTE_EXCEPTIONS: dict[str, str] = {}
"""`module:name` of an underscore attribute a module may read on another package's object, with the reason."""


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


@dataclass(frozen=True)
class LazyImport:
    """A module named as a string in a lazy table (`_HOMES`) or an `importlib.import_module` call."""

    module: str
    target: str
    line: int


def _lazy_imports(module: str, path: Path) -> Iterator[LazyImport]:
    """The modules a module imports by name at run time: string values naming a module of the package, in a module
    that imports lazily (has a `__getattr__`, calls `importlib.import_module` or `_lazy.lazy_names`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = any(
        (isinstance(node, ast.FunctionDef) and node.name == "__getattr__")
        or (isinstance(node, ast.Attribute) and node.attr == "import_module")
        or (isinstance(node, ast.Name) and node.id == "lazy_names")
        for node in ast.walk(tree)
    )
    if not lazy:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES:
            if node.value != module:
                yield LazyImport(module, node.value, node.lineno)


LAZY = [imp for module, path in MODULES.items() for imp in _lazy_imports(module, path)]


def _graph() -> grimp.ImportGraph:
    graph = grimp.build_graph("mcp_testkit", include_external_packages=False, cache_dir=None)
    for imp in LAZY:
        graph.add_import(
            importer=imp.module, imported=imp.target, line_number=imp.line, line_contents=f"lazy: {imp.target!r}"
        )
    return graph


GRAPH = _graph()


CONFIGURATION = importlinter.read_configuration(str(PYPROJECT))
"""pyproject.toml's `[tool.importlinter]`, as import-linter itself reads it."""


def _broken(check: Any) -> list[str]:
    """The imports that break a contract, one line each: `importer -> imported (l.N)` along each chain."""
    def line(link: dict[str, Any]) -> str:
        return f"{link['importer']} -> {link['imported']} (l.{', '.join(map(str, link['line_numbers']))})"

    lines = []
    for dependency in check.metadata.get("invalid_dependencies", []):
        for route in dependency.get("routes", []):
            lines.extend(line(link) for link in route.get("chain", []))
    for dependency in check.metadata.get("invalid_chains", []):
        for chain in dependency.get("chains", []):
            lines.extend(line(link) for link in chain)
    return lines or [repr(check.metadata)]


@pytest.mark.parametrize("options", CONFIGURATION["contracts_options"], ids=lambda options: options["id"])
def test_import_linter_contract_holds(options: dict[str, Any]) -> None:
    """Each import-linter contract of pyproject.toml holds on the graph of every import, the lazy ones included."""
    contract_class = CONTRACT_TYPES[options["type"]]
    session = CONFIGURATION["session_options"]
    contract = contract_class(name=options["name"], session_options=session, contract_options=options)
    check = contract.check(copy.deepcopy(GRAPH), verbose=False)
    assert check.kept, f"contract {options['id']!r} ({options['name']}) is broken by:\n" + "\n".join(_broken(check))


def test_the_graph_sees_every_kind_of_import() -> None:
    """The graph the contracts are checked on holds an import under TYPE_CHECKING, one inside a function and a lazy
    table's target, so that no kind of import can escape the rules unseen."""
    def details(importer: str, imported: str) -> list[str]:
        return [d["line_contents"] for d in GRAPH.get_import_details(importer=importer, imported=imported)]

    type_checking = [
        (module, imported)
        for module, path in MODULES.items()
        for imported in _type_checking_targets(path)
        if details(module, imported)
    ]
    in_functions = [
        (module, imported)
        for module, path in MODULES.items()
        for imported in _function_targets(path)
        if details(module, imported)
    ]
    assert type_checking, "no import under TYPE_CHECKING is in the graph"
    assert in_functions, "no import inside a function is in the graph"
    assert LAZY, "no lazy table was found (the package re-exports its API lazily)"
    assert all(details(imp.module, imp.target) for imp in LAZY), "a lazy table's target is missing from the graph"
    assert any(imp.module == "mcp_testkit" for imp in LAZY), "the root package's lazy table was not read"


def _imported_names(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
            for alias in child.names:
                full = f"{child.module}.{alias.name}"
                yield full if full in MODULES else child.module
        elif isinstance(child, ast.Import):
            yield from (alias.name for alias in child.names)


def _type_checking_targets(path: Path) -> Iterator[str]:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (name for name in _imported_names(node) if name in MODULES)


def _function_targets(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from (name for name in _imported_names(node) if name in MODULES)


DECLARED_UPWARD = {
    tuple(part.strip() for part in line.split("->"))
    for options in CONFIGURATION["contracts_options"]
    for line in options.get("ignore_imports", [])
}
"""The upward edges the layers contract declares (pyproject.toml's `ignore_imports`, each with its reason there)."""


def _cycles() -> list[list[str]]:
    """Every circle of imports between modules (the strongly connected components of the graph, without the
    declared upward edges), each sorted."""
    modules = sorted(GRAPH.modules)
    edges = {
        module: sorted(
            imported
            for imported in GRAPH.find_modules_directly_imported_by(module) - {module}
            if (module, imported) not in DECLARED_UPWARD
        )
        for module in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in modules:
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges[nxt])))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_import_circle() -> None:
    """No module imports, in any way, a module that imports it back, directly or through others."""
    cycles = _cycles()
    assert not cycles, "import circles (move what both need below both):\n" + "\n".join(" <-> ".join(c) for c in cycles)


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (ROOT / parts[1] / "__init__.py").exists() else None


def _is_composition_root(module: str) -> bool:
    """A composition root, or a module of a package that is one (`_plugin`); the root package is one module."""
    packages = (root for root in COMPOSITION_ROOTS if root != "mcp_testkit")
    return module in COMPOSITION_ROOTS or any(module.startswith(root + ".") for root in packages)


def test_no_private_import_across_packages() -> None:
    """No module imports a `_private` module or name of a package it is not part of (the composition roots and the
    shared `_wire` aside), counting imports inside functions, under TYPE_CHECKING and through lazy tables."""
    reached = []
    for importer in sorted(GRAPH.modules):
        if _is_composition_root(importer):
            continue
        for imported in sorted(GRAPH.find_modules_directly_imported_by(importer)):
            package = _package_of(imported)
            if package is None or package in SHARED or _package_of(importer) == package:
                continue
            for detail in GRAPH.get_import_details(importer=importer, imported=imported):
                private_module = any(part.startswith("_") for part in imported.split(".")[2:])
                names = _names_in(detail["line_contents"])
                private_names = [n for n in names if n.startswith("_") and not n.startswith("__")]
                if private_module or private_names:
                    what = imported + (f" ({', '.join(private_names)})" if private_names else "")
                    reached.append(f"{importer}:{detail['line_number']} imports {what}")
    assert not reached, "private names of another package (give them a public name in that package):\n" + "\n".join(
        reached
    )


def _names_in(line: str) -> list[str]:
    """The names an import line imports (`from x import a, b as c` gives a, b)."""
    try:
        node = ast.parse(line.strip().rstrip("(").rstrip(",")).body[0]
    except (SyntaxError, IndexError):
        return []
    if isinstance(node, ast.ImportFrom):
        return [alias.name for alias in node.names]
    return []


def _own_underscore_names(path: Path) -> set[str]:
    """The underscore names a module defines: functions, classes, their methods and attributes (`self._x = ...`,
    annotated class fields, `__slots__` entries), and module-level assignments."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                    if target.id == "__slots__" and isinstance(node.value, (ast.Tuple, ast.List)):
                        names.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if name.startswith("_") and not name.startswith("__")}


def _package_key(module: str) -> str:
    return _package_of(module) or module


def test_no_underscore_attribute_across_packages() -> None:
    """No module reads or writes an underscore attribute that only another package defines (`server._state` from
    the scenario loader, `journal._finish` from a transport): a package offers what others need under a public name.

    Whose attribute it is, is judged by name: an underscore name that the module's own package never defines but
    another package does is that package's."""
    defined: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        defined.setdefault(_package_key(module), set()).update(_own_underscore_names(path))
    reached = []
    for module, path in sorted(MODULES.items()):
        if _is_composition_root(module):
            continue
        own = defined[_package_key(module)]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute) or not node.attr.startswith("_") or node.attr.startswith("__"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            owners = sorted(pkg for pkg, names in defined.items() if node.attr in names and pkg != _package_key(module))
            if node.attr not in own and owners and f"{module}:{node.attr}" not in ATTRIBUTE_EXCEPTIONS:
                reached.append(f"{module}:{node.lineno} uses {ast.unparse(node)} (defined in {', '.join(owners)})")
    assert not reached, "underscore attributes of another package (give them a public name there):\n" + "\n".join(
        reached
    )


def test_exceptions_name_what_exists() -> None:
    """Every listed exception names a module that exists, so that the lists cannot go stale."""
    assert all(root in MODULES for root in COMPOSITION_ROOTS)
    assert all(name.partition(":")[0] in MODULES for name in ATTRIBUTE_EXCEPTIONS)
    assert all((ROOT / name / "__init__.py").exists() for name in SHARED)
