"""Names a package offers but imports on first use: the module-level `__getattr__` and `__dir__` of a package whose
`_HOMES` table says in which module each name lives, so that importing the package costs nothing until a name is
used (the pytest plugin and the Hypothesis hook import `mcp_testkit` in every run)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: a name of `homes` is imported from the module named there (the
    module itself when it is named after the name) and kept in the package's globals, so it is looked up once."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(home)
        value = module if home.endswith(f".{name}") else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted([*vars(sys.modules[package]), *public])

    return __getattr__, __dir__
