"""The chaos proxy forwards both eras untouched, only to its upstream, after the Host and Origin checks; an upstream
that is down, slow, garbled or cut off is answered as the fault it is, journaled, and the proxy keeps serving."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import warnings
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
import uvloop
from mcp import Client

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.proxy._http11 import Http11Pool, UpstreamClosed
from mcp_testkit.server import RemoteHostWarning

from ._wire import ACCEPT, INIT, answer, open_session, request

LIMIT_S = 60.0


@pytest.fixture
def fake() -> TestMcpServer:
    server = TestMcpServer("upstream")
    server.tool("add", returns=lambda arguments: str(arguments["a"] + arguments["b"]))
    return server


def test_handshake_era_passes_through_and_is_journaled(fake: TestMcpServer) -> None:
    """An SDK client in the handshake era lists and calls through the proxy; both journals see the same calls."""

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with fake, ChaosProxy(fake.url) as proxy, Client(proxy.url, mode="legacy") as client:
                result = await client.call_tool("add", {"a": 1, "b": 2})
                assert result.content[0].text == "3"  # type: ignore[union-attr]
                assert [r.era for r in proxy.journal.requests("tools/call")] == ["handshake"]
                proxy.journal.assert_called("add", times=1)
                fake.journal.assert_called("add", times=1)
                assert proxy.journal.calls("add")[0].response["result"]["content"][0]["text"] == "3"

    anyio.run(go)


def test_stateless_era_passes_through(fake: TestMcpServer) -> None:
    """A client in auto mode speaks 2026-07-28 to the upstream through the proxy: discover, then stateless calls."""

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with fake, ChaosProxy(fake.url) as proxy, Client(proxy.url) as client:
                await client.call_tool("add", {"a": 2, "b": 2})
                assert proxy.journal.calls("add")[0].era == "stateless"
                assert fake.journal.calls("add")[0].era == "stateless"

    anyio.run(go)


def test_sse_answers_and_get_stream_pass_through() -> None:
    """An SSE answer (with the progress before it) and the GET stream come through as the upstream sent them."""
    server = TestMcpServer("upstream", response_mode="sse", get_stream=True)
    server.tool("add", returns="3")
    with server, ChaosProxy(server.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        response = request(client, proxy.url, session, "tools/call", {"name": "add", "arguments": {}})
        assert response.headers["content-type"].startswith("text/event-stream")
        assert answer(response)["result"]["content"][0]["text"] == "3"
        headers = {"accept": "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        with client.stream("GET", proxy.url, headers=headers) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
        deleted = client.delete(proxy.url, headers=headers)
        assert deleted.status_code == 200
        assert [r.http_method for r in server.journal][-2:] == ["GET", "DELETE"]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 421),
        ({"origin": "http://evil.example"}, 403),
        ({"content-type": "text/plain"}, 415),
    ],
)
def test_rebinding_and_cross_site_posts_never_reach_the_upstream(
    fake: TestMcpServer, headers: dict[str, str], status: int
) -> None:
    """A foreign Host, a foreign Origin or a text/plain POST is refused before anything is forwarded or a credential
    added."""
    with fake, ChaosProxy(fake.url, headers={"Authorization": "Bearer real-token"}) as proxy:
        with httpx2.Client(timeout=LIMIT_S) as client:
            response = client.post(proxy.url, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                                   headers={**ACCEPT, **headers})  # fmt: skip
        assert response.status_code == status
        assert len(fake.journal) == 0
        assert proxy.journal.last.status == status


def test_an_absolute_uri_target_goes_to_the_configured_upstream_only(fake: TestMcpServer) -> None:
    """`POST http://elsewhere/mcp` reaches the configured upstream (or nothing), never the host it names."""
    decoy = socket.socket()
    decoy.bind(("127.0.0.1", 0))
    decoy.listen()
    decoy.settimeout(0.2)
    with fake, ChaosProxy(fake.url) as proxy:
        port = proxy.url.split(":")[2].split("/")[0]
        body = json.dumps(INIT).encode()
        head = (
            f"POST http://127.0.0.1:{decoy.getsockname()[1]}/mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        with socket.create_connection(("127.0.0.1", int(port)), timeout=LIMIT_S) as raw:
            raw.sendall(head + body)
            reply = b""
            while chunk := raw.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 200")
        with pytest.raises(TimeoutError):
            decoy.accept()
        assert [r.rpc_method for r in fake.journal] == ["initialize"]
    decoy.close()


def test_an_upstream_that_is_down_gets_a_502_and_the_proxy_keeps_serving() -> None:
    """Nothing listens upstream: a 502 with a -32603 JSON-RPC error naming it, journaled; the next request too."""
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{free.getsockname()[1]}/mcp"
    free.close()
    with ChaosProxy(url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        for _ in range(2):
            response = client.post(proxy.url, json=INIT, headers=ACCEPT)
            assert response.status_code == 502
            error = response.json()["error"]
            assert error["code"] == -32603
            assert "did not answer" in error["message"]
            assert url in error["message"]
            assert response.json()["id"] == 0
        assert [r.status for r in proxy.journal] == [502, 502]


def test_a_slow_upstream_gets_a_504() -> None:
    """An upstream that does not begin its answer within timeout_s: the client gets 504 and a JSON-RPC error."""
    slow = TestMcpServer("slow")
    slow.inject(faults.Delay(30.0), method="initialize")
    with slow, ChaosProxy(slow.url, timeout_s=0.5) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        response = client.post(proxy.url, json=INIT, headers=ACCEPT)
        assert response.status_code == 504
        assert response.json()["error"]["code"] == -32603
        assert "within 0.5 s" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "fault",
    [
        faults.HttpStatus(200, body=b"this is not json", headers={"content-type": "application/json"}),
        faults.TruncateBody(),
    ],
)
def test_a_garbled_or_cut_answer_gets_a_502(fault: faults.Fault) -> None:
    """An upstream answering garbage as JSON, or half a JSON body: 502 with a JSON-RPC error, not the garbage."""
    bad = TestMcpServer("bad")
    bad.inject(fault, method="initialize")
    with bad, ChaosProxy(bad.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        response = client.post(proxy.url, json=INIT, headers=ACCEPT)
        assert response.status_code == 502
        assert response.json()["error"]["code"] == -32603
        assert client.post(proxy.url, json=INIT, headers=ACCEPT).status_code == 200  # and it keeps serving


def test_a_dropped_upstream_connection_is_a_502() -> None:
    """An upstream that closes the connection without answering: 502, and the proxy keeps serving."""
    bad = TestMcpServer("bad")
    bad.inject(faults.Drop(), method="initialize")
    with bad, ChaosProxy(bad.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        assert client.post(proxy.url, json=INIT, headers=ACCEPT).status_code == 502
        assert client.post(proxy.url, json=INIT, headers=ACCEPT).status_code == 200


def test_a_remote_host_warns() -> None:
    """A proxy bound to an address other hosts reach warns, as TestMcpServer does; allow_remote silences it."""
    with pytest.warns(RemoteHostWarning):
        ChaosProxy("http://127.0.0.1:1/mcp", host="0.0.0.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ChaosProxy("http://127.0.0.1:1/mcp", host="0.0.0.0", allow_remote=True)


def test_exactly_one_upstream() -> None:
    """Neither or both of upstream and upstream_command is a ValueError saying so."""
    with pytest.raises(ValueError, match="exactly one upstream"):
        ChaosProxy()
    with pytest.raises(ValueError, match="exactly one upstream"):
        ChaosProxy("http://127.0.0.1:1/mcp", upstream_command=["python"])
    with pytest.raises(ValueError, match="http:// or https://"):
        ChaosProxy("ftp://example.com/mcp")


def _awaiting(task: asyncio.Task[Any]) -> list[str]:
    """The names of the coroutines `task` is suspended in, outermost first."""
    names, coroutine = [], task.get_coro()
    while coroutine is not None and hasattr(coroutine, "cr_code"):
        names.append(coroutine.cr_code.co_name)
        coroutine = coroutine.cr_await
    return names


@pytest.mark.parametrize("loop_factory", [asyncio.new_event_loop, uvloop.new_event_loop], ids=["asyncio", "uvloop"])
def test_a_pool_closed_with_requests_under_way_leaves_no_transport_open(
    fake: TestMcpServer, loop_factory: Callable[[], asyncio.AbstractEventLoop]
) -> None:
    """The proxy stops while a request is connecting upstream (its DELETEs of lost sessions, say): closing the pool
    closes every connection, the one being made included, before the loop closes; none opens after it."""
    headers = [(name.encode(), value.encode()) for name, value in ACCEPT.items()]
    body = json.dumps(INIT).encode()

    async def main() -> None:
        pool = Http11Pool(fake.url)
        first = await pool.request("POST", headers, body, LIMIT_S)
        await first.read()
        await first.aclose()  # its connection is idle in the pool
        await pool.request("POST", headers, body, LIMIT_S)  # takes that connection, its answer left unread
        late = asyncio.ensure_future(pool.request("POST", headers, body))
        while "_connect" not in _awaiting(late):  # noqa: ASYNC110 (no event to wait for: the pool's own state)
            await asyncio.sleep(0)  # until it is under way: a new connection being made
        await pool.aclose()
        with pytest.raises(UpstreamClosed):
            await late
        seen = len(fake.journal)
        with pytest.raises(UpstreamClosed, match="stopping"):
            await pool.request("POST", headers, body, LIMIT_S)
        assert len(fake.journal) == seen

    with fake, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        loop = loop_factory()
        try:
            loop.run_until_complete(asyncio.wait_for(main(), LIMIT_S))
        finally:
            loop.close()  # uvloop refuses (EBUSY) while a transport is open
        del loop
        gc.collect()
    assert [str(warning.message) for warning in caught if issubclass(warning.category, ResourceWarning)] == []
