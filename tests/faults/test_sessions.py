"""Session faults: LoseSession, Restart and ExpireSession, and the lose_session()/restart() shortcuts."""

from __future__ import annotations

import anyio
import pytest
from mcp import MCPError

from mcp_testkit import TestMcpServer, faults

from ._support import (
    FRAMINGS,
    LIMIT_S,
    Modern,
    Serve,
    Wire,
    asgi_client,
    call,
    json_bytes,
    rpc,
    sdk_client,
    socket_client,
    tools,
)

pytestmark = pytest.mark.anyio

GONE = "Session not found: it has ended; re-initialize (send initialize without Mcp-Session-Id)"
NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": GONE}}
PING = rpc("ping", request_id=9)


async def test_lose_session_answers_404_now_and_for_every_later_request(serve: Serve) -> None:
    """LoseSession answers the request it hits 404 'Session not found'; the session stays gone; a new one works."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.LoseSession(), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire, other = Wire(client), Wire(client)
            await wire.initialize()
            await other.initialize()
            lost = await wire.post(call("create"))
            later = await wire.post(PING)
            untouched = await other.post(PING)
            await wire.initialize()
            fresh = await wire.post(PING)
    assert (lost.status_code, lost.content) == (404, json_bytes(NOT_FOUND))
    assert (later.status_code, later.json()) == (404, NOT_FOUND)
    assert (untouched.status_code, fresh.status_code) == (200, 200)
    record = server.calls("create")[0]
    assert (record.fault, record.status, record.executed) == (faults.LoseSession(), 404, False)
    assert [s.alive for s in server.sessions] == [False, True, True]
    assert server.executions("create") == 0


async def test_lose_session_on_initialize_issues_a_session_that_is_already_gone(serve: Serve) -> None:
    """LoseSession aimed at initialize answers it normally with a session id, but that session is already gone."""
    server = serve()
    server.inject(faults.LoseSession(), method="initialize")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "w", "version": "1"}}
            opened = await wire.post(rpc("initialize", params, request_id=0))
            wire.session_id = opened.headers["mcp-session-id"]
            after = await wire.post(PING)
    assert opened.status_code == 200
    assert (after.status_code, after.json()) == (404, NOT_FOUND)
    assert server.journal[0].fault == faults.LoseSession()


@pytest.mark.parametrize("status", [404, 400])
async def test_restart_forgets_every_session_and_answers_them_with_its_status(serve: Serve, status: int) -> None:
    """Restart ends every session; they get 404 (the spec) or 400 (python-sdk servers up to 1.25) from then on."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.Restart(unknown_session_status=status), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire, other = Wire(client), Wire(client)
            await wire.initialize()
            await other.initialize()
            hit = await wire.post(call("create"))
            bystander = await other.post(PING)
            await wire.initialize()
            fresh = await wire.post(PING)
    assert (hit.status_code, hit.json()) == (status, NOT_FOUND)
    assert (bystander.status_code, bystander.json()) == (status, NOT_FOUND)
    assert fresh.status_code == 200
    assert [s.alive for s in server.sessions] == [False, False, True]
    assert (server.calls("create")[0].fault, server.executions("create")) == (faults.Restart(status), 0)


async def test_restart_on_initialize_ends_old_sessions_and_opens_the_new_one(serve: Serve) -> None:
    """Restart aimed at initialize ends the sessions there were and still answers that initialize."""
    server = serve()
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            old, new = Wire(client), Wire(client)
            await old.initialize()
            server.inject(faults.Restart(), method="initialize")
            await new.initialize()
            gone = await old.post(PING)
            alive = await new.post(PING)
    assert (gone.status_code, alive.status_code) == (404, 200)
    assert [s.alive for s in server.sessions] == [False, True]


