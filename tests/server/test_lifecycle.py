"""Serving and stopping: a thread, a task (asyncio and trio), in-process; reset(); nothing left behind."""

from __future__ import annotations

import re
import socket
import threading

import anyio
import anyio.lowlevel
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults

from ._support import ACCEPT, LATEST, LIMIT_S, Wire, asgi_client, rpc

INIT = rpc("initialize", {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
HEADERS = {"accept": ACCEPT, "content-type": "application/json"}


def _refuses(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:port any more."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=LIMIT_S).close()
    except ConnectionRefusedError:
        return True
    return False


def _server_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("mcp-testkit-server")}


def test_with_serves_on_loopback_and_leaves_nothing_behind() -> None:
    """`with server:` serves on 127.0.0.1 at a free port; afterwards its thread is gone and the port refuses."""
    before = set(threading.enumerate())
    server = TestMcpServer("life")
    server.tool("t", returns="ok")
    with server:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", server.url)
        assert server.started
        port = server.port
        assert len(_server_threads()) == 1
        with httpx2.Client(timeout=LIMIT_S) as client:
            response = client.post(server.url, json=INIT, headers=HEADERS)
        assert response.status_code == 200
    assert not server.started
    assert set(threading.enumerate()) <= before
    assert _refuses(port)
    assert server.journal.last.rpc_method == "initialize"


def test_stop_ends_an_open_get_stream() -> None:
    """Stopping a server with a GET stream open ends the stream and still joins the thread."""
    before = set(threading.enumerate())
    server = TestMcpServer(get_stream=True)
    server.start()
    port = server.port
    with httpx2.Client(base_url=server.base_url, timeout=LIMIT_S) as client:
        session_id = client.post("/mcp", json=INIT, headers=HEADERS).headers["mcp-session-id"]
        headers = {"accept": "text/event-stream", "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
        with client.stream("GET", "/mcp", headers=headers) as stream:
            assert stream.status_code == 200
            server.stop()
            assert stream.read() == b""
    assert set(threading.enumerate()) <= before
    assert _refuses(port)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_async_with_serves_and_stops(anyio_backend: str) -> None:
    """`async with server:` serves (a task on asyncio, a thread on trio) and afterwards the port refuses."""
    server = TestMcpServer("task")
    server.tool("t", returns="ok")
    with anyio.fail_after(LIMIT_S):
        async with server:
            port = server.port
            async with httpx2.AsyncClient(base_url=server.base_url) as client:
                wire = Wire(client, server)
                await wire.initialize()
                assert (await wire.call("t"))["content"][0]["text"] == "ok"
            assert len(_server_threads()) == (1 if anyio_backend == "trio" else 0)
    assert not server.started
    assert _server_threads() == set()
    assert _refuses(port)


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_in_process_needs_no_start(anyio_backend: str) -> None:
    """asgi_app serves in-process through httpx2.ASGITransport without starting anything."""
    server = TestMcpServer()
    server.tool("t", returns="ok")
    with anyio.fail_after(LIMIT_S):
        async with asgi_client(server) as client:
            wire = Wire(client, server)
            await wire.initialize()
            assert (await wire.call("t"))["content"][0]["text"] == "ok"
    assert not server.started
    with pytest.raises(RuntimeError, match="not started"):
        _ = server.url


def test_starting_twice_is_an_error() -> None:
    """start() on a started server raises naming its URL; stop() twice is harmless."""
    with TestMcpServer("twice") as server, pytest.raises(RuntimeError, match=r"already started at http://127\.0\.0\.1"):
        server.start()
    server.stop()


def test_a_fixed_port_in_use_fails_to_start() -> None:
    """A port that is taken makes start() fail with OSError, leaving the server stopped."""
    with TestMcpServer() as first:
        second = TestMcpServer(port=first.port)
        with pytest.raises(OSError, match="in use"):
            second.start()
        assert not second.started


@pytest.mark.anyio
async def test_reset_restores_the_constructed_state() -> None:
    """reset() drops added tools, headers, sessions, journal, errors and ledger, and keeps serving on its port."""
    server = TestMcpServer("r", page_size=1)
    with anyio.fail_after(LIMIT_S):
        async with server:
            port = server.port
            server.tool("a", answers=["one", "two"])
            server.tool("boom", returns=lambda arguments: 1 / 0)
            async with httpx2.AsyncClient(base_url=server.base_url) as client:
                wire = Wire(client, server)
                await wire.initialize()
                await wire.call("a")
                await wire.call("boom", request_id=2)
                server.require_header("Authorization", "Bearer x")
                old_session = wire.session_id
                server.reset()
                assert (server.tools, server.errors, server.executions(), len(server.journal)) == ({}, [], 0, 0)
                assert len(server.sessions) == 0
                server.check()
                stale = await wire.post(rpc("ping"))
                assert stale.status_code == 404  # the header requirement went too, only the session is unknown
                assert server.journal.last.session_id == old_session
                server.tool("a", answers=["one", "two"])
                wire.session_id = None
                await wire.initialize()
                assert (await wire.call("a"))["content"][0]["text"] == "one"  # answers start over
                assert len((await wire.request("tools/list"))["result"]["tools"]) == 1  # page_size kept
                assert server.port == port


@pytest.mark.parametrize("preset", ["demo", "conformance"])
def test_reset_restores_preset_tools(preset: str) -> None:
    """A preset's tools (and answers) come back after reset(), even after being removed or replaced."""
    server = TestMcpServer(preset=preset)
    constructed = {name: tool.definition for name, tool in server.tools.items()}
    first = next(iter(constructed))
    server.remove_tool(first)
    server.tool("extra")
    server.reset()
    assert {name: tool.definition for name, tool in server.tools.items()} == constructed


@pytest.mark.anyio
async def test_reset_ends_an_open_get_stream() -> None:
    """reset() ends the GET streams of the sessions it forgets."""
    server = TestMcpServer(get_stream=True)
    with anyio.fail_after(LIMIT_S):
        async with server, httpx2.AsyncClient(base_url=server.base_url) as client:
            wire = Wire(client, server)
            await wire.initialize()
            headers = wire.headers(accept="text/event-stream")
            async with client.stream("GET", "/mcp", headers=headers) as stream:
                assert stream.status_code == 200
                server.reset()
                assert await stream.aread() == b""


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"page_size": 0}, "page_size"),
        ({"response_mode": "xml"}, "response_mode"),
        ({"path": "mcp"}, "path"),
        ({"preset": "nope"}, "unknown preset 'nope'; choose one of conformance, demo"),
    ],
)
def test_bad_settings_are_refused(options: dict[str, object], message: str) -> None:
    """The constructor refuses a bad page_size, response_mode, path or preset, naming it."""
    with pytest.raises(ValueError, match=message):
        TestMcpServer(**options)  # type: ignore[arg-type]


