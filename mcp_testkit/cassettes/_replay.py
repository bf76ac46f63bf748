"""Replay: a `TestMcpServer` that serves a recorded server's info, capabilities and catalogue, and answers
each `tools/call` with the recorded answer it matches.

The replay is a `TestMcpServer` like any other, so faults, required headers, the journal, the
ledger and the contract work on it unchanged; `reset()` brings the recording back. A call that
matches no recorded one is answered `isError` and fails `check()` with the nearest recorded calls.
Given an upstream (the pytest record modes), such a call is sent to the live server instead and
the answer is added to the cassette.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit._eras import ERAS, HANDSHAKE, SERVER_INFO_KEY, STATELESS, spoken_versions
from mcp_testkit.cassettes._format import (
    MATCH_MODES,
    Cassette,
    CassetteError,
    Exchange,
    RecordedCall,
    is_placeholder_text,
)
from mcp_testkit.server import TestMcpServer
from mcp_testkit.tools import JsonRpcError, RawResult, ScriptedTool, ToolContext

if TYPE_CHECKING:
    from mcp_testkit.cassettes._redact import Redactor
    from mcp_testkit.cassettes._upstream import UpstreamSession
    from mcp_testkit.server import ServerState

__all__ = ["MATCH_MODES", "CassetteServer", "Matcher", "ReplayScript", "UnmatchedCall", "replay"]

Matcher = Callable[[str, Mapping[str, Any], Sequence[RecordedCall]], "RecordedCall | None"]
"""A user matcher: `(tool, arguments, recorded calls of that tool) -> the call to replay, or None`."""

_SERVED_METHODS = frozenset({"initialize", "ping", "tools/list", "tools/call", "logging/setLevel", "server/discover"})
_SERVED_CAPABILITIES = ("tools", "logging")
# Fields the 2026-07-28 era adds to results; a handshake-era client is answered without them.
_STATELESS_FIELDS = ("resultType", "ttlMs", "cacheScope")
_RECORDED: Any = object()


class UnmatchedCall(AssertionError):
    """A replay was sent a call that no recorded call matches; the message lists the nearest recorded calls."""

    def __init__(self, source: str, tool: str, arguments: Mapping[str, Any], mode: str, nearest: str) -> None:
        self.tool = tool
        self.arguments = dict(arguments)
        super().__init__(
            f"cassette {source} has no recorded call matching {tool}({json.dumps(arguments, sort_keys=True)}) "
            f"(match={mode}); {nearest}"
        )


# -- what a cassette replays ---------------------------------------------------------------------------------------


@dataclass
class ReplayScript:
    """What a cassette replays, derived once from its exchanges, and notes on what it cannot replay."""

    server_info: dict[str, Any]
    capabilities: dict[str, Any]
    instructions: str | None
    tools: list[dict[str, Any]]
    page_size: int | None
    calls: list[RecordedCall]
    framing: dict[str, str]
    discover: dict[str, Any] | None
    """The recorded `server/discover` result, the stateless era's opening answer."""
    eras: tuple[str, ...] = ERAS
    """The eras the replay speaks: those the server spoke while recording, and those it was never asked."""
    cache: dict[str, Any] = field(default_factory=dict)
    """The stateless era's cache hints as recorded (`cache_ttl_ms`, `cache_scope` of `TestMcpServer`)."""
    get_stream: bool = False
    """Whether the server offered a GET stream while recording."""
    listed: frozenset[str] = frozenset()
    """The tools a recorded listing showed (the others were only seen called: their definitions are bare)."""
    listing_complete: bool = False
    """Whether the recording read every page of the listing."""
    notes: list[str] = field(default_factory=list)

    def initialize_result(self) -> dict[str, Any]:
        """The `initialize` answer besides protocolVersion: recorded capabilities, serverInfo, instructions."""
        result: dict[str, Any] = {"capabilities": self.capabilities, "serverInfo": self.server_info}
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def discover_result(self, versions: Sequence[str]) -> dict[str, Any]:
        """The `server/discover` answer of a replay speaking `versions`: the recorded one, else one built from
        the recorded `initialize`. Either way its capabilities are the replay's (tools and logging only), and it
        offers the recorded versions the replay speaks (all of `versions` when it recorded none of them)."""
        result: dict[str, Any] = dict(self.discover) if self.discover is not None else {}
        recorded = result.get("supportedVersions")
        offered = [v for v in recorded if v in versions] if isinstance(recorded, list) else []
        result["supportedVersions"] = offered or list(versions)
        result["capabilities"] = self.capabilities
        if self.discover is None:
            result["_meta"] = {SERVER_INFO_KEY: self.server_info}
            if self.instructions is not None:
                result["instructions"] = self.instructions
        return result

    @classmethod
    def from_cassette(cls, cassette: Cassette) -> ReplayScript:
        notes: list[str] = []
        initialize = _first_result(cassette, "initialize")
        discover = _first_result(cassette, "server/discover")
        opened = initialize or discover or {}
        server_info = _server_info(cassette, initialize, discover, notes)
        if initialize is None and discover is not None:
            notes.append(
                "no initialize was recorded: a handshake-era client gets an answer built from server/discover "
                "(its capabilities, and serverInfo from _meta)"
            )
        tools, page_size, complete = _catalogue(cassette, notes)
        listed = frozenset(tool["name"] for tool in tools)
        calls = cassette.calls()
        for name in dict.fromkeys(call.tool for call in calls):
            if name not in {tool["name"] for tool in tools}:
                tools.append({"name": name, "inputSchema": {"type": "object"}})
                notes.append(f"tool {name!r} was called but never listed: it is replayed with a bare definition")
        unanswered = [e.seq for e in cassette.requests("tools/call") if e.result is None and e.rpc_error is None]
        if unanswered:
            notes.append(f"calls #{', #'.join(map(str, unanswered))} got no answer while recording: not replayed")
        _note_unserved(cassette, notes)
        capabilities = _capabilities(opened.get("capabilities"), bool(tools), notes)
        instructions = opened.get("instructions")
        eras = _eras(cassette, notes)
        return cls(
            server_info=server_info,
            capabilities=capabilities,
            instructions=instructions if isinstance(instructions, str) else None,
            tools=tools,
            page_size=page_size,
            calls=calls,
            framing=_framing(cassette),
            discover=discover,
            eras=eras,
            cache=_cache(cassette),
            listed=listed,
            listing_complete=complete,
            get_stream=any(
                e.http is not None and e.http.method == "GET" and e.http.status == 200 for e in cassette.exchanges
            ),
            notes=notes,
        )


