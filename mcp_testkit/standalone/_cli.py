"""`mcp-testkit serve`: a scripted MCP server (Streamable HTTP on loopback, or stdio) run until stopped, scripted by a
scenario file, a preset or a cassette's replay, with the admin API (`--admin`) and a journal file (`--journal`)."""

from __future__ import annotations

import argparse
import secrets
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from mcp_testkit._wire.strict_json import dumps as strict_dumps
from mcp_testkit._wire.wire_models import warm

if TYPE_CHECKING:
    from mcp_testkit.journal import Journal, Record
    from mcp_testkit.scenario import Scenario
    from mcp_testkit.server import TestMcpServer

__all__ = ["SERVE_JOURNAL_LIMIT", "SERVE_SESSION_LIMIT", "add_parser", "run"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")
SERVE_JOURNAL_LIMIT = 10_000
"""`serve` keeps this many journal records by default (about 20 MB); --journal-limit 0 keeps every one."""
SERVE_SESSION_LIMIT = 1_000
"""`serve` keeps this many sessions by default (about 5 MB); --session-limit 0 keeps every one."""


def _tools(count: int) -> str:
    return f"{count} tool" if count == 1 else f"{count} tools"


def _positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be a positive number, not {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _count(text: str) -> int | None:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more, not {text}")
    return value or None


class _Refused(Exception):
    """A command line that cannot be served; the message says why and what to do."""


def _port(text: str) -> int:
    """An argparse type: a TCP port number, 0 meaning any free one."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: give 1 to 65535, or 0 for any free port")
    return port


def add_parser(commands: Any) -> argparse.ArgumentParser:
    """Register `serve` on the CLI's subcommands; the parser, for the options other packages add to it (a
    cassette's replay)."""
    serve: argparse.ArgumentParser = commands.add_parser(
        "serve",
        help="run a scripted MCP server (Streamable HTTP on loopback, or stdio) until Ctrl-C or SIGTERM",
        description="Run a scripted MCP server until SIGINT or SIGTERM (over stdio: until stdin ends). "
        "It prints one line with its URL on start (over stdio, on stderr).",
    )
    serve.add_argument("--scenario", metavar="FILE", help="a .py file defining scenario(server), or a .json scenario")
    serve.add_argument("--preset", choices=["demo", "conformance"], help="a built-in catalogue")
    serve.add_argument("--name", default=None, help="the server's name (default: the scenario's, the preset's, 'test')")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (loopback unless --allow-remote)")
    serve.add_argument("--port", type=_port, default=0, help="port to bind (0: a free one)")
    serve.add_argument("--path", default="/mcp", help="the endpoint path")
    serve.add_argument("--page-size", type=int, default=None, metavar="N", help="tools per tools/list page")
    serve.add_argument("--response-mode", choices=["json", "sse"], default=None, help="answer framing")
    serve.add_argument("--get-stream", action="store_true", help="offer a GET SSE stream per session")
    serve.add_argument(
        "--resumable",
        action="store_true",
        help="keep the events of POST SSE streams for a GET with Last-Event-ID, and prime each stream",
    )
    serve.add_argument("--retry-ms", type=int, default=None, metavar="MS", help="the retry: of a priming event")
    serve.add_argument(
        "--era",
        action="append",
        choices=["handshake", "stateless"],
        help="a protocol era to serve (repeatable; default both: the handshake and 2026-07-28)",
    )
    serve.add_argument("--stdio", action="store_true", help="speak newline-delimited JSON-RPC on stdin/stdout")
    serve.add_argument("--journal", metavar="FILE.jsonl", help="append one redacted JSON line per request")
    serve.add_argument("--admin", action="store_true", help="serve the admin API under /_testkit/ (bearer token)")
    serve.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a Host/Origin name to accept besides loopback and --host (repeatable); with a wildcard --host and "
        "--allow-remote, every name is accepted unless this is given",
    )
    limits = serve.add_argument_group("limits", "bounds on what one client can make the server hold or wait for")
    limits.add_argument("--max-body", type=_positive(int), default=None, help="largest body or stdio line (4 MiB)")
    limits.add_argument(
        "--max-headers", type=_positive(int), default=None, help="largest request line and headers, in all (64 KiB)"
    )
    limits.add_argument(
        "--max-header-line", type=_positive(int), default=None, help="largest header or request line (8 KiB)"
    )
    limits.add_argument(
        "--journal-limit",
        type=_count,
        default=SERVE_JOURNAL_LIMIT,
        help=f"keep the newest N journal records; 0: all (default {SERVE_JOURNAL_LIMIT:,}; --journal gets every one)",
    )
    limits.add_argument(
        "--session-limit",
        type=_count,
        default=SERVE_SESSION_LIMIT,
        help=f"keep N sessions, forgetting ended then least recent ones; 0: all (default {SERVE_SESSION_LIMIT:,})",
    )
    limits.add_argument(
        "--session-idle-timeout", type=_positive(float), default=None, help="end sessions idle this many seconds"
    )
    limits.add_argument("--header-timeout", type=_positive(float), default=None, help="seconds for headers (60)")
    limits.add_argument("--body-timeout", type=_positive(float), default=None, help="seconds for a body (60)")
    limits.add_argument("--idle-timeout", type=_positive(float), default=None, help="keep-alive seconds (75)")
    return serve


def run(args: argparse.Namespace) -> int:
    """Serve until stopped; the exit status (2, with one line on stderr, for a command line that cannot be served)."""
    try:
        return _serve(args)
    except _Refused as exc:
        print(f"mcp-testkit serve: {exc}", file=sys.stderr, flush=True)
        return 2


class _JournalFile:
    """Appends one redacted JSON line per finished request to a file, flushed at once so readers see it."""

    def __init__(self, path: str) -> None:
        try:
            self._file: IO[str] = Path(path).open("a", encoding="utf-8")
        except OSError as exc:
            raise _Refused(f"cannot open the journal file {path!r}: {exc.strerror}") from None
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None

    def follow(self, journal: Journal) -> None:
        """Write the records of `journal` from now on (and stop writing those of the one before)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        hidden = journal.writer.hidden_headers
        warm()  # each line carries its record's violations, judged against the wire models

        def write(record: Record) -> None:
            line = strict_dumps(record.to_json(hidden()), default=repr) + "\n"
            with self._lock:
                if not self._file.closed:
                    self._file.write(line)
                    self._file.flush()

        self._unsubscribe = journal.subscribe(write)

    def close(self) -> None:
        with self._lock:
            self._file.close()


def _check_host(args: argparse.Namespace) -> None:
    if args.stdio or args.host in _LOOPBACK:
        return
    if not args.allow_remote:
        raise _Refused(
            f"refusing to bind {args.host!r}: the fake server runs scripted tools for anyone who reaches it "
            "and shows them the journal. Use a loopback address (127.0.0.1, ::1), or add --allow-remote if you mean it."
        )
    admin = " and the admin API (token sent in clear over plain HTTP)" if args.admin else ""
    if args.host in _WILDCARDS and not args.allowed_host:
        accepted = "accept any name (list the names clients use with --allowed-host to check them)"
    else:
        accepted = f"also accept {', '.join(repr(name) for name in (args.host, *args.allowed_host))}"
    print(
        f"mcp-testkit: warning: serving on {args.host}: any host that reaches it can list and call the scripted "
        f"tools{admin}; Host/Origin checks now {accepted}.",
        file=sys.stderr,
        flush=True,
    )


def _allowed_hosts(args: argparse.Namespace) -> tuple[str, ...]:
    """The Host/Origin names to accept besides loopback: --host and --allowed-host, or any with a wildcard bind."""
    if args.allow_remote and args.host in _WILDCARDS and not args.allowed_host:
        return ("*",)  # clients reach a wildcard bind by names the server cannot know
    return (args.host, *args.allowed_host)


def _build(args: argparse.Namespace) -> tuple[TestMcpServer, Scenario | None]:
    from mcp_testkit.scenario import ScenarioError, load_scenario
    from mcp_testkit.server import TestMcpServer

    scenario = None
    options: dict[str, Any] = {}
    if args.scenario is not None:
        try:
            scenario = load_scenario(args.scenario)
        except ScenarioError as exc:
            raise _Refused(str(exc)) from None
        options.update(scenario.options)
    given = {
        "name": args.name,
        "preset": args.preset,
        "page_size": args.page_size,
        "response_mode": args.response_mode,
        "get_stream": args.get_stream or None,
        "resumable": args.resumable or None,
        "retry_s": None if args.retry_ms is None else args.retry_ms / 1000,
        "eras": tuple(args.era) if args.era else None,
    }
    options.update({key: value for key, value in given.items() if value is not None})
    options["journal_limit"] = args.journal_limit
    options["session_limit"] = args.session_limit
    options["session_idle_timeout_s"] = args.session_idle_timeout
    for key in ("max_body", "max_headers", "max_header_line", "header_timeout", "body_timeout", "idle_timeout"):
        if getattr(args, key) is not None:
            options[key if not key.endswith("timeout") else f"{key}_s"] = getattr(args, key)
    where = {"host": args.host, "port": args.port, "path": args.path, "allowed_hosts": _allowed_hosts(args),
             "allow_remote": args.allow_remote}  # fmt: skip
    try:
        if args.cassette is not None:
            if args.preset is not None:
                raise _Refused("--cassette replays a recorded catalogue: it takes no --preset")
            return TestMcpServer.from_cassette(args.cassette, match=args.match or "exact", **where, **options), scenario
        if args.match is not None:
            raise _Refused("--match chooses how a replay matches calls: it needs --cassette")
        options.setdefault("name", options.get("preset") or "test")
        server = TestMcpServer(**where, **options)
    except (TypeError, ValueError) as exc:
        raise _Refused(f"cannot build the server: {exc}") from None
    return server, scenario


def _serve(args: argparse.Namespace) -> int:
    from mcp_testkit.scenario import ScenarioError, check_transport
    from mcp_testkit.standalone._admin import PREFIX

    protocol_out = sys.stdout.buffer
    if args.stdio:
        if args.admin:
            raise _Refused("--admin needs HTTP; over --stdio, script the server with --scenario")
        if args.era and "handshake" not in args.era:
            raise _Refused("--era stateless needs HTTP: over --stdio the server speaks the handshake era only")
        sys.stdout = sys.stderr  # a print() in a scenario must not corrupt the protocol stream
    if args.admin and (args.path == PREFIX or args.path.startswith(PREFIX + "/")):
        raise _Refused(f"--path {args.path!r} is under {PREFIX}/, which the admin API owns; choose another path")
    _check_host(args)
    server, scenario = _build(args)
    if args.stdio and "handshake" not in server.eras:
        if args.cassette is not None:
            raise _Refused(
                f"--cassette {args.cassette}: the recorded server refused initialize, so the replay speaks the "
                "2026-07-28 era only, which needs HTTP: drop --stdio, or give --era handshake to replay it in the "
                "handshake era"
            )
        raise _Refused(
            f"--scenario {args.scenario}: its eras are stateless only, which needs HTTP: over --stdio the server "
            "speaks the handshake era only"
        )
    for note in getattr(server, "notes", ()) if args.cassette is not None else ():
        print(f"mcp-testkit: replay of {args.cassette}: {note}", file=sys.stderr, flush=True)
    journal_file = _JournalFile(args.journal) if args.journal else None

    def prepare(server: TestMcpServer) -> None:
        """Script a fresh state: the scenario, then the journal file on its journal."""
        if scenario is not None:
            scenario.apply(server)
        if journal_file is not None:
            journal_file.follow(server.journal)

    try:
        try:
            prepare(server)
            check_transport(server.pending_faults(), stdio=args.stdio)
        except ScenarioError as exc:
            raise _Refused(str(exc)) from None
        if args.stdio:
            if server.required_headers:
                print("mcp-testkit: warning: required headers mean nothing over stdio; ignored", file=sys.stderr)
            return _serve_stdio(server, args, protocol_out)
        return _serve_http(server, args, prepare)
    finally:
        if journal_file is not None:
            journal_file.close()


def _serve_http(server: TestMcpServer, args: argparse.Namespace, prepare: Callable[[TestMcpServer], None]) -> int:
    from mcp_testkit.standalone._admin import PREFIX, AdminApp

    server.asgi_app.get_stream_hint = "mcp-testkit serve --get-stream"
    token = secrets.token_urlsafe(24) if args.admin else None
    if token is not None:
        # A Starlette Router served in place of the bare MCP app: /_testkit/... goes to the admin routes and never
        # reaches the MCP app or its journal; everything else goes to the MCP app, raw ASGI (see docs/server.md).
        server.asgi_app = AdminApp(server, token, on_reset=prepare)  # type: ignore[assignment]
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        raise _Refused(f"cannot serve on {args.host}:{args.port}: {exc}") from None
    try:
        line = f"mcp-testkit: serving {server.name!r} at {server.url} ({_tools(len(server.tools))})"
        if token is not None:
            line += f"; admin at {server.base_url}{PREFIX} with token {token}"
        if args.journal:
            line += f"; journal to {args.journal}"
        print(line + "; Ctrl-C stops", flush=True)
        stop.wait()
    finally:
        server.stop()
    print("mcp-testkit: stopped", file=sys.stderr, flush=True)
    return 0


def _serve_stdio(server: TestMcpServer, args: argparse.Namespace, protocol_out: BinaryIO) -> int:
    import anyio

    from mcp_testkit.server import serve_stdio

    line = f"mcp-testkit: serving {server.name!r} over stdio ({_tools(len(server.tools))})"
    if args.journal:
        line += f"; journal to {args.journal}"
    print(line + "; close stdin or send SIGTERM to stop", file=sys.stderr, flush=True)
    code = anyio.run(serve_stdio, server, sys.stdin.buffer, protocol_out)
    print(f"mcp-testkit: stopped (exit status {code})", file=sys.stderr, flush=True)
    return code
