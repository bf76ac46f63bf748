"""A session the proxy's client can no longer use is ended upstream too: the proxy DELETEs it there, as the client
would have, when a fault loses it, and when the proxy stops with it still open. What the upstream saw is read from
its own journal, over real sockets."""

from __future__ import annotations

from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.cassettes import Cassette, record
from mcp_testkit.proxy import ChaosProxy

from ._wire import ACCEPT, INIT, open_session, request

LIMIT_S = 60.0
CALL = {"name": "add", "arguments": {}}


@pytest.fixture
def fake() -> TestMcpServer:
    server = TestMcpServer("upstream")
    server.tool("add", returns="add ran")
    return server


def _deleted(server: TestMcpServer) -> list[str | None]:
    """The sessions the upstream was sent a DELETE for, in order."""
    return [r.session_id for r in server.journal if r.http_method == "DELETE"]


def _wait_deleted(server: TestMcpServer, count: int) -> list[str | None]:
    server.journal.wait_for(lambda journal: len(_deleted(server)) >= count, timeout_s=LIMIT_S)
    return _deleted(server)


def test_a_session_a_fault_loses_is_deleted_upstream(fake: TestMcpServer) -> None:
    """LoseSession: the client gets 404, and the upstream gets a DELETE of that session, once."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.LoseSession(), method="tools/call")
        assert request(client, proxy.url, session, "tools/call", CALL).status_code == 404
        assert _wait_deleted(fake, 1) == [session]
        ended = next(r for r in fake.journal if r.http_method == "DELETE")
        assert ended.status == 200  # the upstream knew the session: it really ended there
        assert request(client, proxy.url, session, "tools/call", CALL, 2).status_code == 404
        assert fake.journal.requests("tools/call") == []
    assert _deleted(fake) == [session]  # not DELETEd again when the proxy stops


def test_a_session_lost_at_initialize_is_deleted_upstream(fake: TestMcpServer) -> None:
    """LoseSession on initialize: the session the upstream opened is lost at once, so it is DELETEd there."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        proxy.inject(faults.LoseSession(), method="initialize")
        opened = client.post(proxy.url, json=INIT, headers=ACCEPT)
        assert opened.status_code == 200
        assert _wait_deleted(fake, 1) == [opened.headers["mcp-session-id"]]


def test_an_expired_session_is_deleted_upstream_when_it_runs_out(fake: TestMcpServer) -> None:
    """ExpireSession(after_requests=1): nothing is DELETEd while the session still serves, then it is."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.ExpireSession(after_requests=1), method="tools/call")
        assert request(client, proxy.url, session, "tools/call", CALL, 1).status_code == 200
        assert _deleted(fake) == []
        assert request(client, proxy.url, session, "tools/call", CALL, 2).status_code == 200
        assert request(client, proxy.url, session, "tools/call", CALL, 3).status_code == 404
        assert _wait_deleted(fake, 1) == [session]


def test_restart_deletes_every_session_upstream(fake: TestMcpServer) -> None:
    """Restart: every session seen through the proxy is DELETEd upstream, each once."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        first, second = open_session(client, proxy.url), open_session(client, proxy.url)
        proxy.inject(faults.Restart(), method="tools/call")
        assert request(client, proxy.url, first, "tools/call", CALL).status_code == 404
        assert sorted(str(s) for s in _wait_deleted(fake, 2)) == sorted([first, second])
    assert len(_deleted(fake)) == 2


def test_stopping_the_proxy_deletes_the_sessions_still_open(fake: TestMcpServer) -> None:
    """close(): a session the client left open is DELETEd upstream; one the client DELETEd itself is not again."""
    with fake, httpx2.Client(timeout=LIMIT_S) as client:
        with ChaosProxy(fake.url) as proxy:
            left_open, ended = open_session(client, proxy.url), open_session(client, proxy.url)
            headers = {**ACCEPT, "mcp-session-id": ended, "mcp-protocol-version": "2025-06-18"}
            assert client.delete(proxy.url, headers=headers).status_code == 200
            assert _deleted(fake) == [ended]
        assert _deleted(fake) == [ended, left_open]
        assert fake.journal.last.status == 200


@pytest.mark.anyio
async def test_stopping_in_front_of_an_upstream_gone_still_stops(fake: TestMcpServer) -> None:
    """The DELETE at close is best effort: with the upstream gone, the proxy stops all the same."""
    async with httpx2.AsyncClient(timeout=LIMIT_S) as client:
        await anyio.to_thread.run_sync(fake.start)
        proxy = ChaosProxy(fake.url, timeout_s=2.0)
        await anyio.to_thread.run_sync(proxy.start)
        try:
            opened = await client.post(proxy.url, json=INIT, headers=ACCEPT)
            assert opened.status_code == 200
        finally:
            await anyio.to_thread.run_sync(fake.stop)
            with anyio.fail_after(LIMIT_S):  # guards the test; the proxy's own bound is END_TIMEOUT_S
                await anyio.to_thread.run_sync(proxy.stop)
    assert not proxy.started
    assert _deleted(fake) == []  # it went nowhere: the upstream had stopped


@pytest.mark.anyio
async def test_the_proxys_own_delete_is_not_recorded(fake: TestMcpServer, tmp_path: Path) -> None:
    """Recording: a session left open is ended upstream at stop, and the cassette holds only what the client did."""
    out = tmp_path / "tape.json"
    async with fake:
        async with record(fake.url, out=out) as url, httpx2.AsyncClient(timeout=LIMIT_S) as client:
            opened = await client.post(url, json=INIT, headers=ACCEPT)
            assert opened.status_code == 200
        assert [r.session_id for r in fake.journal if r.http_method == "DELETE"] == [opened.headers["mcp-session-id"]]
    cassette = Cassette.load(out)
    assert [(e.http.method if e.http else None, e.request.get("method")) for e in cassette.exchanges] == [
        ("POST", "initialize")
    ]
