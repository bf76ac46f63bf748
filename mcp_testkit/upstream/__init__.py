"""Links to a live MCP server, over Streamable HTTP or a stdio process, and MCP spoken on them: what the chaos
proxy forwards to and the cassettes record from.

- `HttpUpstream` and `StdioUpstream` (`open_upstream` picks one) send JSON-RPC messages and record each exchange,
  an `Exchange`, on a `Tape`; they raise `UpstreamError`, which quotes a stdio server's `StderrTail`.
- `UpstreamSession` speaks MCP on a link: the handshake or `server/discover`, the whole paged listing, calls.
- `add_upstream_options` and `headers_from` are the upstream options `mcp-testkit proxy` and `mcp-testkit record`
  share.
"""

from __future__ import annotations

from mcp_testkit.upstream._exchange import Exchange, HttpInfo, era_of, kept_headers, split_messages, version_of
from mcp_testkit.upstream._http import HttpUpstream
from mcp_testkit.upstream._link import TIMEOUT_S, OnEvent, Upstream, UpstreamError, describe_upstream
from mcp_testkit.upstream._open import open_upstream
from mcp_testkit.upstream._options import (
    MAX_PROCESSES,
    MAX_UPSTREAM_BODY,
    MAX_UPSTREAM_HEAD,
    MAX_UPSTREAM_HEADERS,
    START_TIMEOUT_S,
    add_upstream_bounds,
    add_upstream_options,
    from_env,
    headers_from,
)
from mcp_testkit.upstream._session import UPSTREAM_ERAS, UpstreamSession
from mcp_testkit.upstream._stderr import StderrTail
from mcp_testkit.upstream._stdio import StdioUpstream, check_startable
from mcp_testkit.upstream._tape import Tape

__all__ = [
    "MAX_PROCESSES",
    "MAX_UPSTREAM_BODY",
    "MAX_UPSTREAM_HEAD",
    "MAX_UPSTREAM_HEADERS",
    "START_TIMEOUT_S",
    "TIMEOUT_S",
    "UPSTREAM_ERAS",
    "Exchange",
    "HttpInfo",
    "HttpUpstream",
    "OnEvent",
    "StderrTail",
    "StdioUpstream",
    "Tape",
    "Upstream",
    "UpstreamError",
    "UpstreamSession",
    "add_upstream_bounds",
    "add_upstream_options",
    "check_startable",
    "describe_upstream",
    "era_of",
    "from_env",
    "headers_from",
    "kept_headers",
    "open_upstream",
    "split_messages",
    "version_of",
]
