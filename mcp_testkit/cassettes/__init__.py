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

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.cassettes._format import (
        FORMAT,
        MATCH_MODES,
        VERSION,
        Cassette,
        CassetteError,
        Exchange,
        HttpInfo,
        RecordedCall,
        Tape,
        cassette_schema,
    )
    from mcp_testkit.cassettes._matching import Matcher, UnmatchedCall
    from mcp_testkit.cassettes._record import Recording, StdioGateway, record
    from mcp_testkit.cassettes._replay import CassetteServer, replay
    from mcp_testkit.cassettes._script import ReplayScript
    from mcp_testkit.cassettes._upstream import StdioUpstream, UpstreamError, check_startable, headers_from
    from mcp_testkit.cassettes._verify import Change, VerifyReport, verify

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
# load the proxy, the replay server and their dependencies only when a cassette is actually used.
_HOMES = {
    "FORMAT": "_format",
    "VERSION": "_format",
    "Cassette": "_format",
    "CassetteError": "_format",
    "Exchange": "_format",
    "HttpInfo": "_format",
    "RecordedCall": "_format",
    "cassette_schema": "_format",
    "Recording": "_record",
    "StdioGateway": "_record",
    "Tape": "_format",
    "check_startable": "_upstream",
    "StdioUpstream": "_upstream",
    "headers_from": "_upstream",
    "record": "_record",
    "MATCH_MODES": "_format",
    "CassetteServer": "_replay",
    "Matcher": "_matching",
    "ReplayScript": "_script",
    "UnmatchedCall": "_matching",
    "replay": "_replay",
    "UpstreamError": "_upstream",
    "Change": "_verify",
    "VerifyReport": "_verify",
    "verify": "_verify",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'mcp_testkit.cassettes' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"mcp_testkit.cassettes.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