def _eras(cassette: Cassette, notes: list[str]) -> tuple[str, ...]:
    """The eras a replay speaks: each one the server spoke while recording, or was never asked to speak.

    An era is refused when the server answered its opening with no result (a `server/discover` probe
    refused, as by a server of the handshake era only; an `initialize` refused, as by one of the
    stateless era only) and spoke it nowhere else: the replay refuses it too, so that a client
    choosing its era (the SDK client, a bridge in 'auto') chooses as it did against the live server.
    """
    spoken = {exchange.era for exchange in cassette.exchanges if exchange.result is not None}
    opening = {HANDSHAKE: "initialize", STATELESS: "server/discover"}
    refused = {
        era for era, method in opening.items() if era not in spoken and any(map(_refused, cassette.requests(method)))
    }
    served = tuple(era for era in ERAS if era not in refused)
    if not served:
        notes.append("the server refused both initialize and server/discover while recording: both eras are served")
        return ERAS
    for era in sorted(refused):
        notes.append(
            f"the server refused {opening[era]} while recording: the replay does not speak the {era} era either"
        )
    unasked = [era for era in served if era not in spoken]
    if unasked and spoken:
        notes.append(
            f"recorded in the {' and '.join(sorted(spoken))} era only: the replay also speaks the "
            f"{' and '.join(unasked)} era, its answers shaped for it"
        )
    return served


def _refused(exchange: Exchange) -> bool:
    """Whether the server answered a request with a refusal: a JSON-RPC error, or a 4xx. A request that got no
    answer (the upstream unreachable, a 5xx of a proxy or the server itself) says nothing about its era."""
    if exchange.error is not None or exchange.result is not None:
        return False
    status = exchange.http.status if exchange.http is not None else None
    return exchange.rpc_error is not None or (status is not None and 400 <= status < 500)


