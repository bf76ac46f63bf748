"""The ways an example ends other than passing: the bridge broke a property (`ContractViolation`), it fell back
to the handshake era (`BridgeFellBack`: no verdict), or the harness or the adapter raised and nothing is known
about the bridge (`ContractError`)."""

from __future__ import annotations

import traceback

__all__ = ["BridgeFellBack", "ContractError", "ContractViolation", "one_line", "traceback_text"]


class ContractViolation(AssertionError):
    """The bridge broke a property; the message is the readable trace of the example."""


class ContractError(Exception):
    """The harness or the adapter itself raised: no verdict about the bridge; the message has the traceback."""


class BridgeFellBack(Exception):
    """In the stateless era the bridge spoke the handshake era to a server of both: no verdict, neither a pass nor
    a `ContractViolation` (so never taken for an expected failure)."""


def traceback_text(error: BaseException) -> str:
    """`error`'s traceback, as an error verdict shows it."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()


def one_line(error: BaseException) -> str:
    """`Kind: message` of `error`; an exception group (a task group's: anyio's, asyncio's) is shown by the
    exceptions it holds, each as its own `Kind: message` ("ExceptionGroup: unhandled errors in a TaskGroup" says
    nothing of what went wrong)."""
    leaves = _leaves(error)
    shown = "; ".join(f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__ for leaf in leaves)
    group = type(error).__name__
    return f"{shown} (in {'an' if group[0] in 'AEIOU' else 'a'} {group})" if leaves != [error] else shown


def _leaves(error: BaseException) -> list[BaseException]:
    inner = getattr(error, "exceptions", None)  # an exception group (builtin from 3.11, the backport's on 3.10)
    if isinstance(inner, tuple) and inner and all(isinstance(one, BaseException) for one in inner):
        return [leaf for one in inner for leaf in _leaves(one)]
    return [error]
