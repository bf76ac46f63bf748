"""The referee's rules that only the server can decide, as a request arrives and leaves: a listing's cursor is one it
handed out, a request's id is not one still in flight on its session, a handshake-era request carries the version
its session negotiated. Each violation is noted on the request's journal record; under `referee="refuse"` a
request that broke any rule (these, or what `_wire/referee.py` judges of the message) is answered its JSON-RPC
error instead of running.

Kept cheap: a request that is not a listing and carries no duplicate id costs a dictionary look-up and a count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.referee import Violation
from mcp_testkit.server._dispatch._messages import INVALID_PARAMS, INVALID_REQUEST, error_response
from mcp_testkit.server._dispatch._paging import LISTINGS

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["arrived", "left", "version_checked"]

_HEADER_REQUIRED_FROM = "2025-06-18"
"""The first revision whose clients must send MCP-Protocol-Version on every request after initialize."""


def arrived(state: ServerState, message: dict[str, Any], record: Record, session: Session | None) -> Any:
    """Note what this request breaks that the server knows of; the refusal to answer instead, under `refuse`."""
    method = record.rpc_method
    if method in LISTINGS:
        params = message.get("params")
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if isinstance(cursor, str) and (method, cursor) not in state.cursors_given:  # not a string: schema's
            record.note(
                Violation(
                    "cursor-not-given",
                    "$.params.cursor",
                    f"{cursor!r} is no cursor this server handed out for {method}; "
                    "send the nextCursor of the page before, or none for the first page",
                )
            )
    if session is not None:
        request_id = record.rpc_id
        if type(request_id) in (str, int):
            in_flight = session.in_flight
            count = in_flight.get(request_id, 0)
            if count:
                record.note(
                    Violation(
                        "id-in-flight",
                        "$.id",
                        f"id {request_id!r} is the id of a request still in flight on this session; "
                        "give each request an id of its own",
                    )
                )
            in_flight[request_id] = count + 1
    if state.referee == "refuse":
        return _refusal(record)
    return None


def left(state: ServerState, record: Record, session: Session | None, response: Any) -> None:
    """The request is answered: its id is free again, and a listing's nextCursor is one the server handed out."""
    if session is not None:
        request_id = record.rpc_id
        if type(request_id) in (str, int):
            in_flight = session.in_flight
            count = in_flight.pop(request_id, 0)
            if count > 1:
                in_flight[request_id] = count - 1
    method = record.rpc_method
    if method in LISTINGS and isinstance(response, dict):
        result = response.get("result")
        cursor = result.get("nextCursor") if isinstance(result, dict) else None
        if isinstance(cursor, str):
            state.cursors_given.add((method, cursor))


def version_checked(record: Record, sent: str | None, session: Session) -> None:
    """Note a handshake-era request whose MCP-Protocol-Version is not the one its session negotiated."""
    negotiated = session.protocol_version
    if sent == negotiated or (sent is None and negotiated < _HEADER_REQUIRED_FROM):
        return
    said = "missing" if sent is None else repr(sent)
    record.note(
        Violation(
            "version-header",
            "$",
            f"the MCP-Protocol-Version header is {said}; this session negotiated {negotiated!r}: send that",
        )
    )


def _refusal(record: Record) -> Any:
    violations = record.violations
    if not violations:
        return None
    params = all(violation.path.startswith("$.params") for violation in violations)
    code, what = (INVALID_PARAMS, "Invalid params") if params else (INVALID_REQUEST, "Invalid Request")
    first = violations[0]
    more = f" (and {len(violations) - 1} more)" if len(violations) > 1 else ""
    return error_response(
        record.rpc_id,
        code,
        f"{what}: {first.rule} at {first.path}: {first.message}{more}",
        {"violations": [{"rule": v.rule, "path": v.path, "message": v.message} for v in violations]},
    )
