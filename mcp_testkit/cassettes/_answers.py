"""Answering from a recording: a recorded call's answer and notifications as a client of either era gets them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from mcp_testkit._wire.eras import HANDSHAKE, SERVER_INFO_KEY, STATELESS
from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.tools import JsonRpcError, RawResult, ToolContext

__all__ = ["answer_of", "handshake_result", "replay_events"]

# Fields the 2026-07-28 era adds to results; a handshake-era client is answered without them.
_STATELESS_FIELDS = ("resultType", "ttlMs", "cacheScope")


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
