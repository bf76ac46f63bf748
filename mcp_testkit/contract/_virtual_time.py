"""Virtual time for examples run in-process: an asyncio event loop whose clock jumps to its next timer whenever
nothing else can happen, so that a bridge's declared timeouts, backoffs and a fault's late answers cost no wall time.

The loop's clock is the real one plus the time it skipped (`skipped_s`): code still takes the time it takes, and a
loop that never idles (a bridge spinning on `sleep(0)`) meets its deadlines in real time as before. It skips only
when its selector would wait for a timer and nothing can wake it earlier: no I/O is ready, and no thread other than
the loop's own is at work (a thread blocked on a lock, a queue or a selector is idle; one running code, sleeping in
`time.sleep` among them, is at work, and the loop waits for it on the real clock). A pool worker waiting on a queue
that holds work is at work: it was handed a job and has not run yet. A bridge whose clock is not the
loop's (it sleeps in a thread, or polls `time.monotonic()`) shows it: the loop waits on its threads for long, or
skips without end; `clock_dependence()` then says why, and the harness runs it on the real clock from then on.
"""

from __future__ import annotations

import asyncio
import selectors
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["IDLE_CALL_LIMIT", "REAL_WAIT_LIMIT_S", "SKIP_LIMIT", "SkippingEventLoop"]

SKIP_LIMIT = 5_000
"""Skips in one example past which its bridge is taken to poll a clock of its own (`time.monotonic()`)."""
REAL_WAIT_LIMIT_S = 0.5
"""Seconds one example may wait on the real clock for threads at work before its bridge is taken to wait on them."""
IDLE_CALL_LIMIT = 200
"""How many times one example may find a thread at work before it is taken to wait on threads (each short)."""
_POLL_S = 0.0005
"""How long the loop waits for I/O or a thread's answer before it skips (a thread may be handing one in)."""
_STEP_S = 0.005
"""How long the loop waits at a time while a thread is at work."""
_WORKERS = ("AnyIO worker thread", "asyncio_", "ThreadPoolExecutor")
"""The names of pool threads (anyio's, asyncio's default executor's): they count whenever they were started."""
_IDLE_FILES = ("threading.py", "queue.py", "selectors.py", "thread.py")
_IDLE_FUNCTIONS = frozenset({"wait", "select", "_worker", "_wait_for_tstate_lock", "join", "acquire"})


def _idle(frame: Any) -> bool:
    """Whether a thread's innermost Python frame is a wait in the standard library (a lock, a queue, a selector),
    with no work handed to it yet: a worker waiting on a queue that holds work is about to run it."""
    code = frame.f_code
    return code.co_name in _IDLE_FUNCTIONS and code.co_filename.endswith(_IDLE_FILES) and not _work_waiting(frame)


def _work_waiting(frame: Any) -> bool:
    """Whether the queue a pool worker waits on holds work: `queue.Queue.get`'s queue up the wait's frames, or
    concurrent.futures' `work_queue` (read with the GIL held, as a debugger reads another thread's frame)."""
    while frame is not None and frame.f_code.co_filename.endswith(_IDLE_FILES):
        queue = frame.f_locals.get("self" if frame.f_code.co_name == "get" else "work_queue")
        size = getattr(queue, "qsize", None)
        if callable(size):
            try:
                return bool(size() > 0)
            except Exception:
                return True
        frame = frame.f_back
    return False


class SkippingEventLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time while `skipping` (the default); `stop_skipping()` puts it on the real clock."""

    def __init__(self, unrelated: frozenset[int] = frozenset()) -> None:
        """`unrelated`: the threads that were there before the bridge (the test runner's, other servers'), which
        never hold the loop back; a pool's worker threads always count, whenever they were started."""
        super().__init__()
        self.unrelated = unrelated
        self.skipping = True
        self.skipped_s = 0.0
        """The time the loop's clock is ahead of the real one: what every skip jumped."""
        self.skips = 0
        self.real_waits_s = 0.0
        self.busy_threads: set[str] = set()
        self._found_busy = 0
        self._loop_thread: int | None = None
        selector: selectors.BaseSelector = self._selector  # type: ignore[attr-defined]
        self._select: Callable[[float | None], list[tuple[selectors.SelectorKey, int]]] = selector.select
        selector.select = self._skipping_select  # type: ignore[method-assign]

    def time(self) -> float:
        return time.monotonic() + self.skipped_s

    def stop_skipping(self) -> None:
        """The real clock from now on (the loop's time keeps what it skipped, so it never goes back)."""
        self.skipping = False

    def watch(self) -> None:
        """Start counting for one example: its skips and the real time it waited on threads."""
        self.skips = 0
        self.real_waits_s = 0.0
        self._found_busy = 0
        self.busy_threads = set()

    def clock_dependence(self) -> str | None:
        """Why the example just run cannot be trusted to virtual time (its bridge keeps time outside the loop's
        timers), or None."""
        if not self.skipping:
            return None
        if self.real_waits_s > REAL_WAIT_LIMIT_S or self._found_busy > IDLE_CALL_LIMIT:
            names = ", ".join(sorted(self.busy_threads)) or "a thread"
            return (
                f"it waited on work in threads ({names}) for {self.real_waits_s:.2f} s, which virtual time cannot skip "
                "(time.sleep or blocking calls in a thread)"
            )
        if self.skips > SKIP_LIMIT:
            return (
                f"its event loop skipped ahead {self.skips} times in one example, as a bridge does that measures time "
                "with a clock of its own (time.monotonic()) rather than the loop's timers"
            )
        return None

    def _threads_at_work(self) -> list[str]:
        """The names of the threads, other than the loop's, running code rather than waiting in the standard library."""
        own = self._loop_thread
        if own is None:
            own = self._loop_thread = threading.get_ident()
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        return [
            names.get(ident, str(ident))
            for ident, frame in sys._current_frames().items()
            if ident != own and (ident not in self.unrelated or names.get(ident, "").startswith(_WORKERS))
            and not _idle(frame)
        ]

    def _skipping_select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if not self.skipping or timeout is None or timeout <= 0:
            # Not skipping, ready work to run (0), or no timer at all: only I/O or a thread can wake the loop.
            return self._select(timeout)
        ready = self._select(min(_POLL_S, timeout))
        if ready:
            return ready
        started = time.monotonic()
        due = started + timeout - _POLL_S
        while True:
            busy = self._threads_at_work()
            if not busy:
                break
            self._found_busy += 1
            self.busy_threads.update(busy)
            left = due - time.monotonic()
            if left <= 0:
                self.real_waits_s += time.monotonic() - started
                return []
            ready = self._select(min(_STEP_S, left))
            if ready:
                self.real_waits_s += time.monotonic() - started
                return ready
        self.real_waits_s += time.monotonic() - started
        left = due - time.monotonic()
        if left > 0:
            self.skipped_s += left
            self.skips += 1
        return []
