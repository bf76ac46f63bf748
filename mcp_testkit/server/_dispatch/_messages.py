"""JSON-RPC messages: their kinds, results, errors and their codes as dispatch builds them (shared by every method's
module), and their bytes on the wire.

What a transport and the eras need to tell a request from a notification or a response (`kind_of`) and to note
its method in the journal (`describe`) lives here too: below them all, and with no HTTP in it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.journal import Record

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "describe",
    "dumps",
    "error_response",
    "handler_raised",
    "kind_of",
    "result_response",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002
"""`resources/read` of an unknown URI in the handshake era (2026-07-28 answers INVALID_PARAMS instead)."""


def handler_raised(exc: BaseException) -> str:
    """A handler's exception as the one line an answer carries: `KeyError: 'x'`, `mypkg.Error: ...`, and for one of
    the toolkit's own the public path it is imported by (`mcp_testkit.cassettes.UnmatchedCall: ...`, never the
    private module that defines it)."""
    kind = type(exc)
    parts = kind.__module__.split(".")
    public = next((i for i, part in enumerate(parts) if part.startswith("_")), len(parts))
    module = ".".join(parts[:public])
    name = kind.__qualname__ if module in ("builtins", "") else f"{module}.{kind.__qualname__}"
    text = str(exc)
    return f"{name}: {text}" if text else name


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def result_response(request_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def kind_of(message: Any) -> str | None:
    """'request', 'notification' or 'response' for a JSON-RPC 2.0 message, None for anything else."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    method = message.get("method")
    if method is not None:
        if not isinstance(method, str):
            return None
        if "id" not in message:
            return "notification"
        request_id = message["id"]
        return "request" if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None
    if "id" in message and ("result" in message or "error" in message):
        return "response"
    return None


def describe(record: Record, message: dict[str, Any]) -> None:
    """Copy the JSON-RPC method, id and tool of a message into its record (the rest is decoded on demand)."""
    method = message.get("method")
    record.rpc_method = method if isinstance(method, str) else None
    record.rpc_id = message.get("id")
    if record.rpc_method == "tools/call":
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        record.tool = name if isinstance(name, str) else None


_ENCODER = json.JSONEncoder(separators=(",", ":"))
# The C encoder `_ENCODER.encode` builds afresh on every call, built once (without the circular-reference
# check's shared state, which one encoder could not keep across threads): a third of a small answer's cost.
_make_c_encoder: Any = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Any = None
if _make_c_encoder is not None:
    _C_ENCODER = _make_c_encoder(
        None, _ENCODER.default, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    _PROBE = {"a": [1, 2.5, None, True, "\u00e9"], "b": {}}
    if "".join(_C_ENCODER(_PROBE, 0)) != _ENCODER.encode(_PROBE):  # another Python's private signature
        _C_ENCODER = None


def dumps(payload: Any) -> bytes:
    """A JSON-RPC message as compact JSON bytes."""
    if _C_ENCODER is not None:
        try:
            return "".join(_C_ENCODER(payload, 0)).encode()
        except RecursionError:
            pass  # too deep, or circular: the checking encoder says which, as it always has
    return _ENCODER.encode(payload).encode()
