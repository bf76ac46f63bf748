"""The `mcp-testkit` command: `serve` runs a TestMcpServer until Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

__all__ = ["main"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-testkit", description="Test MCP client bridges.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run a scripted MCP server on loopback until Ctrl-C")
    serve.add_argument("--preset", choices=["demo", "conformance"], help="a built-in catalogue")
    serve.add_argument("--name", default=None, help="the server's name (default: the preset's, or 'test')")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (loopback unless --allow-remote)")
    serve.add_argument("--port", type=int, default=0, help="port to bind (0: a free one)")
    serve.add_argument("--path", default="/mcp", help="the endpoint path")
    serve.add_argument("--page-size", type=int, default=None, help="tools per tools/list page")
    serve.add_argument("--response-mode", choices=["json", "sse"], default=None, help="answer framing")
    serve.add_argument("--get-stream", action="store_true", help="offer a GET SSE stream per session")
    serve.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    return parser


def _serve(args: argparse.Namespace) -> int:
    from mcp_testkit.server import TestMcpServer

    if args.host not in _LOOPBACK and not args.allow_remote:
        print(
            f"mcp-testkit serve: refusing to bind {args.host!r}: the fake server executes scripted tools for "
            "anyone who reaches it. Use a loopback address, or add --allow-remote if you mean it.",
            file=sys.stderr,
        )
        return 2
    if args.host not in _LOOPBACK:
        print(
            f"warning: serving on {args.host}: any host that reaches this address can call the tools, "
            "read nothing secret but drive the journal; Host/Origin checks now accept that name.",
            file=sys.stderr,
        )
    options = {} if args.response_mode is None else {"response_mode": args.response_mode}
    server = TestMcpServer(
        args.name or args.preset or "test",
        preset=args.preset,
        host=args.host,
        port=args.port,
        path=args.path,
        page_size=args.page_size,
        get_stream=args.get_stream,
        allowed_hosts=(args.host,),
        **options,
    )
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    with server:
        tools = ", ".join(server.tools) or "(none)"
        print(f"mcp-testkit: serving {server.name!r} at {server.url} (tools: {tools}); Ctrl-C stops", flush=True)
        stop.wait()
    print("mcp-testkit: stopped", file=sys.stderr, flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    return 2  # pragma: no cover - argparse requires a command