def _cache(cassette: Cassette) -> dict[str, Any]:
    """The cache hints the first recorded stateless `tools/list` (or discover) gave, as `TestMcpServer` settings."""
    for exchange in [*cassette.requests("tools/list"), *cassette.requests("server/discover")]:
        result = exchange.result
        if exchange.era != STATELESS or result is None:
            continue
        hints: dict[str, Any] = {}
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0:
            hints["cache_ttl_ms"] = ttl
        if scope in ("public", "private"):
            hints["cache_scope"] = scope
        return hints
    return {}


def _first_result(cassette: Cassette, method: str) -> dict[str, Any] | None:
    return next((e.result for e in cassette.requests(method) if e.result is not None), None)


def _server_info(
    cassette: Cassette, initialize: dict[str, Any] | None, discover: dict[str, Any] | None, notes: list[str]
) -> dict[str, Any]:
    if initialize is not None and isinstance(initialize.get("serverInfo"), dict):
        return dict(initialize["serverInfo"])
    for exchange in cassette.exchanges:
        meta = (exchange.result or {}).get("_meta")
        if isinstance(meta, dict) and isinstance(meta.get(SERVER_INFO_KEY), dict):
            return dict(meta[SERVER_INFO_KEY])
    name = Path(cassette.source).stem or "replay"
    notes.append(f"no serverInfo was recorded: the replay calls itself {name!r}")
    return {"name": name, "version": "0"}


def _catalogue(cassette: Cassette, notes: list[str]) -> tuple[list[dict[str, Any]], int | None, bool]:
    """Every tool listed on any recorded page (first definition wins), the page size as recorded, and
    whether the recording read every page (each cursor the server offered was followed)."""
    tools: dict[str, dict[str, Any]] = {}
    changed: set[str] = set()
    page_size: int | None = None
    sizes: list[int] = []
    offered: set[str] = set()
    followed: set[Any] = set()
    for exchange in cassette.requests("tools/list"):
        followed.add(exchange.params.get("cursor"))
        result = exchange.result
        listed = result.get("tools") if result is not None else None
        if not isinstance(listed, list):
            continue
        if result is not None and result.get("nextCursor"):
            sizes.append(len(listed))
            offered.add(result["nextCursor"])
        for tool in listed:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            known = tools.setdefault(tool["name"], tool)
            if known != tool:
                changed.add(tool["name"])
    if sizes:
        page_size = sizes[0]
        if len(set(sizes)) > 1:
            notes.append(f"recorded pages held {', '.join(map(str, sizes))} tools: replayed as pages of {page_size}")
    if changed:
        notes.append(f"tools {sorted(changed)} changed between recorded listings: the first definition is replayed")
    complete = bool(tools) and offered <= followed
    if tools and not complete:
        notes.append(
            f"the recording did not read every page of the listing: the replay serves the {len(tools)} tools it saw"
        )
    return list(tools.values()), page_size, complete


def _capabilities(recorded: Any, has_tools: bool, notes: list[str]) -> dict[str, Any]:
    recorded = recorded if isinstance(recorded, dict) else {}
    kept = {name: recorded[name] for name in _SERVED_CAPABILITIES if name in recorded}
    dropped = sorted(set(recorded) - set(kept))
    if dropped:
        notes.append(f"capabilities {', '.join(dropped)} were recorded, but a replay serves tools only: left out")
    if has_tools and "tools" not in kept:
        kept["tools"] = {}
    return kept


def _note_unserved(cassette: Cassette, notes: list[str]) -> None:
    methods = Counter(e.method for e in cassette.exchanges if e.method and _is_request(e.request))
    unserved = {method: count for method, count in methods.items() if method not in _SERVED_METHODS}
    if unserved:
        listed = ", ".join(f"{method} ({count})" for method, count in sorted(unserved.items()))
        notes.append(f"a replay does not serve these recorded methods (it answers -32601): {listed}")
    asked = sorted({m["method"] for e in cassette.exchanges for m in e.events if _is_request(m)})
    if asked:
        notes.append(f"the server sent requests while recording ({', '.join(asked)}); a replay does not send them")


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def _framing(cassette: Cassette) -> dict[str, str]:
    """How each method's answers were framed while recording (json or sse), by majority."""
    seen: dict[str, Counter[str]] = {}
    for exchange in cassette.exchanges:
        http = exchange.http
        if http is None or exchange.method is None or http.framing not in ("json", "sse") or http.status != 200:
            continue
        seen.setdefault(exchange.method, Counter())[http.framing] += 1
    return {method: counts.most_common(1)[0][0] for method, counts in seen.items()}


