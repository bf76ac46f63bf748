"""The public API: everything in `mcp_testkit.__all__` imports, lists are sorted, and importing stays cheap."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

import mcp_testkit

MODULES = sorted(
    name
    for _, name, _ in pkgutil.walk_packages(mcp_testkit.__path__, "mcp_testkit.")
    if not name.rpartition(".")[2].startswith("_") and name != "mcp_testkit.__main__"
)


def _isort_order(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions and modules."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def test_every_public_name_imports() -> None:
    """Each name in mcp_testkit.__all__ resolves to an object, and dir() lists it."""
    for name in mcp_testkit.__all__:
        assert getattr(mcp_testkit, name) is not None, name
        assert name in dir(mcp_testkit)


def test_unknown_name_is_an_attribute_error() -> None:
    """Asking mcp_testkit for a name it does not have fails like any module does, naming the name."""
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = mcp_testkit.no_such_thing  # type: ignore[attr-defined]


@pytest.mark.parametrize("module_name", ["mcp_testkit", *MODULES])
def test_all_is_sorted_and_complete(module_name: str) -> None:
    """Every public module has a sorted __all__ whose names all exist."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module_name} has no __all__"
    assert list(names) == sorted(names, key=_isort_order), f"{module_name}.__all__ is not sorted"
    missing = [name for name in names if not hasattr(module, name)]
    assert not missing, f"{module_name}.__all__ names missing objects: {missing}"


def test_importing_the_package_imports_nothing_heavy() -> None:
    """`import mcp_testkit` (done by the pytest plugin and the Hypothesis hook) loads no server stack."""
    heavy = ["uvicorn", "starlette", "mcp", "mcp_types", "httpx2", "pydantic", "hypothesis"]
    code = f"import sys, json, mcp_testkit; print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert json.loads(out.stdout) == []