def test_repr_names_the_server_and_where_it_is() -> None:
    """repr shows name, URL (or 'not started') and the number of tools."""
    server = TestMcpServer("r", preset="demo")
    assert repr(server) == "<TestMcpServer 'r' not started tools=5>"
    with server:
        assert repr(server) == f"<TestMcpServer 'r' {server.url} tools=5>"


@pytest.mark.anyio
@pytest.mark.parametrize("fault", [faults.Delay(30), faults.LateAnswer(30)], ids=["Delay", "LateAnswer"])
async def test_stopping_with_a_delayed_request_in_flight_is_quiet(
    fault: faults.Fault, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Stopping a server whose request waits on a Delay drops that connection at once, logging nothing."""
    server = TestMcpServer("quiet")
    server.tool("slow", returns="late")
    server.start()
    try:
        async with httpx2.AsyncClient(timeout=LIMIT_S) as client:
            session_id = (await client.post(server.url, json=INIT, headers=HEADERS)).headers["mcp-session-id"]
            server.inject(fault, tool="slow")
            outcome: list[BaseException] = []

            async def call() -> None:
                headers = {**HEADERS, "mcp-session-id": session_id, "mcp-protocol-version": LATEST}
                try:
                    await client.post(server.url, json=rpc("tools/call", {"name": "slow"}, 2), headers=headers)
                except httpx2.TransportError as exc:
                    outcome.append(exc)

            with anyio.fail_after(LIMIT_S):
                async with anyio.create_task_group() as group:
                    group.start_soon(call)
                    while server.pending_faults() or (fault == faults.LateAnswer(30) and not server.executions()):
                        await anyio.lowlevel.checkpoint()
                    await anyio.to_thread.run_sync(server.stop)
    finally:
        server.stop()
    assert [type(error).__name__ for error in outcome] == ["RemoteProtocolError"]
    assert server.calls("slow")[0].error == "the server stopped before answering"
    printed = capfd.readouterr().err + caplog.text
    assert [word for word in ("Cancel", "Traceback", "Exception in ASGI", "graceful") if word in printed] == []
