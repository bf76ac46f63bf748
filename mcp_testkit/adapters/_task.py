"""`TaskHost`: a bridge living in a task of its own, reached through a stream of calls.

A bridge built on the `mcp` SDK holds task groups; when its transport fails it cancels them, and a
call awaited from the contract's own task would see a cancellation instead of an error. So the
bridge lives in a task of its own, each call reaches it with a reply stream, and an error reaches
the caller as an outcome. The SDK client adapter and the third-party adapters share this hosting.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_testkit.adapters._outcome import Outcome

__all__ = ["Serve", "TaskHost"]

Serve = Callable[[Any, Any, dict[str, Outcome]], Awaitable[None]]
"""The bridge's task: `serve(requests, started, box)` opens the bridge, puts the connect's outcome in
`box["outcome"]`, sets `started`, then answers each `(tool, arguments, reply)` of `requests`."""


class TaskHost:
    """The hosting half of an adapter: start the bridge's task, pass calls to it, close it.

    A serve loop that answers each call with `_answer` lets a caller abandon a call: cancelling the task awaiting
    `call` cancels the bridge's call in its own task too, as the application's cancel scope around it would
    (what an adapter declaring the "cancellation" capability promises).
    """

    _group: Any = None
    _requests: Any = None
    _calling: Any = None
    """The cancel scope of the call the bridge's task runs now, if `_answer` runs it."""
    _tools: list[str]

    @property
    def task_name(self) -> str:
        """How errors name the bridge's task ("the <task_name> task ended")."""
        return str(getattr(self, "name", "bridge"))

    async def _start(self, serve: Serve) -> Outcome:
        """Start the bridge's task and wait until it connected (or failed to): the connect's outcome."""
        import anyio

        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._requests, requests = anyio.create_memory_object_stream[Any](0)
        started = anyio.Event()
        box: dict[str, Outcome] = {}
        self._group.start_soon(serve, requests, started, box)
        await started.wait()
        return box.get("outcome") or Outcome.connection_error(RuntimeError(f"the {self.task_name} task ended"))

    async def list_tools(self) -> list[str]:
        return list(self._tools)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        import anyio

        if self._requests is None:
            return Outcome.connection_error(RuntimeError("not connected"))
        reply, answer = anyio.create_memory_object_stream[Outcome](1)
        try:
            await self._requests.send((tool, dict(arguments), reply))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            reply.close()
            answer.close()
            return Outcome.connection_error(RuntimeError(f"the {self.task_name} task had ended ({type(exc).__name__})"))
        try:
            async with answer:
                return await answer.receive()
        except anyio.get_cancelled_exc_class():
            calling = self._calling
            if calling is not None:  # the caller abandoned the call: so does the bridge's task
                calling.cancel()
            raise
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream) as exc:
            # The bridge's task died with this call in flight: it was sent, so it may have run.
            ended = RuntimeError(f"the {self.task_name} task ended during the call ({type(exc).__name__})")
            return Outcome.outcome_unknown(ended)

    async def _answer(self, reply: Any, work: Callable[[], Awaitable[Outcome]]) -> None:
        """Run one call in the bridge's task and send its outcome on `reply`; a call its caller abandoned (or
        abandons while it runs) is cancelled there and answered with nothing."""
        import anyio

        async with reply:
            if reply.statistics().open_receive_streams == 0:
                return  # abandoned before it started
            with anyio.CancelScope() as scope:
                self._calling = scope
                try:
                    outcome = await work()
                finally:
                    self._calling = None
            if not scope.cancelled_caught:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await reply.send(outcome)

    async def close(self) -> None:
        group, self._group = self._group, None
        requests, self._requests = self._requests, None
        if requests is not None:
            await requests.aclose()
        if group is not None:
            with contextlib.suppress(Exception):
                await group.__aexit__(None, None, None)
