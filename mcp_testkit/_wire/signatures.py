"""Methods whose keywords are another callable's, so that a set of options is written down once.

`TestMcpServer.tool` takes the keywords of `ScriptedTool.build`, `inject` (of the server and of the chaos proxy)
those of `faults.placed_rule`, and `TestMcpServer`'s verbs are the methods of its parts: type checkers, editors and
`help()` see the one definition's parameters (and, for a part's verb, its docstring).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["delegated", "keywords_of"]

P = ParamSpec("P")
R = TypeVar("R")


def keywords_of(source: Callable[P, Any]) -> Callable[[Callable[..., R]], Callable[Concatenate[Any, P], R]]:
    """Give the decorated method the parameters of `source` after its own `self` (it takes them as `**keywords`)."""
    parameters = list(inspect.signature(source).parameters.values())

    def decorate(method: Callable[..., R]) -> Callable[Concatenate[Any, P], R]:
        own = inspect.signature(method)
        first = next(iter(own.parameters.values()))
        method.__signature__ = own.replace(parameters=[first, *parameters])  # type: ignore[attr-defined]
        return method

    return decorate


def delegated(method: Callable[Concatenate[Any, P], R], *, via: str) -> Callable[Concatenate[Any, P], R]:
    """A method that calls `method` on the owner's part `via` (an attribute naming the part), with its signature
    and docstring."""

    @functools.wraps(method)
    def verb(owner: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return method(getattr(owner, via), *args, **kwargs)

    return verb
