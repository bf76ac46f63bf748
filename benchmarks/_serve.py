"""Serve one benchmark app with uvicorn in its own process (started by ``bench_server.py``).

Usage: ``python benchmarks/_serve.py {ceiling,sdk,testkit,offerings,replay,proxy} {json,sse}``.  The process binds
127.0.0.1 on a free port, prints ``READY <port> <where mcp_testkit came from>`` once uvicorn
accepts connections (so a run against another checkout can show it measured that one), and exits
when its standard input reaches end of file, so that it never outlives the benchmark that
started it, even if that one is killed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn

if TYPE_CHECKING:
    from collections.abc import Callable

ECHO_TOOL = "echo"
ECHO_TEXT = "bench-echo-7f3a"
"""What bench_server.py sends the echo tool: the replay's cassette holds this call, recorded last."""


def ceiling_app(framing: str) -> Any:
    """A bare Starlette JSON echo: the least work this stack can do for one request.

    It answers the same bytes as TestMcpServer's JSON answer, so that the two differ only in the work done: the
    same body (an echo result without `isError`) and the request's `Mcp-Session-Id` echoed back (bench_server.py
    sends it one, as it sends TestMcpServer its session's), as a server keeping sessions must.
    """
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def echo(request: Request) -> JSONResponse:
        message = await request.json()
        text = message["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}]}
        session_id = request.headers.get("mcp-session-id")
        headers = {"mcp-session-id": session_id} if session_id else None
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result}, headers=headers)

    return Starlette(routes=[Route("/mcp", echo, methods=["POST"])])


def sdk_app(framing: str) -> Any:
    """The official SDK server; its Starlette app runs the session manager in its lifespan."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def echo(text: str) -> str:
        """Returns its input."""
        return text

    # host="127.0.0.1" turns on DNS-rebinding protection that accepts Host 127.0.0.1:*.
    return server.streamable_http_app(json_response=framing == "json", host="127.0.0.1")


def testkit_server(framing: str) -> Any:
    """The fake server under test, with the same one-tool catalogue."""
    from mcp_testkit import TestMcpServer

    # MCP_TESTKIT_BENCH_OPTIONS: JSON keywords for the server, to measure a setting (e.g. journal_limit).
    options = json.loads(os.environ.get("MCP_TESTKIT_BENCH_OPTIONS", "{}"))
    server = TestMcpServer(name="bench", response_mode=framing, **options)
    server.tool(ECHO_TOOL, returns=lambda arguments: arguments["text"])
    return server


def testkit_app(framing: str) -> Any:
    return testkit_server(framing).asgi_app


def offerings_app(framing: str) -> Any:
    """The fake server with the echo tool and a small text resource whose text is what the tool echoes
    (``bench_offerings.py`` compares ``resources/read`` of it with ``tools/call``)."""
    server = testkit_server(framing)
    server.resource("file:///bench.txt", text=ECHO_TEXT, mime_type="text/plain")
    return server.asgi_app


REPLAYED_CALLS = 1000


def replay_app(framing: str) -> Any:
    """A replay of a cassette of 1,000 recorded echo calls; the one the benchmark sends is recorded last."""
    from mcp_testkit import TestMcpServer
    from mcp_testkit.cassettes import Cassette, Exchange

    def exchange(seq: int, method: str, params: Any, result: Any) -> Exchange:
        request = {"jsonrpc": "2.0", "id": seq, "method": method, "params": params}
        return Exchange(
            seq, 0.0, 0.0, "http", "handshake", "2025-11-25", request, {"jsonrpc": "2.0", "id": seq, "result": result}
        )

    info = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "bench", "version": "1"},
    }
    echo = {"name": ECHO_TOOL, "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
    exchanges = [exchange(1, "initialize", {}, info), exchange(2, "tools/list", {}, {"tools": [echo]})]
    texts = [f"recorded-{n}" for n in range(REPLAYED_CALLS - 1)] + [ECHO_TEXT]
    for seq, text in enumerate(texts, start=3):
        answer = {"content": [{"type": "text", "text": text}], "isError": False}
        exchanges.append(exchange(seq, "tools/call", {"name": ECHO_TOOL, "arguments": {"text": text}}, answer))
    cassette = Cassette(exchanges, {"transport": "http", "url": "http://bench"}, source="bench.json")
    return TestMcpServer.from_cassette(cassette, response_mode=framing).asgi_app


def _upstream_url(framing: str) -> str:
    """The upstream a proxy row forwards to: MCP_TESTKIT_BENCH_UPSTREAM (a TestMcpServer in a process of its own,
    as `bench_proxy.py` starts it), else a TestMcpServer serving from a thread of this same process."""
    url = os.environ.get("MCP_TESTKIT_BENCH_UPSTREAM")
    if url:
        return url
    upstream = testkit_server(framing)
    upstream.start()
    return upstream.url


def proxy_app(framing: str) -> Any:
    """The recording proxy (the chaos proxy recording, no fault) in front of TestMcpServer."""
    from mcp_testkit.cassettes import Tape
    from mcp_testkit.cassettes._record import TapeRecorder
    from mcp_testkit.proxy import ChaosProxy

    return ChaosProxy(_upstream_url(framing), journal_limit=1, recording=TapeRecorder(Tape())).asgi_app


def chaos_app(framing: str) -> Any:
    """The chaos proxy (no fault, not recording) in front of TestMcpServer."""
    from mcp_testkit.proxy import ChaosProxy

    return ChaosProxy(_upstream_url(framing), journal_limit=1).asgi_app


APPS: dict[str, Callable[[str], Any]] = {
    "ceiling": ceiling_app,
    "sdk": sdk_app,
    "testkit": testkit_app,
    "offerings": offerings_app,
    "replay": replay_app,
    "proxy": proxy_app,
    "chaos": chaos_app,
}


class _ReadyServer(uvicorn.Server):
    """A uvicorn server that announces its port once it really accepts connections."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and sockets:
            import mcp_testkit

            print(f"READY {sockets[0].getsockname()[1]} {Path(mcp_testkit.__file__).parent.parent}", flush=True)


