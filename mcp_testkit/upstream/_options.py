"""The options that name a live upstream server, shared by `mcp-testkit proxy` and `mcp-testkit record`."""

from __future__ import annotations

import argparse

__all__ = ["MAX_PROCESSES", "START_TIMEOUT_S", "add_upstream_options"]

START_TIMEOUT_S = 10.0
"""How long a stdio server's command may take, before a proxy or a recording serves, to start and answer a probing
`initialize` (`--start-timeout`, `start_timeout_s=`)."""
MAX_PROCESSES = 8
"""How many stdio server processes a proxy or a recording runs at once by default (`--max-processes`,
`max_processes=`): one per session of the handshake era (a stdio server takes one `initialize`), one shared by every
2026-07-28 request."""


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