@pytest.mark.parametrize("after_requests", [0, 2])
async def test_expire_session_serves_n_more_requests_then_404(serve: Serve, after_requests: int) -> None:
    """ExpireSession(n): the request it hits and n more are served; the one after gets 404."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.ExpireSession(after_requests=after_requests), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            statuses = [(await wire.post(call("create"))).status_code]
            statuses += [(await wire.post(PING)).status_code for _ in range(after_requests + 1)]
    assert statuses == [200] * (after_requests + 1) + [404]
    assert server.calls("create")[0].fault == faults.ExpireSession(after_requests)
    assert server.executions("create") == 1


async def test_lose_session_shortcut_forgets_the_latest_or_a_named_session(serve: Serve) -> None:
    """server.lose_session() forgets the latest live session, or the one named; LookupError when none is left."""
    server = serve()
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            first, second = Wire(client), Wire(client)
            await first.initialize()
            await second.initialize()
            assert server.lose_session().id == second.session_id
            assert (await second.post(PING)).status_code == 404
            assert (await first.post(PING)).status_code == 200
            assert server.lose_session(first.session_id).id == first.session_id
            assert (await first.post(PING)).status_code == 404
    with pytest.raises(LookupError, match="no live session"):
        server.lose_session()


def test_lose_session_on_a_stateless_only_server_names_the_handshake_era() -> None:
    """lose_session() on a server that speaks only 2026-07-28 says it has no sessions and names eras=("handshake",)."""
    server = TestMcpServer("modern", eras=("stateless",))
    with pytest.raises(LookupError, match=r'speaks only 2026-07-28.*eras=\("handshake",\)'):
        server.lose_session()


async def test_lose_session_when_every_client_is_stateless_names_the_handshake_era() -> None:
    """With both eras served but only 2026-07-28 clients seen, lose_session() says why and names the way out."""
    server = tools(TestMcpServer("both"), "create")
    async with asgi_client(server) as client:
        assert (await Modern(client).post("tools/list")).status_code == 200
    with pytest.raises(LookupError, match=r'every client .* speaks 2026-07-28.*eras=\("handshake",\)'):
        server.lose_session()


@pytest.mark.parametrize("status", [404, 400])
async def test_restart_shortcut_forgets_every_session(serve: Serve, status: int) -> None:
    """server.restart(status) forgets every session at once; they are answered with that status."""
    server = serve()
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            server.restart(unknown_session_status=status)
            refused = await wire.post(PING)
    assert (refused.status_code, refused.json()) == (status, NOT_FOUND)
    with pytest.raises(ValueError, match="404 or 400"):
        server.restart(unknown_session_status=500)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    "fault",
    [faults.LoseSession(), faults.Restart(), faults.Restart(unknown_session_status=400), faults.ExpireSession(1)],
    ids=["lose", "restart-404", "restart-400", "expire"],
)
async def test_sdk_client_does_not_start_a_new_session(serve: Serve, framing: str, fault: faults.Fault) -> None:
    """After a lost session the SDK raises MCPError -32600 'Session not found…' on every call; it never reconnects."""
    server = tools(serve(response_mode=framing), "create")
    server.fail_next_call(fault, tool="create")
    outcomes: list[object] = []
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            for _ in range(2):
                try:
                    outcomes.append((await client.call_tool("create", {})).is_error)
                except MCPError as error:
                    outcomes.append((error.code, error.message))
    expired = isinstance(fault, faults.ExpireSession)
    refused = (-32600, GONE)
    # ExpireSession(1): the call and the tools/list the SDK sends after a tool's first call are served.
    assert outcomes == ([False, refused] if expired else [refused, refused])
    assert len(server.journal.requests("initialize")) == 1
    unknown = 400 if fault == faults.Restart(unknown_session_status=400) else 404
    assert (server.journal.last.http_method, server.journal.last.status) == ("DELETE", unknown)
    assert server.executions("create") == expired


async def test_sdk_client_call_fails_when_the_session_expires_right_after_it(serve: Serve) -> None:
    """ExpireSession(0): the call runs and is answered, but the SDK's own tools/list after it meets a 404."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.ExpireSession(after_requests=0), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("create", {})
    assert (caught.value.code, caught.value.message) == (-32600, GONE)
    assert [(r.rpc_method, r.status) for r in server.journal.requests(http_method="POST")][-2:] == [
        ("tools/call", 200),
        ("tools/list", 404),
    ]
    assert server.executions("create") == 1
