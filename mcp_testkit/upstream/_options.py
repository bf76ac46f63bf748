"""The options that name a live upstream server, shared by `mcp-testkit proxy` and `mcp-testkit record`, and the
reading of their `--header` lines."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence

__all__ = [
    "MAX_PROCESSES",
    "MAX_UPSTREAM_BODY",
    "MAX_UPSTREAM_HEAD",
    "MAX_UPSTREAM_HEADERS",
    "START_TIMEOUT_S",
    "add_upstream_bounds",
    "add_upstream_options",
    "from_env",
    "headers_from",
]

START_TIMEOUT_S = 10.0
"""How long a stdio server's command may take, before a proxy or a recording serves, to start and answer a probing
`initialize` (`--start-timeout`, `start_timeout_s=`)."""
MAX_PROCESSES = 8
"""How many stdio server processes a proxy or a recording runs at once by default (`--max-processes`,
`max_processes=`): one per session of the handshake era (a stdio server takes one `initialize`), one shared by every
2026-07-28 request."""
MAX_UPSTREAM_HEAD = 64 * 1024
"""The most bytes of an HTTP upstream's answer head (status line and headers) a proxy reads (`--max-upstream-head`,
`max_upstream_head=`): as much as `TestMcpServer` takes of a request's head (`max_headers`), 4 times what Node's
parser takes; a server that sends headers without end is cut off there."""
MAX_UPSTREAM_HEADERS = 100
"""The most header lines of an upstream's answer a proxy reads (`--max-upstream-headers`, `max_upstream_headers=`):
as many as Python's `http.client` reads of an answer."""
MAX_UPSTREAM_BODY = 16 * 1024 * 1024
"""The most bytes of one message from an upstream a proxy holds (`--max-upstream-body`, `max_upstream_body=`): a
JSON answer's body, one SSE event, one stdout line of a stdio server. 4 times the 4 MiB a request may have on the
SDK's server and on `TestMcpServer`, so that a real server's large listing or resource passes; a longer one would
cost the proxy several times its size in memory, decoded."""


def add_upstream_bounds(parser: argparse.ArgumentParser) -> None:
    """`--max-upstream-head`, `--max-upstream-headers` and `--max-upstream-body`: the bounds on what the upstream
    sends, the same for `mcp-testkit proxy` and `mcp-testkit record` (which is that proxy)."""
    parser.add_argument("--max-upstream-head", type=int, default=MAX_UPSTREAM_HEAD, metavar="BYTES",
                        help="the most bytes of an upstream answer's status line and headers (default %(default)s); "
                        "past it the client gets 502 and the connection is closed")  # fmt: skip
    parser.add_argument("--max-upstream-headers", type=int, default=MAX_UPSTREAM_HEADERS, metavar="N",
                        help="the most header lines of an upstream answer (default %(default)s)")  # fmt: skip
    parser.add_argument("--max-upstream-body", type=int, default=MAX_UPSTREAM_BODY, metavar="BYTES",
                        help="the most bytes of one upstream message the proxy holds: a JSON answer's body, an SSE "
                        "event, a stdio server's stdout line (default %(default)s)")  # fmt: skip


def add_upstream_options(parser: argparse.ArgumentParser, *, header_hidden_from: str) -> None:
    """`--upstream URL | --upstream-command COMMAND`, one required, and `--header` (repeatable), whose value
    `header_hidden_from` ("the journal", "the cassette") never shows."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--upstream", metavar="URL", help="the live server's Streamable HTTP endpoint")
    where.add_argument(
        "--upstream-command", metavar="COMMAND", help='a stdio server\'s command line, e.g. "python server.py"'
    )
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a header sent to the upstream on every request (repeatable); a value env:VAR is read from "
        f"the environment. Its value never reaches {header_hidden_from}.",
    )
    parser.add_argument(
        "--upstream-stderr",
        action="store_true",
        help="with --upstream-command: pass the server's stderr through to this one as it comes (by default it "
        "is kept off the terminal, and an error about the server quotes the line that says why)",
    )


def headers_from(lines: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`--header "Name: value"` lines as a dict; a value `env:VAR` is read from the environment.

    ValueError naming the header (never its value) when a line is not `Name: value` or a variable is unset.
    """
    environ = os.environ if environ is None else environ
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or " " in name:
            raise ValueError(f"--header {name[:40]!r}: give it as 'Name: value' (or 'Name: env:VAR')")
        headers[name] = from_env(value, f"--header {name}", environ)
    return headers


def from_env(value: str, what: str, environ: Mapping[str, str] | None = None) -> str:
    """`value`, or for `env:VAR` the variable's value; ValueError naming `what` and the variable when it is unset."""
    if not value.startswith("env:"):
        return value
    environ = os.environ if environ is None else environ
    variable = value[4:]
    if variable not in environ:
        raise ValueError(f"{what}: the environment variable {variable} is not set")
    return environ[variable]