# -- matching --------------------------------------------------------------------------------------------------------


def arguments_match(recorded: Any, sent: Any) -> bool:
    """JSON equality, where a recorded string holding a redaction placeholder matches any value in its place."""
    if is_placeholder_text(recorded):
        if not isinstance(sent, str):
            return False  # redaction only ever replaced text
        pattern = "".join(
            ".+?" if re.fullmatch(r"<redacted:[^<>\s]+>", part) else re.escape(part)
            for part in re.split(r"(<redacted:[^<>\s]+>)", recorded)
        )
        return re.fullmatch(pattern, sent, re.S) is not None
    if isinstance(recorded, dict):
        return (
            isinstance(sent, dict)
            and recorded.keys() == sent.keys()
            and all(arguments_match(recorded[key], sent[key]) for key in recorded)
        )
    if isinstance(recorded, list):
        return (
            isinstance(sent, list)
            and len(recorded) == len(sent)
            and all(arguments_match(a, b) for a, b in zip(recorded, sent, strict=True))
        )
    if isinstance(recorded, bool) or isinstance(sent, bool):
        return recorded is sent
    return bool(recorded == sent)  # numbers by value: 1 and 1.0 are one JSON number


def _canonical(value: Any) -> Any:
    """A JSON value with integral floats as ints, so that equal numbers have one text."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    return json.dumps([tool, _canonical(arguments)], sort_keys=True, separators=(",", ":"))


class _CallIndex:
    """The recorded calls by tool, and by tool and arguments, so a call is matched without a scan.

    Calls whose arguments hold a redaction placeholder cannot be keyed by their text; they are
    tried one by one, but only against calls of their own tool.
    """

    def __init__(self, calls: Sequence[RecordedCall]) -> None:
        self.calls = list(calls)
        self.by_tool: dict[str, list[RecordedCall]] = {}
        self.exact: dict[str, list[RecordedCall]] = {}
        self.wild: dict[str, list[RecordedCall]] = {}
        for call in self.calls:
            self.by_tool.setdefault(call.tool, []).append(call)
            if is_placeholder_text(json.dumps(call.arguments)):
                self.wild.setdefault(call.tool, []).append(call)
            else:
                self.exact.setdefault(_key(call.tool, call.arguments), []).append(call)

    def matching(self, tool: str, arguments: Mapping[str, Any]) -> list[RecordedCall]:
        """The recorded calls of `tool` whose arguments match, in recorded order."""
        found = self.exact.get(_key(tool, arguments), [])
        wild = [call for call in self.wild.get(tool, ()) if arguments_match(call.arguments, arguments)]
        return sorted([*found, *wild], key=lambda call: call.seq) if wild else found


class _Matching:
    """Which recorded call answers each call: one instance per server state, so `reset()` starts over."""

    def __init__(self, index: _CallIndex, match: str | Matcher, source: str) -> None:
        self.index = index
        self.calls = index.calls
        self.match_mode = match
        self.source = source
        self._played: Counter[int] = Counter()
        self._next = 0

    @property
    def mode_name(self) -> str:
        return self.match_mode if isinstance(self.match_mode, str) else getattr(self.match_mode, "__name__", "custom")

    def match(self, tool: str, arguments: Mapping[str, Any]) -> RecordedCall:
        """The recorded call that answers this one; UnmatchedCall naming the nearest when there is none."""
        mode = self.match_mode
        found: RecordedCall | None
        if mode == "in_order":
            expected = self.calls[self._next] if self._next < len(self.calls) else None
            if expected is not None and expected.tool == tool and arguments_match(expected.arguments, arguments):
                self._next += 1
                return expected
            if expected is None:
                nearest = f"all {len(self.calls)} recorded calls were already replayed"
            else:
                nearest = f"the next recorded call is {expected.describe()}"
            raise UnmatchedCall(self.source, tool, arguments, "in_order", nearest)
        if mode == "exact":
            found = self._next_of(self.index.matching(tool, arguments))
        elif mode == "by_tool":
            found = self._next_of(self.index.by_tool.get(tool, []))
        else:
            assert callable(mode)
            found = mode(tool, arguments, list(self.index.by_tool.get(tool, [])))
        if found is None:
            raise UnmatchedCall(self.source, tool, arguments, self.mode_name, self.nearest(tool, arguments))
        return found

    def _next_of(self, candidates: list[RecordedCall]) -> RecordedCall | None:
        """Recorded answers to the same call replay in order, the last one repeating."""
        if not candidates:
            return None
        key = candidates[0].seq
        index = min(self._played[key], len(candidates) - 1)
        self._played[key] += 1
        return candidates[index]

    def nearest(self, tool: str, arguments: Mapping[str, Any], limit: int = 3) -> str:
        """The recorded calls most like this one, as a near-miss message lists them."""
        if not self.calls:
            return "the cassette holds no tools/call at all"

        def likeness(call: RecordedCall) -> tuple[int, int, int]:
            same = sum(1 for k, v in arguments.items() if k in call.arguments and arguments_match(call.arguments[k], v))
            shared = len(set(arguments) & set(call.arguments))
            return (int(call.tool == tool), same, shared)

        ranked = sorted(self.calls, key=lambda call: (likeness(call), -call.seq), reverse=True)
        unique: dict[str, RecordedCall] = {}
        for call in ranked:
            unique.setdefault(json.dumps([call.tool, call.arguments], sort_keys=True), call)
        shown = list(unique.values())[:limit]
        return "nearest recorded calls: " + "; ".join(call.describe() for call in shown)


def check_match(match: Any) -> str | Matcher:
    if callable(match) or match in MATCH_MODES:
        return match  # type: ignore[no-any-return]
    raise ValueError(f"match must be one of {', '.join(MATCH_MODES)} or a callable, not {match!r}")


# -- answering -------------------------------------------------------------------------------------------------------


def handshake_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded result as a handshake-era client gets it: without the fields the stateless era adds."""
    answer = {key: value for key, value in result.items() if key not in _STATELESS_FIELDS}
    meta = answer.get("_meta")
    if isinstance(meta, dict) and SERVER_INFO_KEY in meta:
        meta = {key: value for key, value in meta.items() if key != SERVER_INFO_KEY}
        if meta:
            answer["_meta"] = meta
        else:
            del answer["_meta"]
    return answer


