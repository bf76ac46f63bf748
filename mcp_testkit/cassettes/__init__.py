"""Cassettes: record a live MCP server once, replay it as a `TestMcpServer` with faults on top, and verify
that the live server still matches.

- `record(upstream_url, out=path)` (or `mcp-testkit record`) runs a recording proxy on 127.0.0.1;
  a client points at it as it would at the server, and the cassette is written when it stops,
  with credentials replaced by their names and `--redact` matches by placeholders.
- `TestMcpServer.from_cassette(path)` (or `replay`, `mcp-testkit serve --cassette`) serves the
  recorded info, capabilities and catalogue and answers each call with the recorded answer.
- `verify(path, upstream)` (or `mcp-testkit verify`) reports what changed on the live server.
"""

from __future__ import annotations

from mcp_testkit.cassettes._format import (
    FORMAT,
    VERSION,
    Cassette,
    CassetteError,
    Exchange,
    HttpInfo,
    RecordedCall,
    cassette_schema,
)
from mcp_testkit.cassettes._record import Recording, record
from mcp_testkit.cassettes._replay import MATCH_MODES, CassetteServer, Matcher, ReplayScript, UnmatchedCall, replay
from mcp_testkit.cassettes._upstream import UpstreamError
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
    "UnmatchedCall",
    "UpstreamError",
    "VerifyReport",
    "cassette_schema",
    "record",
    "replay",
    "verify",
]
