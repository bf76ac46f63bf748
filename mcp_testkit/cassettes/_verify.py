"""Verify: send a cassette's requests to the live server again and report what changed since it was recorded.

Tools added or removed, input and output schema changes, annotation changes, and different answers
to read-only calls (a write is never sent to a live server); resources, templates, prompts and their
answers (`_verify_offerings`); and the recorded methods it did not compare, named. A change that can break a client is
marked breaking: a tool removed, a property removed or newly required, a read that became a write,
an answer whose shape changed. Everything else is reported as a plain change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from mcp_testkit._wire.eras import HANDSHAKE, SERVER_INFO_KEY, STATELESS
from mcp_testkit._wire.terminal import printable
from mcp_testkit.cassettes._answers import handshake_result
from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._format import Cassette
from mcp_testkit.cassettes._placeholders import PLACEHOLDER
from mcp_testkit.cassettes._redact import Redactor, Scrub
from mcp_testkit.cassettes._script import ReplayScript
from mcp_testkit.cassettes._verify_offerings import compare_offerings, not_compared
from mcp_testkit.upstream import StdioUpstream, UpstreamSession, describe_upstream, open_upstream

__all__ = ["Change", "VerifyReport", "verify"]

_HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
# A hint moving this way makes a tool more dangerous than a client was told: breaking.
_RISKIER = {"readOnlyHint": (True, False), "destructiveHint": (False, True), "idempotentHint": (True, False)}
_WORDING = frozenset({"description", "title", "examples", "$comment"})


@dataclass(frozen=True)
class Change:
    """One difference between the cassette and the live server."""

    subject: str
    """What changed: `tool NAME`, a call `NAME({...})`, or `server`."""
    detail: str
    breaking: bool = False

    def line(self) -> str:
        """The change as `verify` prints it; names and texts from a server or a file have control characters escaped."""
        mark, note = ("!", " (breaking)") if self.breaking else ("~", "")
        return printable(f"  {mark} {self.subject}: {self.detail}{note}")


@dataclass
class VerifyReport:
    """What `verify` found: the changes, and how much it compared."""

    source: str
    upstream: str
    changes: list[Change] = field(default_factory=list)
    tools_compared: int = 0
    calls_compared: int = 0
    skipped: list[str] = field(default_factory=list)
    offerings_compared: dict[str, int] = field(default_factory=dict)
    """Listed resources, resource templates and prompts compared, by kind."""
    requests_compared: int = 0
    """Recorded `resources/read`, `prompts/get` and `completion/complete` requests sent again."""
    not_compared: list[str] = field(default_factory=list)
    """Recorded methods verify does not compare, with how many were recorded."""

    @property
    def breaking(self) -> list[Change]:
        return [change for change in self.changes if change.breaking]

    @property
    def exit_status(self) -> int:
        """1 when a change is breaking, else 0."""
        return 1 if self.breaking else 0

    def format(self) -> str:
        """The report as `verify` prints it, one line per change, control characters escaped."""
        lines = [printable(f"mcp-testkit verify: cassette {self.source} against {self.upstream}")]
        lines.extend(change.line() for change in self.changes)
        tools, calls = _count(self.tools_compared, "tool"), _count(self.calls_compared, "read-only call")
        summary = f"{tools} compared, {calls} sent"
        if self.offerings_compared or self.requests_compared:
            kinds = ", ".join(_count(number, kind) for kind, number in self.offerings_compared.items())
            summary += f"; {kinds or 'no listed entry'} compared, {_count(self.requests_compared, 'read')} sent"
        if self.skipped:
            summary += "; not sent: " + "; ".join(self.skipped)
        if self.not_compared:
            summary += "; not compared: " + ", ".join(self.not_compared)
        lines.append(printable(summary))
        breaking = len(self.breaking)
        if breaking:
            lines.append(_count(breaking, "breaking change"))
        elif self.changes:
            lines.append(f"no breaking change ({_count(len(self.changes), 'other change')})")
        else:
            lines.append("no change")
        return "\n".join(lines)


def _count(number: int, thing: str) -> str:
    return f"{number} {thing}{'s' * (number != 1)}"


def verify(
    cassette: str | Path | Cassette,
    upstream: str | Sequence[str],
    *,
    headers: Mapping[str, str] | None = None,
    scrub: Scrub | None = None,
    upstream_stderr: TextIO | None = None,
) -> VerifyReport:
    """Compare a cassette with the live server at `upstream` (a URL, or a stdio command); blocking.

    `scrub` is the hook the cassette was recorded with (`record(..., scrub=)`): each live answer goes through it
    before it is compared, so what it wrote as a placeholder is not reported as changed.

    A stdio server's stderr is kept off the terminal (the error quotes its telling line) unless `upstream_stderr`
    (e.g. `sys.stderr`) is given to pass it through.

    Raises `UpstreamError` when the live server cannot be reached or does not answer as MCP says.
    """
    loaded = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
    script = ReplayScript.from_cassette(loaded)
    link = open_upstream(upstream, headers=headers)
    if upstream_stderr is not None and isinstance(link, StdioUpstream):
        link.stderr.show(upstream_stderr)
    described = link.describe() if not isinstance(upstream, str) else describe_upstream(upstream)
    report = VerifyReport(loaded.source, described)
    initialize = next((e for e in loaded.requests("initialize") if e.result is not None), None)
    stateless = initialize is None and STATELESS in loaded.eras
    version = next((e.protocol_version for e in loaded.exchanges if e.era == STATELESS), None) if stateless else None
    session = UpstreamSession(link, era=STATELESS if stateless else HANDSHAKE, protocol_version=version)
    try:
        opened = session.open(initialize.params if initialize is not None else None)
        live_info = opened.get("serverInfo") or (opened.get("_meta") or {}).get(SERVER_INFO_KEY)
        _compare_info(script.server_info, live_info if isinstance(live_info, dict) else {}, report)
        live_tools = session.list_tools()
        recorded = {tool["name"]: tool for tool in script.tools}
        live = {tool["name"]: tool for tool in live_tools if isinstance(tool.get("name"), str)}
        _compare_catalogue(script, recorded, live, report)
        redactor = _live_redactor(loaded, scrub)
        _compare_calls(script, recorded, live, session, redactor, report)
        found = compare_offerings(loaded, session, lambda value: _normal(value, redactor), report)
        report.changes.extend(Change(subject, detail, breaking) for subject, detail, breaking in found)
        report.not_compared = not_compared(loaded)
    finally:
        session.close()
    return report


def _compare_info(recorded: Mapping[str, Any], live: Mapping[str, Any], report: VerifyReport) -> None:
    for key in ("name", "version"):
        if recorded.get(key) != live.get(key):
            report.changes.append(Change("server", f"{key} {recorded.get(key)!r} -> {live.get(key)!r}"))


def _compare_catalogue(
    script: ReplayScript,
    recorded: Mapping[str, dict[str, Any]],
    live: Mapping[str, dict[str, Any]],
    report: VerifyReport,
) -> None:
    for name in recorded:
        if name not in live:
            report.changes.append(Change(f"tool {name}", "removed", breaking=True))
    unread = "" if script.listing_complete else " (or on a page the recording never read)"
    for name in live:
        if name not in recorded:
            report.changes.append(Change(f"tool {name}", "added" + unread))
    for name in recorded:
        if name in live and name not in script.listed:
            report.skipped.append(f"the definition of {name} (it was called but never listed while recording)")
        elif name in live:
            report.tools_compared += 1
            for detail, breaking in _tool_changes(recorded[name], live[name]):
                report.changes.append(Change(f"tool {name}", detail, breaking))


def _tool_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, bool]]:
    inputs = _input_changes(old.get("inputSchema") or {}, new.get("inputSchema") or {})
    outputs = _output_changes(old.get("outputSchema"), new.get("outputSchema"))
    changes = [(f"input schema: {d}", b) for d, b in inputs]
    changes += [(f"output schema: {d}", b) for d, b in outputs]
    changes += _annotation_changes(old.get("annotations") or {}, new.get("annotations") or {})
    for key in ("title", "description"):
        if old.get(key) != new.get(key):
            changes.append((f"{key} changed", False))
    return changes


def _bare(schema: Any) -> Any:
    """A schema without its wording (descriptions, titles, examples), which no client depends on."""
    if isinstance(schema, dict):
        return {key: _bare(value) for key, value in schema.items() if key not in _WORDING}
    if isinstance(schema, list):
        return [_bare(item) for item in schema]
    return schema


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _input_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, bool]]:
    changes: list[tuple[str, bool]] = []
    before, after = old.get("properties") or {}, new.get("properties") or {}
    was, now = set(old.get("required") or ()), set(new.get("required") or ())
    for name in before:
        if name not in after:
            changes.append((f"property {name!r} removed", True))
    for name in after:
        if name not in before:
            required = name in now
            changes.append((f"new {'required ' if required else ''}property {name!r}", required))
    for name in sorted((now - was) & set(before)):
        changes.append((f"property {name!r} became required", True))
    for name in sorted((was - now) & set(after)):
        changes.append((f"property {name!r} is no longer required", False))
    for name in before:
        if name in after and before[name] != after[name]:
            if _bare(before[name]) != _bare(after[name]):
                was_schema, now_schema = _short(_bare(before[name])), _short(_bare(after[name]))
                changes.append((f"property {name!r}: {was_schema} -> {now_schema}", True))
            else:
                changes.append((f"property {name!r}: wording changed", False))
    rest = {"properties", "required"}
    for key in sorted((set(old) | set(new)) - rest):
        if old.get(key) != new.get(key):
            changes.append((f"{key!r} {_short(old.get(key))} -> {_short(new.get(key))}", key not in _WORDING))
    return changes


def _output_changes(old: Any, new: Any) -> list[tuple[str, bool]]:
    if old == new:
        return []
    if old is None:
        return [("added", False)]
    if new is None:
        return [("removed", True)]
    if _bare(old) == _bare(new):
        return [("wording changed", False)]
    return [(f"{_short(_bare(old))} -> {_short(_bare(new))}", True)]


def _annotation_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, bool]]:
    changes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, _HINT_DEFAULTS.get(key)), new.get(key, _HINT_DEFAULTS.get(key))
        if before != after:
            riskier = _RISKIER.get(key) == (before, after)
            changes.append((f"annotation {key} {_short(before)} -> {_short(after)}", riskier))
    return changes


def _live_redactor(cassette: Cassette, scrub: Scrub | None) -> Redactor:
    """The redaction the cassette was written with, so live answers are compared in the same terms."""
    redactions = cassette.redactions
    known_shapes = bool(redactions.get("known_shapes", True))
    return Redactor(redactions.get("patterns", ()), known_shapes=known_shapes, scrub=scrub)


def _compare_calls(
    script: ReplayScript,
    recorded: Mapping[str, dict[str, Any]],
    live: Mapping[str, dict[str, Any]],
    session: UpstreamSession,
    redactor: Redactor,
    report: VerifyReport,
) -> None:
    distinct: dict[str, RecordedCall] = {}
    for call in script.calls:
        if call.inputs:
            continue  # it asked the client for input: named as not compared
        distinct.setdefault(json.dumps([call.tool, call.arguments], sort_keys=True), call)
    not_read_only: list[str] = []
    for call in distinct.values():
        if call.tool not in live:
            continue  # reported as a removed tool
        # Read-only in the recorded listing and live; a tool never listed while recording is judged live.
        recorded_read_only = _read_only(recorded.get(call.tool)) or call.tool not in script.listed
        if not (recorded_read_only and _read_only(live[call.tool])):
            not_read_only.append(call.tool)
            continue
        if PLACEHOLDER.search(json.dumps(call.arguments)):
            report.skipped.append(f"{call.describe()} (its arguments hold redacted values)")
            continue
        exchange = session.call_tool(call.tool, call.arguments)
        report.calls_compared += 1
        subject = f"{call.tool}({json.dumps(call.arguments, sort_keys=True)})"
        answered = redactor.scrubbed(exchange.response)  # the user's hook, as the cassette's answer went through it
        for detail, breaking in _answer_changes(call, _part(answered, "result"), _part(answered, "error"), redactor):
            report.changes.append(Change(subject, detail, breaking))
    if not_read_only:
        names = ", ".join(sorted(set(not_read_only)))
        report.skipped.append(f"{_count(len(not_read_only), 'call')} to tools that are not read-only ({names})")


def _part(message: Any, key: str) -> dict[str, Any] | None:
    """A JSON-RPC answer's `result` or `error`, when it is an object."""
    found = message.get(key) if isinstance(message, dict) else None
    return found if isinstance(found, dict) else None


