"""The reference bridge's documented limits: a result over `max_result_bytes`, a server that never answers, and a
pool closed from another task while calls are in flight (issue 23: P11, P12, P13)."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import (
    MCPBridgeError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPResultTooLarge,
    MCPToolError,
    ServerConfig,
    ToolPool,
)

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio

LIMIT = 64 * 1024


def _in_process(server: TestMcpServer, era: str, **options: object) -> ToolPool:
    config = ServerConfig(name="t", url="http://127.0.0.1/mcp", era=era, **options)  # type: ignore[arg-type]
    return ToolPool([config], transport=httpx2.ASGITransport(app=server.asgi_app), cache=False)


@pytest.mark.parametrize("sse", [False, True])
async def test_a_result_over_max_result_bytes_is_its_own_error_and_the_session_goes_on(era: str, sse: bool) -> None:
    """Over the limit: MCPResultTooLarge (a tool error) naming the size and the limit, the read not resent; the
    next call on the same pool is answered."""
    server = script_tools(TestMcpServer())
    server.fail_next_call(faults.HugeResult(size=LIMIT + 1, sse=sse), tool="search")
    with anyio.fail_after(LIMIT_S):
        async with _in_process(server, era, max_result_bytes=LIMIT) as pool:
            with pytest.raises(MCPResultTooLarge) as raised:
                await pool.call("t.search")
            assert await pool.call("t.search") == "found"
    error = raised.value
    assert isinstance(error, MCPToolError)
    assert (error.limit, error.tool) == (LIMIT, "search")
    assert f"max_result_bytes={LIMIT}" in str(error)
    if not sse:
        assert error.size is not None
        assert error.size > LIMIT + 1
        assert f"an answer of {error.size} bytes" in str(error)
    assert server.executions("search") == 2  # once each: the refused result was not fetched again


async def test_a_result_under_max_result_bytes_is_given_whole(era: str) -> None:
    """A large result under the limit is read and rendered whole."""
    server = script_tools(TestMcpServer())
    server.fail_next_call(faults.HugeResult(size=LIMIT // 2), tool="search")
    with anyio.fail_after(LIMIT_S):
        async with _in_process(server, era, max_result_bytes=LIMIT) as pool:
            text = await pool.call("t.search")
    assert text == "x" * (LIMIT // 2)


def test_max_result_bytes_must_be_a_positive_int() -> None:
    """A limit of 0, a float or a bool is refused, naming the option."""
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="max_result_bytes must be an int >= 1"):
            ServerConfig(name="t", url="http://127.0.0.1/mcp", max_result_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("fault", [faults.NeverAnswer(), faults.ProgressOnly(interval_s=0.01)])
async def test_a_call_the_server_never_answers_ends_at_its_timeout(era: str, fault: faults.Fault) -> None:
    """A write held by NeverAnswer or ProgressOnly ends at timeout_s as an unknown outcome (over a socket, where the
    headers arrive first); nothing stretches the wait past it."""
    server = script_tools(TestMcpServer(response_mode="sse"))
    server.inject(fault, method="tools/call", tool="create", times=None)
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server, era=era, timeout_s=0.3)], cache=False) as pool:
            started = anyio.current_time()
            with pytest.raises(MCPCallOutcomeUnknown, match=r"did not answer within 0\.3s"):
                await pool.call("t.create")
            took = anyio.current_time() - started
    assert took < 0.3 + 5.0  # a generous bound: before the fix, a shielded drain added 1 s per attempt


async def test_closing_the_pool_from_another_task_ends_the_calls_in_flight(era: str) -> None:
    """Calls in flight when another task closes the pool end, answered (in-process the request held by the server
    still completes) or with a bridge error, never a raw RuntimeError of the closed HTTP client; the close returns."""
    server = script_tools(TestMcpServer())
    server.inject(faults.Delay(1.0), method="tools/call", times=None)
    errors: list[BaseException] = []
    answers: list[str] = []

    async def one(pool: ToolPool, name: str) -> None:
        try:
            answers.append(await pool.call(name))
        except MCPBridgeError as exc:
            errors.append(exc)

    with anyio.fail_after(LIMIT_S):
        pool = _in_process(server, era)
        await pool.__aenter__()
        async with anyio.create_task_group() as group:
            for name in ("t.search", "t.create", "t.upsert"):
                group.start_soon(one, pool, name)
            while True:  # until the server holds the first call
                if server.calls():
                    break
                await anyio.sleep(0.01)
            await pool.__aexit__(None, None, None)
    assert len(errors) + len(answers) == 3
    assert len(errors) >= 2  # the calls queued behind the held one never reach the server
    assert all(isinstance(e, (MCPConnectionError, MCPCallOutcomeUnknown)) for e in errors), errors