def answer_of(call: RecordedCall, era: str = HANDSHAKE) -> RawResult:
    """The recorded answer of a call as a client of `era` gets it (a JSON-RPC error is raised).

    A stateless-era client gets the result as recorded (the transport adds what its era requires to a
    result recorded in the handshake era); a handshake-era client gets it without the stateless era's
    fields, and a JSON-RPC error for a result it has no way to read (`input_required`).
    """
    if call.error is not None:
        error = call.error
        raise JsonRpcError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
    assert call.result is not None
    if era == STATELESS:
        return RawResult(call.result)
    if call.result.get("resultType") not in (None, "complete"):
        raise JsonRpcError(
            -32603,
            f"recorded call {call.describe()} answered resultType {call.result.get('resultType')!r} "
            "(2026-07-28 era); a handshake-era client cannot be given it",
        )
    return RawResult(handshake_result(call.result))


async def replay_events(call: RecordedCall, context: ToolContext) -> None:
    """Send again what the server sent during the recorded call: progress (to this call's token) and log messages.

    Log messages follow the request's era: a 2026-07-28 request naming no log level gets those the server
    sent unasked in that same era while recording, and none recorded in the handshake era (the spec's rule:
    the recording cannot tell what the server would have done).
    """
    if context.era == STATELESS and call.era == STATELESS and not context.logs:
        context = dataclasses.replace(context, logs=True)
    for event in call.events:
        if not isinstance(event, dict) or "id" in event:
            continue
        params = event.get("params") if isinstance(event.get("params"), dict) else {}
        assert isinstance(params, dict)
        if event.get("method") == "notifications/progress" and isinstance(params.get("progress"), (int, float)):
            await context.progress(params["progress"], params.get("total"), params.get("message"))
        elif event.get("method") == "notifications/message" and isinstance(params.get("level"), str):
            await context.log(params["level"], params.get("data"), params.get("logger"))


