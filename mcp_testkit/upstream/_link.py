"""What the links to a live server share: the `Upstream` protocol they follow, the error they raise, how messages
name a server, and how a line the server wrote is decoded.

Links are blocking and thread-safe, so one link serves callers on any event loop (a replay server's thread, a
test's loop, the CLI) through `anyio.to_thread`: the link owns its HTTP client or its process, and closing it never
depends on a loop that may be gone. `UpstreamSession` (`_session.py`) speaks MCP on a link.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.upstream._exchange import Exchange
from mcp_testkit.upstream._tape import Tape

__all__ = ["TIMEOUT_S", "OnEvent", "Upstream", "UpstreamError", "decode_message", "describe_upstream", "is_request"]

TIMEOUT_S = 30.0
OnEvent = Callable[[Any], None]


class UpstreamError(Exception):
    """The live server could not be reached or did not answer as MCP says; the message names it. A stdio server's
    error keeps the last lines it wrote on stderr in `stderr` (empty for others)."""

    def __init__(self, message: str, *, stderr: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.stderr = list(stderr)


class Upstream(Protocol):
    """A blocking link to a live server that records each exchange on `tape`."""

    transport: str
    tape: Tape
    protocol_version: str | None

    def send(
        self, message: Any, *, headers: Mapping[str, str] | None = None, on_event: OnEvent | None = None
    ) -> Exchange:
        """Send one JSON-RPC message; the recorded exchange (its `error` says what failed, if anything)."""
        ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


def describe_upstream(url: str | None = None, command: Sequence[str] | None = None) -> str:
    """How messages name an upstream: its URL without user info or query, or its command line."""
    if command is not None:
        return shlex.join(command)
    parts = urlsplit(url or "")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def is_request(message: Any) -> bool:
    """Whether `message` is a JSON-RPC request (a method and an id), which an answer comes back for."""
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def decode_message(data: str) -> Any:
    """An upstream's message, decoded as strictly as the server decodes one (no NaN, bounded nesting); what is not
    JSON of the wire is kept as `{"unparsed": text}`, so that the cassette written stays strict JSON."""
    try:
        return strict_loads(data.encode("utf-8", "surrogatepass"), "answer")
    except JsonError:
        return {"unparsed": data}
