"""The progress line of `mcp-testkit check` on a terminal: the running property, its examples done of the
maximum (or its shrinking tries) and the elapsed time, rewritten in place and erased when the property ends.
Never used when the output is not a terminal, so CI logs keep plain lines."""

from __future__ import annotations

import threading
import time
from typing import TextIO

__all__ = ["Ticker"]

_EVERY_S = 0.2


class Ticker:
    """One line updated in place from a thread of its own while a property runs; `example` is called from the
    contract's thread as each example starts."""

    def __init__(self, out: TextIO, maximum: int) -> None:
        self._out = out
        self._maximum = maximum
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._text = ""
        self._started = 0.0
        self._done = 0
        self._tries = 0

    def start(self, text: str) -> None:
        """Show `text` (e.g. `  P3  running`), its progress and its time until `stop`."""
        self.stop()
        self._stopped.clear()
        self._text, self._started, self._done, self._tries = text, time.monotonic(), 0, 0
        self._draw()

        def tick() -> None:
            while not self._stopped.wait(_EVERY_S):
                self._draw()

        self._thread = threading.Thread(target=tick, name="mcp-testkit-check-ticker", daemon=True)
        self._thread.start()

    def example(self, number: int, shrinking: bool) -> None:
        """Example `number` starts (counted ones), or one more shrinking try."""
        if shrinking:
            self._tries += 1
        else:
            self._done = number - 1

    def line(self, elapsed_s: float) -> str:
        """The line as drawn after `elapsed_s` seconds."""
        if self._tries:
            what = f"shrinking a counterexample, {self._tries} tr{'ies' if self._tries != 1 else 'y'}"
        else:
            what = f"{self._done} of {max(self._maximum, self._done)} examples done"
        return f"{self._text}: {what}, {elapsed_s:.1f} s"

    def _draw(self) -> None:
        with self._lock:
            if self._stopped.is_set():
                return
            self._out.write(f"\r{self.line(time.monotonic() - self._started)}\x1b[K")
            self._out.flush()

    def stop(self) -> None:
        """Erase the line; nothing to do when none is shown."""
        if self._thread is None:
            return
        self._stopped.set()
        self._thread.join()
        self._thread = None
        with self._lock:
            self._out.write("\r\x1b[K")
            self._out.flush()
