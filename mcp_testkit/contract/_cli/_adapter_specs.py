"""Which adapters `mcp-testkit check` runs, and how it loads them: `module:factory` specs, the shipped ones (run by
default, or with `--all-installed` when their bridge imports here), and the label of each bridge's column."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = [
    "DEFAULTS",
    "REFERENCE",
    "SDK_AUTO",
    "SDK_LEGACY",
    "SHIPPED",
    "BadSpec",
    "chosen_specs",
    "installed",
    "label",
    "load_factory",
]

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK_AUTO = "mcp_testkit.adapters:SdkClientAdapter"
SDK_LEGACY = "mcp_testkit.adapters:SdkClientAdapter.legacy"
DEFAULTS = (REFERENCE, SDK_AUTO, SDK_LEGACY)
"""What a run that names no bridge checks: the reference bridge and the SDK client in auto and legacy mode."""
SHIPPED = {
    # adapter spec: the module that must import for its bridge to count as installed
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter": "fastmcp",
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter": "pydantic_ai.mcp",
    "mcp_testkit.adapters.openai_agents:ServerAdapter": "agents.mcp",
    "mcp_testkit.adapters.openai_agents:InvokeAdapter": "agents.mcp",
    "mcp_testkit.adapters.openai_agents:RetryingServerAdapter": "agents.mcp",
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter": "llama_index.tools.mcp",
}
"""The adapters for third-party bridges that `--all-installed` runs when their bridge imports."""
_ADAPTER_MEMBERS = ("name", "page_limit", "retry", "connect", "list_tools", "call", "set_headers", "close")


class BadSpec(Exception):
    """A module:factory that cannot be loaded; the message says why."""


def chosen_specs(args: argparse.Namespace, named: list[str]) -> list[str]:
    """The specs to load: those named, the shipped ones installed here with `--all-installed`, or the defaults
    when nothing is named (`named` counts the drivers too, which are no spec)."""
    specs = list(args.adapters)
    if args.all_installed:
        specs += [spec for spec in (*DEFAULTS, *SHIPPED) if spec not in specs and installed(spec)]
    elif not named:
        specs = list(DEFAULTS)
    return specs


def load_factory(spec: str) -> Any:
    """The object `module:attribute` (or `module:attribute.attribute`, as entry points name objects) names, the
    module given by name or as a file (`./my_adapter.py:MyAdapter`); `BadSpec` with a clear message when it cannot
    be loaded."""
    module_name, _, attribute = spec.rpartition(":")
    if not module_name or not attribute:
        raise BadSpec(f"{spec!r} is not module:factory (e.g. mypkg.testing:MyAdapter, or ./my_adapter.py:MyAdapter)")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        # As `python -m` does: a module of the current folder can be named, as from the console script too.
        sys.path.insert(0, here)
    module = _module_of_file(module_name) if _is_a_file(module_name) else _module_named(module_name)
    factory: Any = module
    for part in attribute.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise BadSpec(f"module {module_name!r} has no {attribute!r}") from None
    if not callable(factory):
        raise BadSpec(f"{spec!r} is not callable; it must make an adapter")
    _makes_an_adapter(spec, factory)
    return factory


def _is_a_file(name: str) -> bool:
    return name.endswith(".py") or os.sep in name or "/" in name


def _module_named(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise BadSpec(f"cannot import {name!r}: {exc}") from None


def _module_of_file(name: str) -> ModuleType:
    """The module of a file path, run as a module named by its stem, its folder first on `sys.path` (so it imports
    its neighbours, as `python my_adapter.py` would)."""
    path = Path(name).expanduser().resolve()
    if not path.is_file():
        raise BadSpec(f"no file {name!r} (from {os.getcwd()}): give the adapter's file as path.py:Factory")
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    found = importlib.util.spec_from_file_location(path.stem, path)
    if found is None or found.loader is None:
        raise BadSpec(f"{name!r} is not a Python module: give the adapter's .py file")
    module = importlib.util.module_from_spec(found)
    sys.modules[path.stem] = module
    try:
        found.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[path.stem]
        raise BadSpec(f"cannot import {name!r}: {type(exc).__name__}: {exc}") from None
    return module


def _makes_an_adapter(spec: str, factory: Any) -> None:
    """`BadSpec`, one line, when `factory(transport=None)` raises or makes something that is not an adapter."""
    try:
        made = factory(transport=None)
    except Exception as exc:
        raise BadSpec(
            f"{spec} did not make an adapter: {spec}(transport=None) raised {type(exc).__name__}: {exc} "
            "(an adapter factory takes transport= and returns a BridgeAdapter; see docs/adapters.md)"
        ) from None
    missing = [member for member in _ADAPTER_MEMBERS if not hasattr(made, member)]
    if missing:
        raise BadSpec(
            f"{spec} made a {type(made).__name__}, not an adapter: it has no {', '.join(missing)} "
            "(a BridgeAdapter; see docs/adapters.md)"
        )


def label(factory: Any, spec: str) -> str:
    """The bridge's column: the factory's `name`, else the name of an adapter it makes (a factory function or
    a classmethod has none of its own), else the spec's attribute."""
    name = getattr(factory, "name", None)
    if name is None:
        try:
            name = getattr(factory(transport=None), "name", None)
        except Exception:  # the run reports what the factory raises; here only a label is at stake
            name = None
    return str(name or spec.rpartition(":")[2])


def installed(spec: str) -> bool:
    """Whether the bridge of a shipped adapter imports here (the reference bridge and SDK client always do)."""
    module = SHIPPED.get(spec)
    if module is None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False
