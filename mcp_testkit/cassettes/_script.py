"""Reading a cassette for replay: what it replays (`ReplayScript`: info, capabilities, catalogue, calls, eras,
framing, cache hints) and notes on what it cannot replay as recorded."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_testkit._wire.eras import ERAS, HANDSHAKE, SERVER_INFO_KEY, STATELESS
from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._format import Cassette
from mcp_testkit.cassettes._offerings import OFFERING_METHODS, offering_notes
from mcp_testkit.upstream import Exchange

__all__ = ["ReplayScript", "is_request"]

_SERVED_METHODS = frozenset(
    {"initialize", "ping", "tools/list", "tools/call", "logging/setLevel", "server/discover", *OFFERING_METHODS}
)
_SERVED_CAPABILITIES = ("tools", "logging")
_INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
"""Server requests a replay sends again when the call that sent them holds its inputs (`Exchange.inputs`)."""
_OFFERED_CAPABILITIES = {
    "resources": ("resources/list", "resources/templates/list", "resources/read"),
    "prompts": ("prompts/list", "prompts/get"),
    "completions": ("completion/complete",),
}
"""Capabilities a replay keeps when the recording holds requests of that kind (it answers them as recorded)."""


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
    """The stateless era's cache hints as recorded (`cache_ttl_s`, `cache_scope` of `TestMcpServer`)."""
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
        notes.extend(offering_notes(cassette))
        _note_unserved(cassette, notes)
        capabilities = _capabilities(opened.get("capabilities"), bool(tools), notes, cassette)
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
            hints["cache_ttl_s"] = ttl / 1000
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


def _capabilities(recorded: Any, has_tools: bool, notes: list[str], cassette: Cassette) -> dict[str, Any]:
    recorded = recorded if isinstance(recorded, dict) else {}
    kept = {name: recorded[name] for name in _SERVED_CAPABILITIES if name in recorded}
    for name, methods in _OFFERED_CAPABILITIES.items():
        if name in recorded and any(cassette.requests(method) for method in methods):
            kept[name] = _unsubscribed(recorded[name])
    dropped = sorted(set(recorded) - set(kept))
    unasked = [name for name in dropped if name in _OFFERED_CAPABILITIES]
    if unasked:
        notes.append(
            f"capabilities {', '.join(unasked)} were recorded, but no request of theirs: a replay cannot answer "
            "them, so it leaves them out"
        )
    others = [name for name in dropped if name not in _OFFERED_CAPABILITIES]
    if others:
        notes.append(f"capabilities {', '.join(others)} were recorded, but a replay does not serve them: left out")
    if has_tools and "tools" not in kept:
        kept["tools"] = {}
    return kept


def _unsubscribed(capability: Any) -> Any:
    """A capability without the change notices a replay never sends (`subscribe`, `listChanged`)."""
    if not isinstance(capability, dict):
        return capability
    return {key: value for key, value in capability.items() if key not in ("subscribe", "listChanged")}


def _note_unserved(cassette: Cassette, notes: list[str]) -> None:
    methods = Counter(e.method for e in cassette.exchanges if e.method and is_request(e.request))
    unserved = {method: count for method, count in methods.items() if method not in _SERVED_METHODS}
    for method, count in sorted(unserved.items()):
        if method in ("resources/subscribe", "resources/unsubscribe"):
            notes.append(
                f"a replay answers {method} ({count} recorded) with an empty result, but never sends "
                "notifications/resources/updated: the recording cannot say when the resource changed"
            )
        else:
            notes.append(f"a replay does not serve {method} ({count} recorded): it answers -32601 (Method not found)")
    asked = sorted({
        m["method"] for e in cassette.exchanges for m in e.events
        if is_request(m) and not (e.inputs and m["method"] in _INPUT_METHODS)
    })  # fmt: skip
    if asked:
        notes.append(f"the server sent requests while recording ({', '.join(asked)}); a replay does not send them")


def is_request(message: Any) -> bool:
    """Whether a JSON-RPC message is a request (it has a method and an id)."""
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
