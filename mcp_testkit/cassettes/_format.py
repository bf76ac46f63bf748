"""The cassette file: one versioned JSON document of exchanges, written so that a diff in review reads well.

Every exchange is one block of lines, one key a line in a fixed order, each value compact JSON on
its line: re-recording a server that changed one answer changes one line. The document is checked
against `cassette.schema.json`, shipped in this package, when it is read.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_testkit._wire.strict_json import MAX_DEPTH, JsonError, unfit, where_refused
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._inputs import link_inputs
from mcp_testkit.upstream import Exchange, Tape

__all__ = ["FORMAT", "VERSION", "Cassette", "CassetteError", "cassette_schema"]

FORMAT = "mcp-testkit cassette"
VERSION = 1
"""The format version this mcp-testkit writes and reads; a newer file is refused, naming both."""
SCHEMA_URL = "https://github.com/mcp-testkit/mcp-testkit/cassette.schema.json"

_MAX_DEPTH = MAX_DEPTH + 3
"""A message nests at most MAX_DEPTH levels, as on the wire; the file wraps it in three more (the document, its
`exchanges` and the exchange)."""


class CassetteError(ValueError):
    """A cassette that cannot be read, matched or written; the message names the file and what to do."""


@functools.lru_cache(maxsize=1)
def cassette_schema() -> dict[str, Any]:
    """The JSON Schema of a cassette (`mcp_testkit/cassettes/cassette.schema.json`)."""
    text = Path(__file__).with_name("cassette.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


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
        return cls(
            exchanges=link_inputs([Exchange.from_json(item) for item in data["exchanges"]]),
            upstream=dict(data["upstream"]),
            recorded_at=data.get("recorded_at", ""),
            recorded_with=data.get("recorded_with", ""),
            redactions=dict(data.get("redactions", {})),
            source=source,
        )

    @classmethod
    def from_tape(cls, tape: Tape, upstream: Mapping[str, Any]) -> Cassette:
        """A cassette of everything `tape` recorded so far (not yet redacted), stamped with now and this mcp-testkit."""
        from mcp_testkit._version import __version__

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return cls(tape.exchanges, dict(upstream), stamp, f"mcp-testkit {__version__}")

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
