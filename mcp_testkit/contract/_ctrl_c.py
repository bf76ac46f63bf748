"""Ctrl-C during `mcp-testkit check`, remembered: a KeyboardInterrupt that a bridge's code swallowed still stops
the run."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType, TracebackType

__all__ = ["CtrlC", "held"]


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Ctrl-C held back while the body runs, for a step an interrupt would leave half done (a new event loop, whose
    half-built object then complains as it is collected): pressed meanwhile, it goes to the handler there was when
    the body ends. Only in the main thread, where the signal lands, and only over a handler written in Python."""
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(previous):
        yield
        return
    pressed: list[FrameType | None] = []
    signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pressed:
            previous(signal.SIGINT, pressed[0])


class CtrlC:
    """While entered (in the main thread), Ctrl-C raises KeyboardInterrupt as Python's own handler does, and is
    also remembered: where the interrupt lands in a task group of a bridge, it leaves as an exception group that the
    contract takes for an error of the example, and `check()` is what stops the run after that example."""

    def __init__(self) -> None:
        self.pressed = False
        self._installed = False

    def __enter__(self) -> CtrlC:
        # Only Python's own handler is replaced: an embedding program's handler, or none, is left alone.
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, self._pressed)
            self._installed = True
        return self

    def _pressed(self, signum: int, frame: FrameType | None) -> None:
        self.pressed = True
        raise KeyboardInterrupt

    def check(self) -> None:
        """Raise KeyboardInterrupt if Ctrl-C was pressed, whatever became of the one it raised then."""
        if self.pressed:
            raise KeyboardInterrupt

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            self._installed = False
