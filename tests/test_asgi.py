"""The shared ASGI pieces (mcp_testkit/_asgi.py): `run_until_disconnect`, which a 2026-07-28 tools/call runs under so
that its client's close cancels it, on asyncio without a task group and on trio with one."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_testkit._wire.asgi import run_until_disconnect

pytestmark = pytest.mark.anyio

LIMIT_S = 10.0


class Client:
    """The receive of one request whose body was read: it tells of a disconnect once `leave()` is called."""

    def __init__(self) -> None:
        self.gone = anyio.Event()
        self.waiting = 0

    def leave(self) -> None:
        self.gone.set()

    async def receive(self) -> dict[str, Any]:
        self.waiting += 1
        await self.gone.wait()
        return {"type": "http.disconnect"}


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_close_before_the_end_cancels_the_run(anyio_backend: str) -> None:
    """A client that leaves while the run waits cancels it; the call says so and the task goes on as before."""
    client = Client()
    started = anyio.Event()
    reached_end = False

    async def run() -> None:
        nonlocal reached_end
        started.set()
        await anyio.sleep_forever()
        reached_end = True

    async def leave_once_started() -> None:
        await started.wait()
        client.leave()

    with anyio.fail_after(LIMIT_S):
        async with anyio.create_task_group() as group:
            group.start_soon(leave_once_started)
            closed = await run_until_disconnect(client.receive, run)
        assert closed
        assert not reached_end
        # The cancel was the call's own: the task's later waits and time limits work as ever.
        with anyio.move_on_after(0.01) as scope:
            await anyio.sleep_forever()
        assert scope.cancelled_caught
        await anyio.lowlevel.checkpoint()
    if anyio_backend == "asyncio":
        task = asyncio.current_task()
        assert task is not None
        assert getattr(task, "cancelling", lambda: 0)() == 0  # 3.11+


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_a_run_that_ends_is_not_cancelled_by_a_later_close(anyio_backend: str) -> None:
    """A run that ends before the client leaves is not cancelled, and a close afterwards changes nothing."""
    client = Client()
    ran = []

    async def run() -> None:
        await anyio.lowlevel.checkpoint()
        ran.append(True)

    with anyio.fail_after(LIMIT_S):
        assert await run_until_disconnect(client.receive, run) is False
        client.leave()
        await anyio.sleep(0.01)
    assert ran == [True]


async def test_an_answer_ready_at_once_starts_no_watch() -> None:
    """On asyncio a run that never waits is over before the watch would start: receive is never called."""
    client = Client()

    async def run() -> None:
        pass

    assert await run_until_disconnect(client.receive, run) is False
    await asyncio.sleep(0.01)
    assert client.waiting == 0


async def test_an_outer_cancel_goes_through() -> None:
    """A cancel from outside (the server stopping, an enclosing scope) is not taken for the client's close."""
    client = Client()

    async def run() -> None:
        await anyio.sleep_forever()

    with anyio.fail_after(LIMIT_S), anyio.move_on_after(0.05) as scope:
        await run_until_disconnect(client.receive, run)
    assert scope.cancelled_caught
    assert client.waiting == 1


async def test_an_error_of_the_run_is_raised_as_it_is() -> None:
    """An exception of the run reaches the caller itself, not wrapped in a group."""
    client = Client()

    async def run() -> None:
        await anyio.lowlevel.checkpoint()
        raise LookupError("boom")

    with anyio.fail_after(LIMIT_S), pytest.raises(LookupError, match="boom"):
        await run_until_disconnect(client.receive, run)
