"""`mcp-testkit record` and `mcp-testkit verify`: the command-line faces of recording and verifying."""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from typing import Any

from mcp_testkit.upstream import MAX_PROCESSES, START_TIMEOUT_S, add_upstream_bounds, add_upstream_options

__all__ = ["add_parsers", "add_serve_options", "run_record", "run_verify"]


def add_serve_options(serve: argparse.ArgumentParser) -> None:
    """`serve --cassette FILE [--match MODE]`: serve a replay instead of a scripted server."""
    from mcp_testkit.cassettes._matching import MATCH_MODES

    replay = serve.add_argument_group("replay", "serve a server recorded by mcp-testkit record")
    replay.add_argument("--cassette", metavar="FILE.json", help="replay a server recorded by mcp-testkit record")
    replay.add_argument(
        "--match",
        choices=MATCH_MODES,
        default=None,
        help="how a call finds its recorded answer: exact tool and arguments (default), in_order (the recorded "
        "calls one after another), by_tool (the tool's recorded answers in turn, whatever the arguments)",
    )


def add_parsers(commands: Any) -> None:
    """Register `record` and `verify` on the CLI's subcommands."""
    record = commands.add_parser(
        "record",
        help="record a live MCP server through a proxy on 127.0.0.1 into a cassette",
        description="Runs a recording proxy on 127.0.0.1 in front of a live server and prints one line, "
        "'recording <upstream> at http://127.0.0.1:PORT/mcp'; point a client at that URL as you would at the "
        "server. On SIGINT or SIGTERM it writes the cassette: credentials in headers replaced by their names, "
        "--redact matches and known token shapes in bodies by <redacted:N> placeholders. A cassette that "
        "still holds a secret is refused (exit status 1) and nothing is written.",
    )
    add_upstream_options(record, header_hidden_from="the cassette")
    record.add_argument("--out", required=True, metavar="FILE.json", help="where to write the cassette")
    record.add_argument(
        "--redact", action="append", default=[], metavar="REGEX", help="a regular expression to redact in bodies"
    )
    record.add_argument("--port", type=int, default=0, help="the proxy's port (0: a free one)")
    record.add_argument("--path", default="/mcp", help="the proxy's endpoint path")
    record.add_argument(
        "--scrub",
        metavar="MODULE:FUNCTION",
        help="a function called with each JSON-RPC message before it is written, returning the message to write "
        "(for data no --redact pattern can know, e.g. an environment dump); the current folder is importable",
    )
    record.add_argument(
        "--max-processes",
        type=int,
        default=MAX_PROCESSES,
        metavar="N",
        help="with --upstream-command: at most N server processes at once, one per session (default %(default)s); a "
        "session over it gets a 503",
    )
    record.add_argument(
        "--start-timeout",
        type=float,
        default=START_TIMEOUT_S,
        metavar="SECONDS",
        help="with --upstream-command: how long the command may take to answer a first initialize before the "
        "recording starts (default %(default)g); one that exits or does not answer is exit status 2, with its "
        "stderr's last line",
    )
    add_upstream_bounds(record)
    verify = commands.add_parser(
        "verify",
        help="check that a live server still matches a cassette; exit status 1 on a breaking change",
        description="Sends a cassette's requests to the live server again (read-only calls only) and prints "
        "what changed: tools added or removed, schema and annotation changes, different answers. Exits 1 on "
        "a breaking change, 0 otherwise, 2 when the cassette or the server cannot be read.",
    )
    verify.add_argument("cassette", metavar="CASSETTE.json", help="a cassette written by mcp-testkit record")
    add_upstream_options(verify, header_hidden_from="the cassette")
    verify.add_argument(
        "--scrub",
        metavar="MODULE:FUNCTION",
        help="the --scrub the cassette was recorded with: live answers go through it before they are compared",
    )


def _scrub_hook(spec: str) -> Any:
    """The function `module:function` names (the current folder importable, as with `python -m`)."""
    import os
    import pkgutil

    if ":" not in spec:
        raise ValueError(f"--scrub {spec!r} is not module:function (e.g. scrubbing:drop_env)")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        hook = pkgutil.resolve_name(spec)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"--scrub {spec!r} cannot be loaded: {exc}") from None
    if not callable(hook):
        raise ValueError(f"--scrub {spec!r} is not a function")
    return hook


def _fail(command: str, message: str, status: int = 2) -> int:
    print(f"mcp-testkit {command}: {message}", file=sys.stderr, flush=True)
    return status


def run_record(args: argparse.Namespace) -> int:
    from mcp_testkit._wire.terminal import printable  # what the upstream wrote on stderr, escaped
    from mcp_testkit.cassettes._format import CassetteError
    from mcp_testkit.cassettes._record import Recording
    from mcp_testkit.upstream import UpstreamError, headers_from

    try:
        headers = headers_from(args.header)
        command = shlex.split(args.upstream_command) if args.upstream_command is not None else None
        recording = Recording(
            args.upstream, out=args.out, command=command, headers=headers, redact=args.redact, port=args.port,
            path=args.path, max_processes=args.max_processes, start_timeout_s=args.start_timeout,
            upstream_stderr=sys.stderr if args.upstream_stderr else None,
            scrub=_scrub_hook(args.scrub) if args.scrub is not None else None, max_upstream_head=args.max_upstream_head,
            max_upstream_headers=args.max_upstream_headers, max_upstream_body=args.max_upstream_body,
        )  # fmt: skip
    except (ValueError, CassetteError, UpstreamError) as exc:
        return _fail("record", str(exc))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        recording.start()
    except UpstreamError as exc:
        return _fail("record", printable(str(exc)))
    except (OSError, RuntimeError) as exc:
        return _fail("record", f"cannot serve the proxy on 127.0.0.1:{args.port}: {exc}")
    print(f"recording {recording.described} at {recording.url}", flush=True)
    stop.wait()
    try:
        written = recording.stop()
    except CassetteError as exc:
        return _fail("record", str(exc), status=1)
    print(f"mcp-testkit record: wrote {len(written)} exchanges to {args.out}", file=sys.stderr, flush=True)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from mcp_testkit.cassettes._format import CassetteError
    from mcp_testkit.cassettes._verify import verify
    from mcp_testkit.upstream import UpstreamError, headers_from

    try:
        headers = headers_from(args.header)
        upstream = args.upstream if args.upstream is not None else shlex.split(args.upstream_command)
        scrub = _scrub_hook(args.scrub) if args.scrub is not None else None
        shown = sys.stderr if args.upstream_stderr else None
        report = verify(args.cassette, upstream, headers=headers, scrub=scrub, upstream_stderr=shown)
    except (ValueError, CassetteError, UpstreamError) as exc:
        from mcp_testkit._wire.terminal import printable  # what a file or a server said, escaped

        return _fail("verify", printable(str(exc)))
    print(report.format(), flush=True)
    return report.exit_status