# -- the server ------------------------------------------------------------------------------------------------------


class CassetteServer(TestMcpServer):
    """A `TestMcpServer` replaying a cassette; made by `TestMcpServer.from_cassette`.

    `cassette` is what it replays, `script` what was derived from it, `notes` where the recording
    could not be replayed as is (methods a replay does not serve, another era's fields...).
    """

    __test__ = False

    def __init__(
        self,
        cassette: Cassette,
        *,
        match: str | Matcher = "exact",
        forward: _Forwarding | None = None,
        **settings: Any,
    ) -> None:
        self.cassette = cassette
        self.script = ReplayScript.from_cassette(cassette)
        self._match = check_match(match)
        self._index = _CallIndex(self.script.calls)
        self._forwarding = forward
        self._matching: _Matching | None = None
        info = self.script.server_info
        settings.setdefault("name", str(info.get("name") or "replay"))
        settings.setdefault("version", str(info.get("version") or "0"))
        if settings.get("page_size", _RECORDED) is _RECORDED:
            settings["page_size"] = self.script.page_size
        if "response_mode" not in settings:
            noisy = {call.tool for call in self.script.calls if any(not _is_request(e) for e in call.events)}
            framing = dict(self.script.framing)
            if forward is not None:
                framing["tools/call"] = "sse"  # a call sent on to the live server may send notifications first
            settings["response_mode"] = _mode_of(framing, noisy)
        settings.setdefault("get_stream", self.script.get_stream)
        settings.setdefault("eras", self.script.eras)
        for key, value in self.script.cache.items():
            settings.setdefault(key, value)
        super().__init__(**settings)

    @property
    def notes(self) -> list[str]:
        return list(self.script.notes)

    def _fresh_state(self) -> ServerState:
        state = super()._fresh_state()
        state.initialize_result = self.script.initialize_result()
        state.discover_result = self.script.discover_result(spoken_versions(state.eras))
        matching = self._matching = _Matching(self._index, self._match, self.cassette.source)
        for definition in self.script.tools:
            name = definition["name"]
            state.tools[name] = ScriptedTool(name=name, definition=definition, answers=[self._answerer(name, matching)])
        state.catalogue_changed()
        return state

    def _answerer(self, tool: str, matching: _Matching) -> Callable[..., Any]:
        async def answer(arguments: dict[str, Any], context: ToolContext) -> Any:
            try:
                call = matching.match(tool, arguments)
            except UnmatchedCall:
                if self._forwarding is None:
                    raise
                call = await self._forwarding.call(tool, arguments, context)
            await replay_events(call, context)
            return answer_of(call, context.era)

        return answer

    def unmatched(self) -> list[UnmatchedCall]:
        """The calls no recorded call matched, oldest first."""
        return [error for error in self.errors if isinstance(error, UnmatchedCall)]

    def check(self, *, unused_faults: bool = False) -> None:
        """As `TestMcpServer.check`, and first: fail listing every call that matched no recorded one."""
        misses = self.unmatched()
        if misses:
            where = f"server {self.name!r} (cassette {self.cassette.source})"
            lines = [f"{where}: {len(misses)} call(s) matched no recorded call:"]
            lines.extend(f"  {miss}" for miss in misses)
            raise AssertionError("\n".join(lines))
        super().check(unused_faults=unused_faults)

    def save(self) -> Cassette | None:
        """Write what a recording replay added (the pytest record modes); None when nothing new was recorded."""
        return self._forwarding.save() if self._forwarding is not None else None

    def close_upstream(self) -> None:
        """End the live session a recording replay holds, if any."""
        if self._forwarding is not None:
            self._forwarding.close()


def _mode_of(framing: Mapping[str, str], noisy: set[str]) -> Any:
    """The replay's `response_mode`: each method framed as recorded, and SSE for a call of a tool that sent
    notifications while recording, so that they reach the client during the call as they did."""
    counts = Counter(framing.values())
    default = counts.most_common(1)[0][0] if counts else "json"
    if len(counts) <= 1 and (not noisy or default == "sse"):
        return default
    table = dict(framing)

    def by_request(record: Any) -> str:
        if record.rpc_method == "tools/call" and record.tool in noisy:
            return "sse"
        return table.get(record.rpc_method, default)

    return by_request


