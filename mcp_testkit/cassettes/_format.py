"""The cassette file: one versioned JSON document of exchanges, written so that a diff in review reads well.

Every exchange is one block of lines, one key a line in a fixed order, each value compact JSON on
its line: re-recording a server that changed one answer changes one line. The document is checked
against `cassette.schema.json`, shipped in this package, when it is read.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS, STATELESS_VERSIONS, VERSION_KEY
from mcp_testkit._wire.strict_json import MAX_DEPTH, JsonError, unfit, where_refused
from mcp_testkit._wire.strict_json import loads as strict_loads

__all__ = [
    "FORMAT",
    "MATCH_MODES",
    "VERSION",
    "Cassette",
    "CassetteError",
    "Exchange",
    "HttpInfo",
    "RecordedCall",
    "Tape",
    "cassette_schema",
    "era_of",
    "is_placeholder_text",
    "split_messages",
    "version_of",
]

FORMAT = "mcp-testkit cassette"
VERSION = 1
"""The format version this mcp-testkit writes and reads; a newer file is refused, naming both."""
SCHEMA_URL = "https://github.com/mcp-testkit/mcp-testkit/cassette.schema.json"
MATCH_MODES = ("exact", "in_order", "by_tool")
"""How a replay finds the recorded answer of a call (a user matcher aside); see `TestMcpServer.from_cassette`."""

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
_PLACEHOLDER = re.compile(r"<redacted:[^<>\s]+>")
_MAX_DEPTH = MAX_DEPTH + 3
"""A message nests at most MAX_DEPTH levels, as on the wire; the file wraps it in three more (the document, its
`exchanges` and the exchange)."""


class CassetteError(ValueError):
    """A cassette that cannot be read, matched or written; the message names the file and what to do."""


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


def is_placeholder_text(value: Any) -> bool:
    """Whether `value` is a string holding a redaction placeholder such as `<redacted:1>`."""
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None


@functools.lru_cache(maxsize=1)
def cassette_schema() -> dict[str, Any]:
    """The JSON Schema of a cassette (`mcp_testkit/cassettes/cassette.schema.json`)."""
    text = Path(__file__).with_name("cassette.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


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
    `method`, `params`, `answer` (`cassettes/_inputs.py` links them from the exchanges that carried them)."""
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


@dataclass(frozen=True)
class RecordedCall:
    """One recorded `tools/call` and its answer: what matchers choose from and near-miss messages show."""

    seq: int
    tool: str
    arguments: Mapping[str, Any]
    result: Mapping[str, Any] | None
    """The `CallToolResult` in wire form, or None when the server answered a JSON-RPC error."""
    error: Mapping[str, Any] | None
    era: str
    events: Sequence[Any] = ()
    inputs: Sequence[Mapping[str, Any]] = ()
    """The input requests the tool made and the answers it got (`Exchange.inputs`), asked again on replay."""

    def describe(self) -> str:
        """`#seq tool({"arg": ...})`, as near-miss messages list it."""
        return f"#{self.seq} {self.tool}({json.dumps(self.arguments, sort_keys=True)})"


