"""`TaskHost`: a bridge living in a task of its own, reached through a stream of calls.

A bridge built on the `mcp` SDK holds task groups; when its transport fails it cancels the task they were
entered in. Entered in the contract's own task (in an adapter's `connect()`), that cancellation lands on the
contract: a call awaited there sees a `CancelledError` instead of an error. So the bridge lives in a task of its
own, each call reaches it with a reply stream, and an error reaches the caller as an outcome. The SDK client
adapter and the third-party adapters are built on it; docs/adapters.md shows a complete adapter.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp_testkit.adapters._outcome import Outcome

__all__ = ["Answer", "Serve", "TaskHost"]

Serve = Callable[[Any, Any, dict[str, Outcome]], Awaitable[None]]
"""The bridge's task: `serve(requests, started, box)` opens the bridge, puts the connect's outcome in
`box["outcome"]`, sets `started`, then answers the calls of `requests` (with `TaskHost.answer_calls`) until
the adapter closes; it catches what the bridge raises, and sets `started` in a `finally`."""

Answer = Callable[[str, dict[str, Any]], Awaitable[Outcome]]
"""How the bridge's task answers one call: `answer(tool, arguments)`, in the bridge's task."""


class TaskHost:
    """The hosting half of an adapter whose bridge lives in a task of its own: start that task, pass it the
    calls, close it. Subclass it; `connect` calls `await self.start(serve)` (see `Serve`), and `serve` sets
    `self.tools` to the tools the bridge loaded. `list_tools`, `call` and `close` are the adapter's.

    A serve loop that answers each call with `_answer` lets a caller abandon a call: cancelling the task awaiting
    `call` cancels the bridge's call in its own task too, as the application's cancel scope around it would
    (what P10 takes of every adapter that does not declare cannot "abandon_calls").

    A call sent to a task that has ended is a `connection_error` (nothing was sent); a call whose task ended
    while it was in flight is an `outcome_unknown` (it was sent, so it may have run).
    """

    __test__ = False  # a base class of adapters, not a test
    _group: Any = None
    _task: Any = None
    _ended: Any = None
    _requests: Any = None
    tools: list[str]
    """The names of the tools the bridge loaded at connect: `serve` sets them."""
    _calls: dict[int, Any] | None = None
    """The cancel scopes of the calls the bridge's task runs now through `_answer`, by their reply stream."""

    @property
    def task_name(self) -> str:
        """How errors name the bridge's task ("the <task_name> task ended")."""
        return str(getattr(self, "name", "bridge"))

    async def start(self, serve: Serve) -> Outcome:
        """Start the bridge's task and wait until it connected (or failed to): the connect's outcome.

        The task is not tied to the caller's cancel scopes: a caller may wrap `connect()` in a scope of its own (a
        deadline) and leave it, with the bridge connected or not, and `close()` later from another scope. Under
        asyncio it is a task of the loop's own; elsewhere a task group entered here and left in `close()`."""
        import anyio

        self.tools = getattr(self, "tools", [])
        self._requests, requests = anyio.create_memory_object_stream[Any](0)
        started = anyio.Event()
        ended = anyio.Event()
        box: dict[str, Outcome] = {}

        async def host() -> None:
            try:
                await serve(requests, started, box)
            except BaseException:  # serve sorts the bridge's errors; what escapes ends the task
                pass
            finally:
                started.set()
                ended.set()

        self._ended = ended
        loop = _asyncio_loop()
        if loop is not None:
            self._task = loop.create_task(host())
        else:
            self._group = anyio.create_task_group()
            await self._group.__aenter__()
            self._group.start_soon(host)
        try:
            await started.wait()
        except BaseException:  # the caller gave up on the connect (its cancel scope): end the bridge's task
            await self._stop(cancel=True)
            raise
        return box.get("outcome") or Outcome.connection_error(RuntimeError(f"the {self.task_name} task ended"))

    async def _stop(self, *, cancel: bool) -> None:
        """End the bridge's task: close its stream of calls (it then closes the bridge), or with `cancel` cancel it,
        and wait until it ended."""
        import anyio

        task, self._task = self._task, None
        group, self._group = self._group, None
        ended, self._ended = self._ended, None
        requests, self._requests = self._requests, None
        if requests is not None:
            with anyio.CancelScope(shield=True):
                await requests.aclose()
        if cancel and task is not None:
            task.cancel()
        if cancel and group is not None:
            group.cancel_scope.cancel()
        if ended is not None:
            with anyio.CancelScope(shield=cancel):
                await ended.wait()
        if group is not None:
            with contextlib.suppress(Exception):
                await group.__aexit__(None, None, None)

    @staticmethod
    async def answer_calls(requests: Any, answer: Answer) -> None:
        """In the bridge's task: answer each call that reaches it with `answer(tool, arguments)`, until the
        adapter closes. `answer` maps what the bridge raises to an outcome; what it lets escape ends the task."""
        async with requests:
            async for tool, arguments, reply in requests:
                async with reply:
                    await reply.send(await answer(tool, arguments))

    async def list_tools(self) -> list[str]:
        return list(getattr(self, "tools", []))

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
            calling = (self._calls or {}).get(id(reply))
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
            calls = self._calls if self._calls is not None else {}
            self._calls = calls
            with anyio.CancelScope() as scope:
                calls[id(reply)] = scope
                try:
                    outcome = await work()
                finally:
                    calls.pop(id(reply), None)
            if not scope.cancelled_caught:
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await reply.send(outcome)

    async def _answer_concurrently(self, requests: Any, answer: Answer) -> None:
        """In the bridge's task: run each call that reaches it in a task of its own (`_answer`), so that calls
        overlap as an application's concurrent calls on one bridge do, until the adapter closes; the calls still
        in flight then end unanswered (their callers get `outcome_unknown`)."""
        import anyio

        async with anyio.create_task_group() as group:
            async with requests:
                async for tool, arguments, reply in requests:
                    group.start_soon(self._answer, reply, functools.partial(answer, tool, arguments))
            group.cancel_scope.cancel()

    async def close(self) -> None:
        await self._stop(cancel=False)


def _asyncio_loop() -> Any:
    """The running asyncio loop, or None under another event loop (trio)."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