def _exit_with_parent() -> None:
    """Stop gracefully when the parent closes our stdin (or dies); force it if that hangs."""
    sys.stdin.buffer.read()
    os.kill(os.getpid(), signal.SIGTERM)
    timer = threading.Timer(5.0, os._exit, args=(3,))
    timer.daemon = True
    timer.start()


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in APPS or argv[1] not in ("json", "sse"):
        print(f"usage: _serve.py {{{','.join(APPS)}}} {{json,sse}}", file=sys.stderr)
        return 2
    kind, framing = argv
    app = APPS[kind](framing)
    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:
        loop = "asyncio"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(
        app,
        http="httptools",
        loop=loop,
        log_level="warning",
        access_log=False,
        lifespan="on" if kind == "sdk" else "auto",
        timeout_graceful_shutdown=2,
    )
    threading.Thread(target=_exit_with_parent, daemon=True).start()
    # MCP_TESTKIT_BENCH_PROFILE=FILE: profile the server with cProfile and write its stats to FILE on exit.
    profile_to = os.environ.get("MCP_TESTKIT_BENCH_PROFILE")
    if not profile_to:
        _ReadyServer(config).run(sockets=[sock])
        return 0
    import cProfile
    import time

    # By CPU time (user and system), not the wall clock: on a shared machine a write that wakes the process at the
    # other end of the socket is often where the scheduler switches, and the wall clock blames that write for it.
    profiler = cProfile.Profile(time.process_time)
    # uvicorn re-raises the SIGTERM it stopped on once it is done; end this way, so the stats get written.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        profiler.runcall(_ReadyServer(config).run, sockets=[sock])
    finally:
        profiler.dump_stats(profile_to)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
