"""A tape: the exchanges a recording's links finish, numbered in the order they were sent."""

from __future__ import annotations

import itertools
import threading
import time

from mcp_testkit.upstream._exchange import Exchange

__all__ = ["Tape"]


class Tape:
    """Exchanges as they finish, numbered in the order they were sent; shared by the threads that record."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def start(self) -> tuple[int, float]:
        """A new exchange's number and its start, in ms since the tape started."""
        with self._lock:
            return next(self._seq), round((time.monotonic() - self._started) * 1000, 1)

    def elapsed_ms(self, at_ms: float) -> float:
        """Milliseconds since an exchange that started at `at_ms`."""
        return max(0.0, round((time.monotonic() - self._started) * 1000 - at_ms, 1))

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    @property
    def exchanges(self) -> list[Exchange]:
        """The exchanges finished so far, in the order they were sent."""
        with self._lock:
            return sorted(self._exchanges, key=lambda exchange: exchange.seq)
