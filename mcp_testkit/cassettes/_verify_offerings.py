"""Verify, for what a server offers besides tools: its listings of resources, templates and prompts compared with
the recorded ones, and each distinct recorded `resources/read`, `prompts/get` and `completion/complete` sent again
(none of them changes anything on a server) and its answer compared; and the recorded methods verify compares at
all, so that its report can name the others."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit.cassettes._answers import handshake_result
from mcp_testkit.cassettes._offerings import request_key
from mcp_testkit.cassettes._script import is_request

if TYPE_CHECKING:
    from mcp_testkit.cassettes._format import Cassette
    from mcp_testkit.upstream import Exchange, UpstreamSession

__all__ = ["COMPARED_METHODS", "LISTINGS", "compare_offerings", "not_compared"]

LISTINGS = (
    ("resources/list", "resources", "uri", "resource"),
    ("resources/templates/list", "resourceTemplates", "uriTemplate", "resource template"),
    ("prompts/list", "prompts", "name", "prompt"),
)
"""Each listing: its method, the result's key, what names an entry, and what an entry is called in the report."""
_SENT_AGAIN = ("resources/read", "prompts/get", "completion/complete")
COMPARED_METHODS = frozenset(
    {"initialize", "server/discover", "tools/list", "tools/call", *(m for m, *_ in LISTINGS), *_SENT_AGAIN}
)
"""The recorded methods verify compares with the live server."""
_MAX_PAGES = 100
Found = tuple[str, str, bool]


def not_compared(cassette: Cassette) -> list[str]:
    """The recorded request methods verify does not compare, each with how many were recorded."""
    methods = Counter(e.method for e in cassette.exchanges if e.method and is_request(e.request))
    found = [f"{method} ({n} recorded)" for method, n in sorted(methods.items()) if method not in COMPARED_METHODS]
    asking = Counter(call.tool for call in cassette.calls() if call.inputs)
    if asking:  # nobody would answer the live server's questions: not sent again
        tools = ", ".join(f"{tool} ({n} recorded)" for tool, n in sorted(asking.items()))
        found.append(f"tools/call with input rounds: {tools}")
    return found


def compare_offerings(cassette: Cassette, session: UpstreamSession, normal: Any, report: Any) -> list[Found]:
    """What changed in the listings and answers the cassette recorded, as (subject, detail, breaking); counts what
    it compared in `report`. `normal(value)` is a value as the cassette's redaction left it."""
    found: list[Found] = []
    for method, key, ident, what in LISTINGS:
        if not cassette.requests(method):
            continue
        recorded = _recorded_entries(cassette, method, key, ident)
        live, error = _live_entries(session, method, key, ident)
        if error is not None:
            found.append((method, f"answered a listing, now {error}", True))
            continue
        for name in recorded:
            if name not in live:
                found.append((f"{what} {name}", "removed", True))
        for name in live:
            if name not in recorded:
                found.append((f"{what} {name}", "added", False))
        for name, entry in recorded.items():
            if name in live:
                report.offerings_compared[what] = report.offerings_compared.get(what, 0) + 1
                for detail, breaking in _entry_changes(entry, live[name]):
                    found.append((f"{what} {name}", detail, breaking))
    sent: set[tuple[str, str]] = set()
    for method in _SENT_AGAIN:
        for exchange in cassette.requests(method):
            params = {k: v for k, v in exchange.params.items() if k != "_meta"}
            asked = (method, request_key(method, params))
            if asked in sent or (exchange.result is None and exchange.rpc_error is None):
                continue
            sent.add(asked)
            answer = session.request(method, params)
            report.requests_compared += 1
            subject = f"{method} {json.dumps(params, sort_keys=True)}"
            found.extend((subject, detail, breaking) for detail, breaking in _answer_changes(exchange, answer, normal))
    return found


def _recorded_entries(cassette: Cassette, method: str, key: str, ident: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for exchange in cassette.requests(method):
        listed = (exchange.result or {}).get(key)
        for entry in listed if isinstance(listed, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get(ident), str):
                found.setdefault(entry[ident], entry)
    return found


def _live_entries(
    session: UpstreamSession, method: str, key: str, ident: str
) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Every entry of the live listing, all pages walked; or what the server answered instead of a page."""
    found: dict[str, dict[str, Any]] = {}
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        exchange = session.request(method, {"cursor": cursor} if cursor is not None else None)
        result = exchange.result
        if result is None or not isinstance(result.get(key), list):
            error = exchange.rpc_error
            return found, f"JSON-RPC error {error.get('code')}" if error is not None else "no page"
        for entry in result[key]:
            if isinstance(entry, dict) and isinstance(entry.get(ident), str):
                found.setdefault(entry[ident], entry)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
    return found, None


def _entry_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """A listing entry's changes: a MIME type or a prompt's arguments can break a client; wording cannot."""
    changes: list[tuple[str, bool]] = []
    if old.get("mimeType") != new.get("mimeType"):
        changes.append((f"mimeType {old.get('mimeType')!r} -> {new.get('mimeType')!r}", True))
    before = {a.get("name"): a for a in old.get("arguments") or () if isinstance(a, dict)}
    after = {a.get("name"): a for a in new.get("arguments") or () if isinstance(a, dict)}
    for name in before:
        if name not in after:
            changes.append((f"argument {name!r} removed", True))
    for name in after:
        if name not in before:
            required = bool(after[name].get("required"))
            changes.append((f"new {'required ' if required else ''}argument {name!r}", required))
        elif bool(after[name].get("required")) and not before[name].get("required"):
            changes.append((f"argument {name!r} became required", True))
    rest = sorted(k for k in set(old) | set(new) if k not in ("mimeType", "arguments") and old.get(k) != new.get(k))
    changes.extend((f"{k} changed", False) for k in rest)
    return changes


def _answer_changes(recorded: Exchange, live: Exchange, normal: Any) -> list[tuple[str, bool]]:
    was, now = recorded.rpc_error, live.rpc_error
    if was is not None or now is not None:
        if was is None:
            return [(f"answered a result, now JSON-RPC error {now.get('code') if now else None}", True)]
        if now is None:
            return [(f"answered JSON-RPC error {was.get('code')}, now a result" if live.result is not None
                     else f"answered JSON-RPC error {was.get('code')}, now nothing", live.result is None)]  # fmt: skip
        if was.get("code") == now.get("code"):
            return []
        return [(f"JSON-RPC error {was.get('code')} -> {now.get('code')}", False)]
    if live.result is None:
        return [("answered a result, now nothing", True)]
    assert recorded.result is not None
    before, after = normal(handshake_result(recorded.result)), normal(handshake_result(live.result))
    if before == after:
        return []
    kinds = [_kinds(result) for result in (before, after)]
    if kinds[0] != kinds[1]:
        return [(f"content {kinds[0]} -> {kinds[1]}", True)]
    return [("answer changed", False)]


def _kinds(result: Mapping[str, Any]) -> list[Any]:
    """The shape of an answer: its contents' kinds (text or blob), its messages' content types, its completion."""
    kinds: list[Any] = []
    for entry in result.get("contents") or ():
        if isinstance(entry, dict):
            kinds.append("blob" if "blob" in entry else "text" if "text" in entry else "?")
    for message in result.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        kinds.append(content.get("type") if isinstance(content, dict) else None)
    return kinds
