"""Old spellings of renamed public arguments, kept working for one release with a `DeprecationWarning`.

The toolkit speaks one vocabulary (every duration in seconds with an `_s` suffix, `transport=` for an httpx2
transport only); a call that still uses an old name gets the value it meant and a warning naming the new one.
`@renamed_keywords(old="new", ...)` on a function is the whole of a rename: its signature shows only the new
names, and giving an old name together with its new one is a TypeError.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import warnings
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, TypeVar

__all__ = [
    "OLD_SPELLINGS",
    "fault_first",
    "milliseconds",
    "moved_names",
    "renamed",
    "renamed_attribute",
    "renamed_keywords",
]

_UNSET: Any = object()
F = TypeVar("F", bound=Callable[..., Any])

OLD_SPELLINGS: dict[str, dict[str, str]] = {}
"""Every rename made with `renamed_keywords`, by function (`TestMcpServer()`): old keyword -> new keyword."""


def milliseconds(value: Any) -> Any:
    """An old argument in milliseconds as seconds (None stays None; anything else is left for the check)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / 1000
    return value


def renamed(
    given: MutableMapping[str, Any],
    old: str,
    new: str,
    value: Any,
    *,
    where: str,
    convert: Callable[[Any], Any] | None = None,
    default: Any = None,
    stacklevel: int = 3,
) -> Any:
    """The value of `new`: `value` as given, or the old argument popped from `given` (converted), with a warning.

    `value` is the new argument as the caller received it (`default` when it was not given); giving both
    spellings is an error, since they may disagree. The warning points `stacklevel` frames up (3: the caller
    of the function that calls this).
    """
    if old not in given:
        return value
    old_value = given.pop(old)
    if value is not default:
        raise TypeError(f"{where}: give {new}= only ({old}= is its old spelling)")
    how = " (converted to seconds)" if convert is not None else ""
    warnings.warn(
        f"{where}: {old}= is deprecated, use {new}={how}; the old spelling goes away in the next release",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
    return convert(old_value) if convert is not None else old_value


def renamed_keywords(**renames: str | tuple[str, Callable[[Any], Any]]) -> Callable[[F], F]:
    """Accept each old keyword (`old="new"`, or `old=("new", convert)`) as its new one, with a warning.

    The decorated function keeps its own signature (the new names only, as `inspect.signature` and the
    docs show it); the old keywords are translated before it is called.
    """
    table = {old: (spec, None) if isinstance(spec, str) else spec for old, spec in renames.items()}

    def decorate(function: F) -> F:
        name = function.__qualname__.removesuffix(".__init__")
        where = f"{name}()"
        parameters = inspect.signature(function).parameters
        for old, (new, _) in table.items():
            if new not in parameters:
                raise TypeError(f"renamed_keywords: {function.__qualname__} has no keyword {new}")
            if old in parameters:
                raise TypeError(f"renamed_keywords: {function.__qualname__} still has the keyword {old}")
        OLD_SPELLINGS[where] = {old: new for old, (new, _) in table.items()}

        @functools.wraps(function)
        def with_old_spellings(*args: Any, **kwargs: Any) -> Any:
            for old in [key for key in kwargs if key in table]:
                new, convert = table[old]
                given = kwargs.get(new, _UNSET)
                kwargs[new] = renamed(kwargs, old, new, given, where=where, convert=convert, default=_UNSET)
            return function(*args, **kwargs)

        return with_old_spellings  # type: ignore[return-value]

    return decorate


def fault_first(method: F) -> F:
    """Accept the old order `method(tool, fault)` of a method now spelled `method(fault, *, tool=...)`, with a warning.

    The old order is told apart by its first argument, a tool's name (a str) where a fault now goes.
    """
    where = f"{method.__qualname__}()"
    name = method.__name__

    @functools.wraps(method)
    def with_old_order(self: Any, *args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], str):
            if "tool" in kwargs:
                raise TypeError(f"{where}: give the tool once, as tool= ({name}(tool, fault) is the old order)")
            tool, *rest = args
            if not rest and "fault" not in kwargs:
                raise TypeError(f"{where}: a fault is needed first, as {name}(fault, tool={tool!r})")
            warnings.warn(
                f"{where}: {name}(tool, fault) is deprecated, use {name}(fault, tool=...) as inject takes it; "
                "the old order goes away in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            args, kwargs = tuple(rest), {**kwargs, "tool": tool}
        return method(self, *args, **kwargs)

    return with_old_order  # type: ignore[return-value]


def renamed_attribute(old: str, new: str) -> Any:
    """A read-only property `old` that warns and gives the attribute `new` (one line in the class body)."""

    def read(self: Any) -> Any:
        warnings.warn(
            f"{type(self).__name__}.{old} is deprecated, use .{new}; the old spelling goes away in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(read, doc=f"Deprecated: `{new}`.")


def moved_names(module: str, moved: Mapping[str, tuple[str, str | None]]) -> Callable[[str], Any]:
    """A module's `__getattr__` that still gives each name that left it, from its new home, with a warning.

    `moved` maps an old name to the dotted path of what it is now and, when it has no public home to point to, the
    advice the warning gives instead of "use <the new path>".
    """

    def __getattr__(name: str) -> Any:
        if name not in moved:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        target, advice = moved[name]
        home, _, attribute = target.rpartition(".")
        warnings.warn(
            f"{module}.{name} is deprecated: {advice or f'use {target}'}; the old name goes away in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), attribute)

    return __getattr__
