"""Which link an upstream takes: Streamable HTTP for a URL, a stdio process for a command."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from mcp_testkit.upstream._http import HttpUpstream
from mcp_testkit.upstream._link import Upstream
from mcp_testkit.upstream._stdio import StdioUpstream
from mcp_testkit.upstream._tape import Tape

__all__ = ["open_upstream"]


def open_upstream(
    upstream: str | Sequence[str], *, headers: Mapping[str, str] | None = None, tape: Tape | None = None
) -> Upstream:
    """An `HttpUpstream` for an http(s) URL, a `StdioUpstream` for a command (a list, or a command line)."""
    if isinstance(upstream, str) and upstream.startswith(("http://", "https://")):
        return HttpUpstream(upstream, headers, tape=tape)
    command = shlex.split(upstream) if isinstance(upstream, str) else list(upstream)
    if not command:
        raise ValueError("the upstream command is empty")
    return StdioUpstream(command, tape=tape)
