"""The referee's rules: what a client message must be, each rule with an id, and `Violation`, one message's breach.

`judge` decides what one message shows by itself (its revision's wire model, `wire_models.py`, and the rules
read from the message and its headers); the rules that need what the server knows (a cursor it handed out,
the ids in flight on a session, the version a session negotiated) are decided where the server knows it, and
noted on the journal's record (`Record.note`). The journal reads both as `Record.violations`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mcp_testkit._wire.eras import NAME_PARAMS, VERSION_KEY, decode_header_value

__all__ = ["RULES", "Violation", "judge", "judge_result"]

RULES: dict[str, str] = {
    "schema": "the message fits its revision's wire model (mcp-types)",
    "notification-id": "a notification has no id",
    "method-header": "a 2026-07-28 request's Mcp-Method header names the body's method",
    "name-header": "a 2026-07-28 request's Mcp-Name header carries the body's name (or uri) param",
    "meta-version": "every 2026-07-28 request carries params._meta with its protocol version",
    "version-header": "the MCP-Protocol-Version header is the negotiated version (2026-07-28: the _meta version)",
    "cursor-not-given": "a listing's cursor is one the server handed out for that listing",
    "id-in-flight": "a request's id is not the id of another request still in flight on its session",
}
"""Every rule the referee judges, by id: what it asks of the client."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One rule a client message broke: the rule's id, the JSON path of what is wrong, and a one-line message
    that says what was expected (the nearest valid shape for a `schema` violation). `seq` is the record's."""

    rule: str
    path: str
    message: str
    seq: int = 0

    def __str__(self) -> str:
        where = f"#{self.seq} " if self.seq else ""
        return f"{where}{self.rule} at {self.path}: {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "path": self.path, "message": self.message, "seq": self.seq}


def judge(message: Any, era: str | None, version: str | None, headers: Mapping[str, str] | None) -> list[Violation]:
    """What a client message (one, or a batch) breaks by itself, in `era` at protocol `version`.

    `headers` are the request's (None: a batch's item, whose headers no rule reads).
    """
    if isinstance(message, list):
        found = []
        for index, item in enumerate(message):
            for violation in judge(item, era, version, headers=None):
                path = "$" + f"[{index}]" + violation.path[1:]
                found.append(Violation(violation.rule, path, violation.message))
        return found
    if not isinstance(message, dict):
        return []
    from mcp_testkit._wire.wire_models import revision_for, schema_problems

    method = message.get("method")
    found = []
    if method == "initialize":
        era = "handshake"  # a handshake-era client's opener, to whichever server: judged as that era's
    if isinstance(method, str):
        kind = "request" if "id" in message else "notification"
        if kind == "request" and method.startswith("notifications/"):
            found.append(Violation("notification-id", "$.id", f"{method} is a notification: send it without an id"))
            message = {key: value for key, value in message.items() if key != "id"}
            kind = "notification"
        if era == "stateless" and kind == "request" and headers is not None:
            found += _stateless_rules(message, method, headers)
        if method == "initialize" and isinstance(message.get("params"), dict):
            asked = message["params"].get("protocolVersion")
            version = asked if isinstance(asked, str) else version
        taken = {violation.path for violation in found}
        problems = schema_problems(kind, method, revision_for(era, version), message)
        found += [Violation("schema", path, line) for path, line in problems if path not in taken]
    return found


def judge_result(method: str, era: str | None, version: str | None, message: Any) -> list[Violation]:
    """What a client's response to the server's `method` request breaks (its result against the revision's)."""
    from mcp_testkit._wire.wire_models import revision_for, schema_problems

    if not isinstance(message, dict) or "result" not in message:
        return []
    problems = schema_problems("result", method, revision_for(era, version), message["result"])
    return [Violation("schema", "$.result" + path[1:], line) for path, line in problems]


def _stateless_rules(message: dict[str, Any], method: str, headers: Mapping[str, str]) -> list[Violation]:
    found = []
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
    if not isinstance(version, str):
        if isinstance(meta, dict):
            path = f'$.params._meta["{VERSION_KEY}"]'
        else:
            path = "$.params._meta" if isinstance(params, dict) else "$.params"
        found.append(
            Violation(
                "meta-version",
                path,
                f'every 2026-07-28 request carries params._meta {{"{VERSION_KEY}": "2026-07-28", ...}}',
            )
        )
    sent = headers.get("mcp-protocol-version")
    if isinstance(version, str) and sent is not None and sent.strip(" \t") != version:
        found.append(
            Violation("version-header", "$.params._meta", f"MCP-Protocol-Version header {sent!r} is not {version!r}")
        )
    method_header = headers.get("mcp-method")
    if method_header is None or method_header.strip(" \t") != method:
        said = "missing" if method_header is None else repr(method_header)
        found.append(Violation("method-header", "$.method", f"Mcp-Method header is {said}; expected {method!r}"))
    name_param = NAME_PARAMS.get(method)
    if name_param is not None and isinstance(params, dict):
        named = params.get(name_param)
        name_header = headers.get("mcp-name")
        if name_header is None or decode_header_value(name_header.strip(" \t")) != named:
            said = "missing" if name_header is None else repr(name_header)
            found.append(
                Violation("name-header", f"$.params.{name_param}", f"Mcp-Name header is {said}; expected {named!r}")
            )
    return found
