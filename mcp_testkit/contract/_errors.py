"""The ways an example ends other than passing: the bridge broke a property (`ContractViolation`), it fell back
to the handshake era (`BridgeFellBack`: no verdict), or the harness or the adapter raised and nothing is known
about the bridge (`ContractError`)."""

from __future__ import annotations

import traceback

__all__ = ["BridgeFellBack", "ContractError", "ContractViolation", "traceback_text"]


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