# -- recording replays (pytest's record modes) ---------------------------------------------------------------------


class _Forwarding:
    """Where a recording replay sends the calls its cassette lacks, and the cassette it writes when done."""

    def __init__(
        self,
        session: UpstreamSession,
        redactor: Redactor,
        out: Path,
        base: Cassette | None,
    ) -> None:
        self.session = session
        self.redactor = redactor
        self.out = out
        self.base = base
        self._opened = base is None

    def call_sync(
        self, tool: str, arguments: Mapping[str, Any], relay: Callable[[Any], None], progress_token: Any = None
    ) -> RecordedCall:
        if not self._opened:
            self.session.open()
            self._opened = True
        exchange = self.session.call_tool(tool, arguments, on_event=relay, progress_token=progress_token)
        return _recorded(exchange)

    async def call(self, tool: str, arguments: Mapping[str, Any], context: ToolContext) -> RecordedCall:
        """Send the call on to the live server, relaying its progress (when the client asked for progress,
        so does the forwarded call) and log messages to the client as they come."""
        import anyio.from_thread
        import anyio.to_thread

        def relay(event: Any) -> None:
            if isinstance(event, dict) and event.get("method") in ("notifications/message", "notifications/progress"):
                anyio.from_thread.run(replay_events, _event_call(event, self.session.era), context)

        token = context.progress_token
        token = token if isinstance(token, (str, int)) and not isinstance(token, bool) else None
        call = await anyio.to_thread.run_sync(lambda: self.call_sync(tool, arguments, relay, token))
        # Relayed live above; the recorded events are kept in the cassette, not sent twice.
        return dataclasses.replace(call, events=())

    def recorded(self) -> list[Exchange]:
        """What this recording adds to the cassette: everything when recording anew, the calls otherwise."""
        exchanges = self.session.link.tape.exchanges
        if self.base is None:
            return exchanges
        return [exchange for exchange in exchanges if exchange.method == "tools/call"]

    def save(self) -> Cassette | None:
        from mcp_testkit.cassettes._redact import save

        added = self.recorded()
        if self.base is not None and not added:
            return None
        upstream = {"transport": "http", "url": getattr(self.session.link, "url", "")}
        if self.session.link.transport == "stdio":
            upstream = {"transport": "stdio", "command": list(getattr(self.session.link, "command", []))}
        fresh = self.session.link.tape.cassette(upstream)
        if self.base is not None:
            last_seq = max((e.seq for e in self.base.exchanges), default=0)
            last_at = max((e.at_ms for e in self.base.exchanges), default=0.0)
            renumbered = [
                dataclasses.replace(e, seq=last_seq + i, at_ms=round(last_at + e.at_ms, 1))
                for i, e in enumerate(added, start=1)
            ]
            fresh = dataclasses.replace(
                self.base, exchanges=[*self.base.exchanges, *renumbered], recorded_at=fresh.recorded_at
            )
        return save(fresh, self.out, self.redactor)

    def close(self) -> None:
        self.session.close()


def _event_call(event: Mapping[str, Any], era: str) -> RecordedCall:
    """A live event as a recorded call of the upstream session's era, to be relayed as a replayed one is."""
    return RecordedCall(seq=0, tool="", arguments={}, result=None, error=None, era=era, events=(event,))


def _recorded(exchange: Exchange) -> RecordedCall:
    arguments = exchange.params.get("arguments")
    return RecordedCall(
        seq=exchange.seq,
        tool=str(exchange.params.get("name")),
        arguments=arguments if isinstance(arguments, dict) else {},
        result=exchange.result,
        error=exchange.rpc_error,
        era=exchange.era,
        events=tuple(exchange.events),
    )


def replay(cassette: str | Path | Cassette, *, match: str | Matcher = "exact", **settings: Any) -> CassetteServer:
    """A `TestMcpServer` replaying `cassette` (a path or a loaded `Cassette`); see `TestMcpServer.from_cassette`."""
    loaded = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
    if not loaded.exchanges:
        raise CassetteError(f"cassette {loaded.source}: holds no exchange, so there is nothing to replay")
    return CassetteServer(loaded, match=match, **settings)