def _read_only(tool: Mapping[str, Any] | None) -> bool:
    annotations = (tool or {}).get("annotations") or {}
    return annotations.get("readOnlyHint") is True


def _normal(value: Any, redactor: Redactor) -> Any:
    """A result with live secrets redacted as the cassette's were, and every placeholder alike."""
    text = redactor.text(json.dumps(value, sort_keys=True))
    return json.loads(PLACEHOLDER.sub("<redacted>", text))


def _answer_changes(
    call: RecordedCall, result: Mapping[str, Any] | None, error: Mapping[str, Any] | None, redactor: Redactor
) -> list[tuple[str, bool]]:
    if call.error is not None or error is not None:
        if call.error is None:
            return [(f"answered a result, now JSON-RPC error {error.get('code') if error else None}", True)]
        if error is None:
            return [(f"answered JSON-RPC error {call.error.get('code')}, now a result", True)]
        if call.error.get("code") != error.get("code"):
            return [(f"JSON-RPC error {call.error.get('code')} -> {error.get('code')}", False)]
        return []
    assert call.result is not None
    assert result is not None
    before, after = _normal(handshake_result(call.result), redactor), _normal(handshake_result(result), redactor)
    if before == after:
        return []
    if bool(before.get("isError")) != bool(after.get("isError")):
        return [(f"isError {bool(before.get('isError'))} -> {bool(after.get('isError'))}", True)]
    kinds = [_blocks(r, "type") for r in (before, after)]
    if kinds[0] != kinds[1]:
        return [(f"content {kinds[0]} -> {kinds[1]}", True)]
    shapes = [sorted((r.get("structuredContent") or {}).keys()) for r in (before, after)]
    if shapes[0] != shapes[1]:
        return [(f"structuredContent keys {shapes[0]} -> {shapes[1]}", True)]
    texts = [_blocks(r, "text") for r in (before, after)]
    for number, (old, new) in enumerate(zip(texts[0], texts[1], strict=True), 1):
        if old != new:
            where, old_part, new_part = _first_difference(json.dumps(old), json.dumps(new))
            return [(f"answer changed in content block {number} at character {where}: {old_part} -> {new_part}", False)]
    structured = [r.get("structuredContent") or {} for r in (before, after)]
    for key in shapes[0]:
        if structured[0].get(key) != structured[1].get(key):
            where, old_part, new_part = _first_difference(_short(structured[0].get(key), 10**6),
                                                          _short(structured[1].get(key), 10**6))  # fmt: skip
            return [(f"structuredContent.{key} changed at character {where}: {old_part} -> {new_part}", False)]
    return [("answer changed", False)]


def _first_difference(old: str, new: str, width: int = 40) -> tuple[int, str, str]:
    """Where two texts first differ (a 0-based index) and each around that place, at most `width` characters
    with `...` where cut, so that what is shown differs (a prefix of both would show nothing)."""
    shared = 0
    for a, b in zip(old, new, strict=False):
        if a != b:
            break
        shared += 1
    begin = max(0, shared - width // 4)

    def around(text: str) -> str:
        end = begin + width
        return ("..." if begin else "") + text[begin:end] + ("..." if end < len(text) else "")

    return shared, around(old), around(new)


def _blocks(result: Mapping[str, Any], key: str) -> list[Any]:
    return [block.get(key) for block in result.get("content") or [] if isinstance(block, dict)]
