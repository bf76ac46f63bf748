"""A stdio server's stderr: drained on a thread of its own, so that the server never blocks on a full pipe, and
kept as a bounded tail (not printed) that an error about the server can quote."""

from __future__ import annotations

import re
import threading
from collections import deque
from typing import IO, TextIO

__all__ = ["MAX_BYTES", "MAX_LINES", "StderrTail"]

MAX_LINES = 50
MAX_BYTES = 8 * 1024
_ERROR_LINE = re.compile(r"^\s*[\w.]*(Error|Exception)\b.*:")
"""A line naming an error, as Python (`ModuleNotFoundError: ...`) and Node (`Error: Cannot find module ...`) end a
crash; Node follows it with a stack and its version, so the last line alone says little."""


class StderrTail:
    """The last `max_lines` lines (at most `max_bytes` characters in all) a process wrote on stderr.

    A thread reads the pipe to its end whatever is kept, so the process can write as much as it likes.
    """

    def __init__(self, pipe: IO[bytes], *, name: str, max_lines: int = MAX_LINES, max_bytes: int = MAX_BYTES) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self._lines: deque[str] = deque()
        self._size = 0
        self._lock = threading.Lock()
        self._shown: TextIO | None = None
        self._pipe = pipe
        self._thread = threading.Thread(target=self._drain, name=name, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            # A bounded readline: a line without an end is kept in pieces, never read whole into memory.
            for raw in iter(lambda: self._pipe.readline(self.max_bytes), b""):
                self._keep(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
        except (OSError, ValueError):
            return  # the pipe was closed under the reader: the process is being stopped

    def _keep(self, line: str) -> None:
        with self._lock:
            self._show(line)
            self._lines.append(line)
            self._size += len(line)
            while len(self._lines) > self.max_lines or (self._size > self.max_bytes and len(self._lines) > 1):
                self._size -= len(self._lines.popleft())

    def show(self, stream: TextIO) -> None:
        """Write to `stream` (e.g. `sys.stderr`) the lines kept so far, then every later line as it comes: the
        server's stderr passed through, when asked for (`--upstream-stderr`)."""
        with self._lock:
            self._shown = stream
            for line in self._lines:
                self._show(line)

    def _show(self, line: str) -> None:
        if self._shown is None:
            return
        try:
            self._shown.write(line + "\n")
            self._shown.flush()
        except (OSError, ValueError):
            self._shown = None  # the stream was closed: keep draining, stop showing

    def lines(self) -> list[str]:
        """What is kept, oldest first."""
        with self._lock:
            return list(self._lines)

    def last(self) -> str | None:
        """The line that says why the process failed: the last naming an error, else the last that is not blank."""
        said = [line.strip() for line in self.lines() if line.strip()]
        return next((line for line in reversed(said) if _ERROR_LINE.match(line)), said[-1] if said else None)

    def join(self, timeout_s: float) -> None:
        """Wait until the pipe ended (the process and any child holding it exited), at most `timeout_s`."""
        self._thread.join(timeout_s)

    def close(self) -> None:
        """Wait briefly for the reader, then close the pipe."""
        self._thread.join(1.0)
        if not self._thread.is_alive():
            self._pipe.close()
