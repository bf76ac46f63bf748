"""The two ways an example ends other than passing: the bridge broke a property (`ContractViolation`), or the
harness or the adapter raised and nothing is known about the bridge (`ContractError`)."""

from __future__ import annotations

import traceback

__all__ = ["ContractError", "ContractViolation", "traceback_text"]


class ContractViolation(AssertionError):
    """The bridge broke a property; the message is the readable trace of the example."""


class ContractError(Exception):
    """The harness or the adapter itself raised: no verdict about the bridge; the message has the traceback."""


def traceback_text(error: BaseException) -> str:
    """`error`'s traceback, as an error verdict shows it."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()
