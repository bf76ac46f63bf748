"""`LogCapture`: the log records of one example, shown with a failing one. It is one handler, added to the root
logger (and to the loggers the adapter names in `loggers`) around the example and removed after. While it is there,
the records emitted in the example's context (its tasks, and the threads anyio starts for it, which copy the
context) are kept from the other handlers of those loggers by a filter added to each of them and removed after: a
chatty bridge does not flood the user's output during a passing run, and its lines are shown with a failing
example. No handler list, level or `propagate` flag changes; records of other threads and of loggers the example
does not watch reach their handlers as they would without the contract."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import logging
from collections.abc import Iterator, Sequence

__all__ = ["LogCapture"]

_LOG_LINES = 30

_IN_EXAMPLE: contextvars.ContextVar[bool] = contextvars.ContextVar("mcp_testkit_in_example", default=False)
"""True in the context of an example being watched (its tasks and the threads started for it)."""


def _not_of_the_example(record: logging.LogRecord) -> bool:
    """The filter put on the user's handlers while an example runs: a record of the example is kept for it."""
    return not _IN_EXAMPLE.get()


class LogCapture(logging.Handler):
    """Keeps the last 200 log records that reach it while `watching`; `lines()` are the last 30 of them."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: collections.deque[logging.LogRecord] = collections.deque(maxlen=200)

    def emit(self, record: logging.LogRecord) -> None:
        # A named logger that propagates hands the same record to the root logger's handlers next: keep it once.
        if not (self.records and self.records[-1] is record):
            self.records.append(record)

    @contextlib.contextmanager
    def watching(self, names: Sequence[str] = ()) -> Iterator[None]:
        """Capture, while inside, the records that reach the root logger or one of the loggers `names`."""
        loggers = [logging.getLogger(), *(logging.getLogger(name) for name in names)]
        others = list(dict.fromkeys(handler for logger in loggers for handler in logger.handlers))
        for handler in others:
            handler.addFilter(_not_of_the_example)
        for logger in loggers:
            logger.addHandler(self)
        token = _IN_EXAMPLE.set(True)
        try:
            yield
        finally:
            _IN_EXAMPLE.reset(token)
            for logger in loggers:
                logger.removeHandler(self)
            for handler in others:
                handler.removeFilter(_not_of_the_example)

    def lines(self) -> list[str]:
        shown = list(self.records)[-_LOG_LINES:]
        lines = []
        for record in shown:
            try:
                message = record.getMessage()
            except Exception as exc:  # a bridge's bad log call must not hide the verdict
                message = f"(unformattable log record: {exc})"
            lines.append(f"{record.levelname} {record.name}: {message}".splitlines()[0][:200])
        return lines
