"""An exchange: one message a client sent to a live server and everything the server sent back for it, at the
JSON-RPC level, with the HTTP facts that matter; what a link to the server records and a cassette holds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS, STATELESS_VERSIONS, VERSION_KEY
from mcp_testkit.journal import is_secret_header

__all__ = ["Exchange", "HttpInfo", "era_of", "kept_headers", "split_messages", "version_of"]

_EXCHANGE_KEYS = (
    "seq",
    "at_ms",
    "elapsed_ms",
    "transport",
    "era",
    "protocol_version",
    "session",
    "http",
    "request",
    "response",
    "events",
    "body",
    "error",
    "inputs",
    "next_round",
)
_OPTIONAL = frozenset({"session", "http", "events", "body", "error", "inputs", "next_round"})


def era_of(protocol_version: str | None) -> str:
    """'stateless' for a 2026-07-28 (or later) version, 'handshake' for the rest (and for none)."""
    return STATELESS if protocol_version in STATELESS_VERSIONS else HANDSHAKE


def version_of(request: Any, header: str | None = None, response: Any = None) -> str | None:
    """The protocol version an exchange was spoken in: `_meta`'s (stateless era), the one `initialize`
    negotiated, else the `MCP-Protocol-Version` header sent with it."""
    if isinstance(request, dict):
        params = request.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get(VERSION_KEY), str):
            return str(meta[VERSION_KEY])
        if request.get("method") == "initialize":
            result = response.get("result") if isinstance(response, dict) else None
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                return str(result["protocolVersion"])
            if isinstance(params, dict) and isinstance(params.get("protocolVersion"), str):
                return str(params["protocolVersion"])
    return header


def split_messages(request: Any, messages: Sequence[Any]) -> tuple[Any, list[Any]]:
    """The response(s) answering `request` among the server's `messages`, and the other messages in order."""
    sent = request if isinstance(request, list) else [request]
    ids = {m.get("id") for m in sent if isinstance(m, dict) and "method" in m and "id" in m}
    answers = [m for m in messages if isinstance(m, dict) and "method" not in m and m.get("id") in ids]
    events = [m for m in messages if not any(m is answer for answer in answers)]
    if isinstance(request, list):
        return (answers or None), events
    return (answers[0] if answers else None), events


@dataclass(frozen=True)
class HttpInfo:
    """The HTTP side of an exchange over Streamable HTTP: the headers that matter, status and framing."""

    method: str
    status: int | None
    framing: str
    """'json', 'sse', 'empty' (no body) or 'text' (a body that is not JSON)."""
    request_headers: Mapping[str, str] = field(default_factory=dict)
    response_headers: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "status": self.status,
            "framing": self.framing,
            "request_headers": dict(self.request_headers),
            "response_headers": dict(self.response_headers),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HttpInfo:
        return cls(
            data["method"],
            data.get("status"),
            data["framing"],
            dict(data.get("request_headers", {})),
            dict(data.get("response_headers", {})),
        )


@dataclass
class Exchange:
    """One request a client sent and everything the server sent back for it, at the JSON-RPC level.

    Over HTTP an exchange is one HTTP request (a POST's message, a GET stream, a DELETE); over stdio
    it is one message the client wrote and the answer read back. `events` are the other messages the
    server sent with it, in order: notifications and server-initiated requests.
    """

    seq: int
    at_ms: float
    elapsed_ms: float
    transport: str
    era: str
    protocol_version: str | None
    request: Any
    response: Any = None
    session: str | None = None
    http: HttpInfo | None = None
    events: list[Any] = field(default_factory=list)
    body: str | None = None
    """A response body that is not JSON, as text."""
    error: str | None = None
    """What went wrong on the way, when the exchange did not complete (e.g. the upstream closed the connection)."""
    inputs: list[dict[str, Any]] = field(default_factory=list)
    """A completed `tools/call`'s input requests and the client's answers, in both eras alike: `round`, `key`,
    `method`, `params`, `answer` (a cassette links them, when it is read, from the exchanges that carried them)."""
    next_round: int | None = None
    """A 2026-07-28 round that ended asking for input: the seq of the retry that carried the answers."""

    @property
    def method(self) -> str | None:
        """The JSON-RPC method of the request, if it is a request or a notification."""
        method = self.request.get("method") if isinstance(self.request, dict) else None
        return method if isinstance(method, str) else None

    @property
    def params(self) -> dict[str, Any]:
        params = self.request.get("params") if isinstance(self.request, dict) else None
        return params if isinstance(params, dict) else {}

    @property
    def result(self) -> dict[str, Any] | None:
        """The JSON-RPC result answering the request, if there is one."""
        result = self.response.get("result") if isinstance(self.response, dict) else None
        return result if isinstance(result, dict) else None

    @property
    def rpc_error(self) -> dict[str, Any] | None:
        """The JSON-RPC error answering the request, if there is one."""
        error = self.response.get("error") if isinstance(self.response, dict) else None
        return error if isinstance(error, dict) else None

    def to_json(self) -> dict[str, Any]:
        """The exchange as JSON data, keys in the file's order, empty optional keys left out."""
        values: dict[str, Any] = {
            "seq": self.seq,
            "at_ms": self.at_ms,
            "elapsed_ms": self.elapsed_ms,
            "transport": self.transport,
            "era": self.era,
            "protocol_version": self.protocol_version,
            "session": self.session,
            "http": self.http.to_json() if self.http is not None else None,
            "request": self.request,
            "response": self.response,
            "events": list(self.events),
            "body": self.body,
            "error": self.error,
            "inputs": list(self.inputs),
            "next_round": self.next_round,
        }
        return {key: values[key] for key in _EXCHANGE_KEYS if not (key in _OPTIONAL and not values[key])}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Exchange:
        http = data.get("http")
        return cls(
            seq=data["seq"],
            at_ms=data["at_ms"],
            elapsed_ms=data["elapsed_ms"],
            transport=data["transport"],
            era=data["era"],
            protocol_version=data.get("protocol_version"),
            request=data.get("request"),
            response=data.get("response"),
            session=data.get("session"),
            http=HttpInfo.from_json(http) if http is not None else None,
            events=list(data.get("events", [])),
            body=data.get("body"),
            error=data.get("error"),
            inputs=list(data.get("inputs", [])),
            next_round=data.get("next_round"),
        )


_REQUEST_KEPT = frozenset(
    {"accept", "content-type", "mcp-protocol-version", "mcp-session-id", "last-event-id", "mcp-method", "mcp-name"}
)
_RESPONSE_KEPT = frozenset({"content-type", "mcp-session-id", "www-authenticate", "retry-after", "allow"})


def kept_headers(headers: Iterable[tuple[str, str]], *, response: bool = False) -> dict[str, str]:
    """The headers an exchange keeps: MCP's own, challenges, and credentials (which a cassette redacts on save)."""
    kept = _RESPONSE_KEPT if response else _REQUEST_KEPT
    return {name.lower(): value for name, value in headers if name.lower() in kept or is_secret_header(name)}
