"""Cassettes: record a live MCP server once, replay it as a `TestMcpServer` with faults on top, and verify
that the live server still matches.

- `record(upstream_url, out=path)` (or `mcp-testkit record`) runs a recording proxy on 127.0.0.1;
  a client points at it as it would at the server, and the cassette is written when it stops,
  with credentials replaced by their names and `--redact` matches by placeholders.
- `TestMcpServer.from_cassette(path)` (or `replay`, `mcp-testkit serve --cassette`) serves the
  recorded info, capabilities and catalogue and answers each call with the recorded answer, to
  clients of either protocol era (the handshake, and 2026-07-28's `server/discover`).
- `verify(path, upstream)` (or `mcp-testkit verify`) reports what changed on the live server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit._lazy import lazy_names

if TYPE_CHECKING:
    from mcp_testkit.cassettes._calls import RecordedCall
    from mcp_testkit.cassettes._format import FORMAT, VERSION, Cassette, CassetteError, cassette_schema
    from mcp_testkit.cassettes._matching import MATCH_MODES, Matcher, UnmatchedCall
    from mcp_testkit.cassettes._record import Recording, record
    from mcp_testkit.cassettes._replay import CassetteServer, replay
    from mcp_testkit.cassettes._script import ReplayScript
    from mcp_testkit.cassettes._verify import Change, VerifyReport, verify
    from mcp_testkit.proxy import StdioGateway
    from mcp_testkit.upstream import (
        Exchange,
        HttpInfo,
        StdioUpstream,
        Tape,
        UpstreamError,
        check_startable,
        headers_from,
    )

__all__ = [
    "FORMAT",
    "MATCH_MODES",
    "VERSION",
    "Cassette",
    "CassetteError",
    "CassetteServer",
    "Change",
    "Exchange",
    "HttpInfo",
    "Matcher",
    "RecordedCall",
    "Recording",
    "ReplayScript",
    "StdioGateway",
    "StdioUpstream",
    "Tape",
    "UnmatchedCall",
    "UpstreamError",
    "VerifyReport",
    "cassette_schema",
    "check_startable",
    "headers_from",
    "record",
    "replay",
    "verify",
]

# Imported on first use, so that the CLI (which registers `record` and `verify`) and the pytest plugin
# load the proxy, the replay server and their dependencies only when a cassette is actually used. The links to a
# live server, their exchanges and tapes live in `mcp_testkit.upstream`, and the stdio gateway in
# `mcp_testkit.proxy`: both below the cassettes, which re-export them here, where they were first offered.
_HOMES = {
    "FORMAT": "mcp_testkit.cassettes._format",
    "MATCH_MODES": "mcp_testkit.cassettes._matching",
    "VERSION": "mcp_testkit.cassettes._format",
    "Cassette": "mcp_testkit.cassettes._format",
    "CassetteError": "mcp_testkit.cassettes._format",
    "CassetteServer": "mcp_testkit.cassettes._replay",
    "Change": "mcp_testkit.cassettes._verify",
    "Exchange": "mcp_testkit.upstream",
    "HttpInfo": "mcp_testkit.upstream",
    "Matcher": "mcp_testkit.cassettes._matching",
    "RecordedCall": "mcp_testkit.cassettes._calls",
    "Recording": "mcp_testkit.cassettes._record",
    "ReplayScript": "mcp_testkit.cassettes._script",
    "StdioGateway": "mcp_testkit.proxy",
    "StdioUpstream": "mcp_testkit.upstream",
    "Tape": "mcp_testkit.upstream",
    "UnmatchedCall": "mcp_testkit.cassettes._matching",
    "UpstreamError": "mcp_testkit.upstream",
    "VerifyReport": "mcp_testkit.cassettes._verify",
    "cassette_schema": "mcp_testkit.cassettes._format",
    "check_startable": "mcp_testkit.upstream",
    "headers_from": "mcp_testkit.upstream",
    "record": "mcp_testkit.cassettes._record",
    "replay": "mcp_testkit.cassettes._replay",
    "verify": "mcp_testkit.cassettes._verify",
}


__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
