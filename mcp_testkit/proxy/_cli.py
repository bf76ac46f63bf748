"""`mcp-testkit proxy`: the chaos proxy from the command line, with faults from a scenario file or the admin API."""

from __future__ import annotations

import argparse
import json
import secrets
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from mcp_testkit.upstream import MAX_PROCESSES, START_TIMEOUT_S, add_upstream_bounds, add_upstream_options

__all__ = ["add_parser", "load_faults", "run"]


def add_parser(commands: Any) -> None:
    """Register `proxy` on the CLI's subcommands."""
    proxy = commands.add_parser(
        "proxy",
        help="run a chaos proxy on 127.0.0.1 in front of a live MCP server, with faults",
        description="Runs a proxy on 127.0.0.1 in front of a live server (Streamable HTTP, or a stdio command) "
        "and prints one line, 'mcp-testkit: proxying <upstream> at http://127.0.0.1:PORT/mcp'; point a client at "
        "that URL. Every request is forwarded and journaled; faults come from --scenario (a JSON file of "
        '{"faults": [...]}, or a .py defining scenario(proxy)) and from the admin API (--admin). Stops on '
        "SIGINT or SIGTERM.",
    )
    add_upstream_options(proxy, header_hidden_from="the journal")
    proxy.add_argument("--scenario", metavar="FILE", help='faults to apply: a .json {"faults": [...]} or a .py file')
    proxy.add_argument("--admin", action="store_true", help="serve the admin API under /_testkit/ (bearer token)")
    proxy.add_argument("--port", type=int, default=0, help="the proxy's port (0: a free one)")
    proxy.add_argument("--path", default="/mcp", help="the proxy's endpoint path")
    proxy.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                       help="how long the upstream may take to begin an answer before the client gets 504")  # fmt: skip
    proxy.add_argument("--max-processes", type=int, default=MAX_PROCESSES, metavar="N",
                       help="with --upstream-command: at most N server processes at once, one per session (default "
                       "%(default)s)")  # fmt: skip
    proxy.add_argument("--start-timeout", type=float, default=START_TIMEOUT_S, metavar="SECONDS",
                       help="with --upstream-command: how long the command may take to answer a first "
                       "initialize before the proxy serves (default %(default)g); one that exits or does not answer "
                       "is exit status 2")  # fmt: skip
    add_upstream_bounds(proxy)


def load_faults(proxy: Any, path: str) -> int:
    """Add the faults of a scenario file to `proxy`; how many. ValueError naming the file and the problem."""
    from mcp_testkit.scenario import ScenarioError, decode, load_scenario, parse_rules

    file = Path(path)
    before = len(proxy.pending_faults())
    try:
        if file.suffix == ".json" and file.is_file():
            data = decode(file.read_bytes(), str(file))
            extra = sorted(set(data) - {"faults", "$schema", "name"}) if isinstance(data, dict) else ["(not an object)"]
            if extra:
                raise ValueError(
                    f'scenario {path}: the proxy takes faults only, {{"faults": [...]}}; it has {extra[0]!r} (tools '
                    "and settings are the upstream's own)"
                )
            for _, rule in parse_rules(data.get("faults", []), stdio=False):
                proxy.add_rule(rule)
        else:
            load_scenario(file).apply(proxy)
    except (ScenarioError, json.JSONDecodeError) as exc:
        raise ValueError(str(exc)) from None
    return len(proxy.pending_faults()) - before


def run(args: argparse.Namespace, admin_app: Any = None) -> int:
    """`mcp-testkit proxy`; `admin_app(proxy, token, on_reset=...)` builds the admin API (the CLI hands it in)."""
    from mcp_testkit.proxy import ChaosProxy
    from mcp_testkit.upstream import UpstreamError, headers_from

    try:
        headers = headers_from(args.header)
        command = shlex.split(args.upstream_command) if args.upstream_command is not None else None
        proxy = ChaosProxy(
            args.upstream, upstream_command=command, headers=headers, port=args.port, path=args.path,
            timeout_s=args.timeout, max_processes=args.max_processes, start_timeout_s=args.start_timeout,
            upstream_stderr=sys.stderr if args.upstream_stderr else None, max_upstream_head=args.max_upstream_head,
            max_upstream_headers=args.max_upstream_headers, max_upstream_body=args.max_upstream_body,
        )  # fmt: skip
        if args.scenario is not None:
            load_faults(proxy, args.scenario)
    except (ValueError, UpstreamError) as exc:
        return _fail(str(exc))
    token = secrets.token_urlsafe(24) if args.admin else None
    app = None
    if token is not None and admin_app is not None:

        def again(proxy: Any) -> None:
            if args.scenario is not None:
                load_faults(proxy, args.scenario)

        app = admin_app(proxy, token, on_reset=again)
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        proxy.start(app)
    except UpstreamError as exc:
        from mcp_testkit._wire.terminal import printable  # what the upstream wrote on stderr, escaped

        return _fail(printable(str(exc)))
    except (OSError, RuntimeError) as exc:
        return _fail(f"cannot serve the proxy on 127.0.0.1:{args.port}: {exc}")
    try:
        line = f"mcp-testkit: proxying {proxy.upstream} at {proxy.url}"
        if token is not None:
            line += f"; admin at {_base(proxy.url, args.path)}/_testkit with token {token}"
        print(line + "; Ctrl-C stops", flush=True)
        stop.wait()
    finally:
        proxy.stop()
    print("mcp-testkit: stopped", file=sys.stderr, flush=True)
    return 0


def _base(url: str, path: str) -> str:
    return url[: -len(path)] if url.endswith(path) else url


def _fail(message: str) -> int:
    print(f"mcp-testkit proxy: {message}", file=sys.stderr, flush=True)
    return 2