@dataclass
class Cassette:
    """A recorded conversation with one MCP server: where it came from and every exchange, in order."""

    exchanges: list[Exchange] = field(default_factory=list)
    upstream: dict[str, Any] = field(default_factory=dict)
    """`{"transport": "http", "url": ...}` or `{"transport": "stdio", "command": [...]}`."""
    recorded_at: str = ""
    recorded_with: str = ""
    redactions: dict[str, Any] = field(default_factory=dict)
    """What was redacted, by kind (header names, patterns, placeholder count); never a value."""
    source: str = "<cassette>"
    """The file it was read from, for messages."""

    # -- views ---------------------------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Exchange]:
        return iter(self.exchanges)

    def __len__(self) -> int:
        return len(self.exchanges)

    def requests(self, method: str) -> list[Exchange]:
        """The exchanges whose request has JSON-RPC method `method`, in order."""
        return [exchange for exchange in self.exchanges if exchange.method == method]

    def calls(self, tool: str | None = None) -> list[RecordedCall]:
        """Every answered `tools/call` (of one tool or of all), in recorded order."""
        found = []
        for exchange in self.requests("tools/call"):
            name = exchange.params.get("name")
            if not isinstance(name, str) or (tool is not None and name != tool):
                continue
            if exchange.result is None and exchange.rpc_error is None:
                continue  # no answer was recorded (the connection dropped): nothing to replay
            if exchange.next_round is not None:
                continue  # a round of a call whose last round holds its inputs and answer
            arguments = exchange.params.get("arguments")
            found.append(
                RecordedCall(
                    seq=exchange.seq,
                    tool=name,
                    arguments=arguments if isinstance(arguments, dict) else {},
                    result=exchange.result,
                    error=exchange.rpc_error,
                    era=exchange.era,
                    events=tuple(exchange.events),
                    inputs=tuple(exchange.inputs),
                )
            )
        return found

    @property
    def eras(self) -> list[str]:
        """The eras the exchanges were recorded in, in order of first appearance."""
        return list(dict.fromkeys(exchange.era for exchange in self.exchanges if exchange.request is not None))

    # -- reading -------------------------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """Read a cassette file; CassetteError naming the file and the problem (a missing file, a bad field)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CassetteError(f"cassette {path}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CassetteError(f"cassette {path}: cannot be read: {exc}") from None
        return cls.loads(text, source=str(path))

    @classmethod
    def loads(cls, text: str, *, source: str = "<cassette>") -> Cassette:
        """A cassette from its JSON text, decoded strictly (no NaN or Infinity, bounded nesting), checked against
        the schema; CassetteError naming the source and the field."""
        try:
            data = strict_loads(text.encode("utf-8", "surrogatepass"), what="file", max_depth=_MAX_DEPTH)
        except JsonError as exc:
            where = where_refused(text, _MAX_DEPTH)
            if where:
                raise CassetteError(f"cassette {source}: {where}: {exc}") from None
            raise CassetteError(f"cassette {source}: not valid JSON: {exc}") from None
        return cls.from_json(data, source=source)

    @classmethod
    def from_json(cls, data: Any, *, source: str = "<cassette>") -> Cassette:
        if isinstance(data, dict) and isinstance(data.get("version"), int) and data["version"] > VERSION:
            raise CassetteError(
                f"cassette {source}: format version {data['version']} was written by a newer mcp-testkit; "
                f"this one reads version {VERSION}: upgrade mcp-testkit"
            )
        problem = unfit(data, _MAX_DEPTH)  # a value built in Python: loads() has not checked it
        if problem:
            raise CassetteError(f"cassette {source}: {problem}")
        _validate(data, source)
        from mcp_testkit.cassettes._inputs import link_inputs

        return cls(
            exchanges=link_inputs([Exchange.from_json(item) for item in data["exchanges"]]),
            upstream=dict(data["upstream"]),
            recorded_at=data.get("recorded_at", ""),
            recorded_with=data.get("recorded_with", ""),
            redactions=dict(data.get("redactions", {})),
            source=source,
        )

    # -- writing -------------------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "$schema": SCHEMA_URL,
            "format": FORMAT,
            "version": VERSION,
            "recorded_with": self.recorded_with,
            "recorded_at": self.recorded_at,
            "upstream": self.upstream,
            "redactions": self.redactions,
            "exchanges": [exchange.to_json() for exchange in self.exchanges],
        }

    def dumps(self) -> str:
        """The file's text: header keys one a line, then one block of lines per exchange."""
        data = self.to_json()
        exchanges = data.pop("exchanges")
        lines = ["{"]
        lines.extend(f"  {_value(key)}: {_value(value)}," for key, value in data.items())
        if not exchanges:
            lines.append('  "exchanges": []')
        else:
            lines.append('  "exchanges": [')
            for index, exchange in enumerate(exchanges):
                lines.append("    {")
                items = list(exchange.items())
                lines.extend(
                    f"      {_value(key)}: {_value(value)}{',' if i < len(items) - 1 else ''}"
                    for i, (key, value) in enumerate(items)
                )
                lines.append("    }" + ("," if index < len(exchanges) - 1 else ""))
            lines.append("  ]")
        lines.append("}")
        return "\n".join(lines) + "\n"


class Tape:
    """Exchanges as they finish, numbered in the order they were sent; shared by the threads that record."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def start(self) -> tuple[int, float]:
        """A new exchange's number and its start, in ms since the tape started."""
        with self._lock:
            return next(self._seq), round((time.monotonic() - self._started) * 1000, 1)

    def elapsed_ms(self, at_ms: float) -> float:
        """Milliseconds since an exchange that started at `at_ms`."""
        return max(0.0, round((time.monotonic() - self._started) * 1000 - at_ms, 1))

    def add(self, exchange: Exchange) -> None:
        with self._lock:
            self._exchanges.append(exchange)

    @property
    def exchanges(self) -> list[Exchange]:
        """The exchanges finished so far, in the order they were sent."""
        with self._lock:
            return sorted(self._exchanges, key=lambda exchange: exchange.seq)

    def cassette(self, upstream: Mapping[str, Any]) -> Cassette:
        """A cassette of everything recorded so far (not yet redacted)."""
        from mcp_testkit._version import __version__

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return Cassette(self.exchanges, dict(upstream), stamp, f"mcp-testkit {__version__}")


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _validate(data: Any, source: str) -> None:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(cassette_schema()).iter_errors(data))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
        raise CassetteError(f"cassette {source}: {where}: {message}")
    for index, exchange in enumerate(data["exchanges"]):
        _check_cursors(exchange, f"exchanges/{index}", source)


def _check_cursors(exchange: Mapping[str, Any], where: str, source: str) -> None:
    """A cursor sent or offered is a string (an offered one may be null), as MCP says; replay keys pages by it."""
    request, response = exchange.get("request"), exchange.get("response")
    requests = request if isinstance(request, list) else [request]
    responses = response if isinstance(response, list) else [response]
    for index, message in enumerate(requests):
        params = message.get("params") if isinstance(message, dict) else None
        if isinstance(params, dict) and "cursor" in params and not isinstance(params["cursor"], str):
            at = f"{where}/request{'/' + str(index) if isinstance(request, list) else ''}/params/cursor"
            _not_a_cursor(source, at, params["cursor"])
    for index, message in enumerate(responses):
        result = message.get("result") if isinstance(message, dict) else None
        if (
            isinstance(result, dict)
            and result.get("nextCursor") is not None
            and not isinstance(result["nextCursor"], str)
        ):
            at = f"{where}/response{'/' + str(index) if isinstance(response, list) else ''}/result/nextCursor"
            _not_a_cursor(source, at, result["nextCursor"])


def _not_a_cursor(source: str, where: str, value: Any) -> None:
    kind = {dict: "an object", list: "an array", bool: "a boolean", int: "a number", float: "a number"}
    raise CassetteError(
        f"cassette {source}: {where}: a cursor is a string, not {kind.get(type(value), type(value).__name__)}"
    )
