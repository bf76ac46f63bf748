"""Where examples run: an event loop of the contract's own (`EventLoop`), and the in-process transport that
lets an example's deadline through (`CheckpointedTransport`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import httpx2

from mcp_testkit.contract._virtual_time import SkippingEventLoop

__all__ = ["CheckpointedTransport", "EventLoop"]


class CheckpointedTransport(httpx2.AsyncBaseTransport):
    """The in-process transport, with a checkpoint per request.

    An in-process request may complete without ever suspending, so a bridge that retries without end
    would never hand the event loop the moment to enforce the example's deadline; a checkpoint per
    request lets the deadline, and so the hang report, through.
    """

    def __init__(self, app: Any) -> None:
        self._inner = httpx2.ASGITransport(app=app)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await anyio.lowlevel.checkpoint()
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class EventLoop:
    """Where examples run: an event loop of our own in this thread (no hand-off per example), or, when
    this thread already runs one (an async test called us), a loop in a helper thread.

    With `virtual`, the loop's clock skips what nothing can happen in (`SkippingEventLoop`): in-process examples
    wait out their declared timeouts in no wall time. `unrelated` are the threads that never hold it back.
    """

    def __init__(self, *, virtual: bool = False, unrelated: frozenset[int] = frozenset()) -> None:
        self._virtual = virtual
        self._unrelated = unrelated
        self.clock: SkippingEventLoop | None = None
        """The loop on virtual time, when it is one: what says how an example's time went."""

    def _new_loop(self) -> Any:
        import asyncio

        if not self._virtual:
            return asyncio.new_event_loop()
        self.clock = SkippingEventLoop(self._unrelated)
        return self.clock

    def __enter__(self) -> EventLoop:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            from mcp_testkit.contract._ctrl_c import held

            made: list[Any] = []
            try:
                with held():  # Ctrl-C inside new_event_loop() would leave a half-built loop behind
                    made.append(self._new_loop())
            except BaseException:
                for loop in made:
                    loop.close()
                raise
            self._loop: Any = made[0]
            self._portal: Any = None
        else:
            from anyio.from_thread import start_blocking_portal

            self._loop = None
            self._portal_cm = start_blocking_portal("asyncio", {"loop_factory": self._new_loop})
            self._portal = self._portal_cm.__enter__()
        return self

    @property
    def virtual(self) -> bool:
        """Whether the loop's clock skips idle time now."""
        return self.clock is not None and self.clock.skipping

    def call(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        if self._loop is not None:
            return self._loop.run_until_complete(function(*args))
        return self._portal.call(function, *args)

    def spawn(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        if self._loop is not None:
            return self._loop.create_task(function(*args))
        return self._portal.start_task_soon(function, *args)

    def join(self, handle: Any, timeout_s: float) -> Any:
        if self._loop is not None:
            import asyncio

            return self._loop.run_until_complete(asyncio.wait_for(handle, timeout_s))
        return handle.result(timeout_s)

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is None:
            self._portal_cm.__exit__(None, None, None)
            return
        import asyncio

        loop, self._loop = self._loop, None
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()
