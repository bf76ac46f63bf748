"""`LogCapture`: the log records of one example, shown with a failing one. It is one handler, added to the root
logger (and to the loggers the adapter names in `loggers`) around the example and removed after: no other
handler, level or `propagate` flag is touched, so the user's logging sees what it would without the contract."""

from __future__ import annotations

import collections
import contextlib
import logging
from collections.abc import Iterator, Sequence

__all__ = ["LogCapture"]

_LOG_LINES = 30


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
        for logger in loggers:
            logger.addHandler(self)
        try:
            yield
        finally:
            for logger in loggers:
                logger.removeHandler(self)

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
