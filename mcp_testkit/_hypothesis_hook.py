"""Registers `mcp_types.Tool` and `mcp_types.CallToolResult` with Hypothesis' `st.from_type`.

Hypothesis runs `setup_hook` through the `hypothesis` entry point each time it is imported, so this
module stays tiny: the strategies are registered once `mcp_types` is imported, and not before.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

__all__ = ["setup_hook"]


def _register() -> None:
    being_imported = sys.modules.get("mcp_testkit.strategies")
    if being_imported is not None and not hasattr(being_imported, "_register_types"):
        return  # it imported hypothesis, which ran this hook: it registers the types itself once loaded
    from mcp_testkit.strategies import _register_types

    _register_types()


class _RegisterOnImport:
    """A meta path finder that registers the strategies once `mcp_types` is imported, and not before."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "mcp_types":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_and_register(module: Any) -> None:
            exec_module(module)
            _register()

        loader.exec_module = exec_and_register  # type: ignore[method-assign]
        return spec


def setup_hook() -> None:
    """Run by Hypothesis through the `hypothesis` entry point; costs nothing until mcp_types is imported."""
    if "mcp_types" in sys.modules:
        _register()
    elif not any(isinstance(finder, _RegisterOnImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnImport())
