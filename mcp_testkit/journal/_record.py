"""A journal `Record`, and the plain tuple (a row) the journal keeps it as once its answer is sent."""

from __future__ import annotations

import itertools
import json
import operator
from collections.abc import Collection, Mapping
from typing import Any

from mcp_testkit._wire.eras import CAPABILITIES_KEY, CLIENT_INFO_KEY, STATELESS
from mcp_testkit._wire.headers import Headers, redacted
from mcp_testkit._wire.referee import Violation, judge

__all__ = ["CANCELLED_BY_CLIENT", "FILTERED", "SEQ", "Record", "record_of_row", "row_of"]

CANCELLED_BY_CLIENT = "cancelled by the client"
"""How a record's `error` begins when the client cancelled the request by ending its stream (2026-07-28 over
HTTP) or with `notifications/cancelled` before its answer (stdio): nothing was sent for it."""

_UNDECODED: Any = object()

# A finished record is stored as one flat tuple of atoms (str, bytes, int, float, bool, None),
# which CPython's collector untracks the first time it looks at it (a tuple holding tuples may take
# a pass per level): a journal of a million records then costs a full collection one pointer visit
# each. The row: the fields below, then the number of required header names, those names, and the
# headers as name, value, name, value, ... (names lower-case).
(SEQ, _AT, _HTTP_METHOD, _PATH, _BODY, _RPC_METHOD, _RPC_ID, _TOOL, _SESSION_ID, _PROTOCOL_VERSION,
 _STATUS, _FAULT, _EXECUTED, _ERROR, _ERA, _RESPONSE, _NOTED, _REQUIRED) = range(18)
FILTERED = operator.itemgetter(_RPC_METHOD, _TOOL, _SESSION_ID, _HTTP_METHOD, _STATUS, _ERA)
"""The fields `Journal.requests` filters on, read straight from a row (no `Record` built)."""
_flatten = itertools.chain.from_iterable
_ANSWER_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class Record:
    """One HTTP request as the server saw it, what it answered, and the fault applied to it.

    The JSON-RPC message and the answer are kept as the bytes that crossed the wire and decoded
    when first read, so a journal of many thousands of requests stays cheap for the server. Once
    its answer is journaled, the journal keeps the record as a plain tuple the garbage collector
    does not track, and hands out a fresh `Record` over it on every read: two reads of one request
    are equal (`==`) but need not be the same object.

    Besides the request's `seq`, `at`, `http_method`, `path`, `headers` and `body`, and the
    JSON-RPC `rpc_method`, `rpc_id` and `tool`: `executed`, for `tools/call`, is whether the
    tool's handler ran (the ledger's view), None for other requests; `error` says why the request
    was refused or ignored, when it was (e.g. 'missing Mcp-Session-Id'); `era` is 'handshake' or
    'stateless' (2026-07-28), None when the transport refused the request before telling.
    """

    __slots__ = (
        "_message",
        "_noted",
        "_response",
        "_response_raw",
        "at",
        "body",
        "era",
        "error",
        "executed",
        "fault",
        "headers",
        "http_method",
        "path",
        "protocol_version",
        "rpc_id",
        "rpc_method",
        "seq",
        "session_id",
        "status",
        "tool",
    )

    seq: int
    at: float
    http_method: str
    path: str
    body: bytes
    rpc_method: str | None
    rpc_id: Any
    tool: str | None
    session_id: str | None
    protocol_version: str | None
    status: int | None
    fault: Any
    executed: bool | None
    error: str | None
    era: str | None
    headers: Mapping[str, str]
    _message: Any
    _noted: tuple[Violation, ...] | None
    _response: Any
    _response_raw: bytes | None

    def __init__(
        self,
        seq: int,
        at: float,
        http_method: str,
        path: str,
        headers: Mapping[str, str],
        body: bytes,
        rpc_method: str | None = None,
        rpc_id: Any = None,
        tool: str | None = None,
        session_id: str | None = None,
        protocol_version: str | None = None,
        status: int | None = None,
        fault: Any = None,
        executed: bool | None = None,
        error: str | None = None,
        era: str | None = None,
        _message: Any = _UNDECODED,
        _response: Any = None,
        _response_raw: bytes | None = None,
    ) -> None:
        self.seq, self.at, self.http_method, self.path, self.headers, self.body = (
            seq, at, http_method, path, headers, body
        )
        self.rpc_method, self.rpc_id, self.tool, self.session_id = rpc_method, rpc_id, tool, session_id
        self.protocol_version, self.status, self.fault, self.executed = protocol_version, status, fault, executed
        self.error, self.era = error, era
        self._message, self._response, self._response_raw = _message, _response, _response_raw
        self._noted = None

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in (
                "seq", "http_method", "path", "rpc_method", "rpc_id", "tool", "session_id", "era", "status", "error"
            )
        )
        headers = redacted(self.headers, getattr(self.headers, "required", ()))
        return f"Record({fields}, fault={self.fault!r}, headers={headers!r}, body={len(self.body)} bytes)"

    def __eq__(self, other: object) -> bool:
        """The same request: reads of one journaled request are equal records, whatever object each is."""
        if not isinstance(other, Record):
            return NotImplemented
        return self is other or (self.seq, self.at, self.http_method, self.path) == (
            other.seq, other.at, other.http_method, other.path
        )

    def __hash__(self) -> int:
        return hash((self.seq, self.at))

    @property
    def message(self) -> Any:
        """The decoded JSON-RPC message (a list for a batch); None when the body is not JSON."""
        if self._message is _UNDECODED:
            from mcp_testkit._wire.strict_json import loads

            try:
                self._message = loads(self.body) if self.body else None
            except ValueError:
                self._message = None
        return self._message

    @message.setter
    def message(self, value: Any) -> None:
        """For a server that decoded the body already; the journaled record decodes its `body` again."""
        self._message = value

    @property
    def params(self) -> dict[str, Any] | None:
        """The message's `params`, when it has an object there."""
        message = self.message
        params = message.get("params") if isinstance(message, dict) else None
        return params if isinstance(params, dict) else None

    @property
    def meta(self) -> dict[str, Any] | None:
        """The message's `params._meta`: in the stateless era its version, client info and capabilities."""
        meta = (self.params or {}).get("_meta")
        return meta if isinstance(meta, dict) else None

    @property
    def client_info(self) -> dict[str, Any] | None:
        """Who sent it, as the client says: `_meta`'s clientInfo (stateless), or `initialize`'s."""
        info = (self.meta or {}).get(CLIENT_INFO_KEY)
        if info is None and self.rpc_method == "initialize":
            info = (self.params or {}).get("clientInfo")
        return info if isinstance(info, dict) else None

    @property
    def client_capabilities(self) -> dict[str, Any] | None:
        """The client's capabilities: `_meta`'s (stateless, sent with every request), or `initialize`'s."""
        capabilities = (self.meta or {}).get(CAPABILITIES_KEY)
        if capabilities is None and self.rpc_method == "initialize":
            capabilities = (self.params or {}).get("capabilities")
        return capabilities if isinstance(capabilities, dict) else None

    @property
    def cancels(self) -> str | int | None:
        """For `notifications/cancelled`: the id (string or integer) of the request it cancels, else None."""
        request_id = (self.params or {}).get("requestId") if self.rpc_method == "notifications/cancelled" else None
        return request_id if isinstance(request_id, (str, int)) and not isinstance(request_id, bool) else None

    @property
    def cancelled_by_client(self) -> bool:
        """Whether the client cancelled this request before its answer and the server sent nothing for it."""
        return self.error is not None and self.error.startswith(CANCELLED_BY_CLIENT)

    @property
    def arguments(self) -> dict[str, Any] | None:
        """For `tools/call`: the arguments sent."""
        if self.rpc_method != "tools/call":
            return None
        arguments = (self.params or {}).get("arguments")
        return arguments if isinstance(arguments, dict) else None

    @property
    def response(self) -> Any:
        """The decoded answer the server sent (a JSON-RPC response, a list for a batch), if any."""
        if self._response is None and self._response_raw is not None:
            try:
                self._response = json.loads(self._response_raw)
            except ValueError:
                self._response = None
            self._response_raw = None
        return self._response

    @response.setter
    def response(self, value: Any) -> None:
        self._response = value
        self._response_raw = None

    def note(self, violation: Violation) -> None:
        """Note a rule this request broke that only its server could tell (`mcp_testkit._wire.referee`)."""
        noted = self._noted
        self._noted = (violation,) if noted is None else (*noted, violation)

    @property
    def violations(self) -> list[Violation]:
        """The referee's rules this request broke, each with its rule id, JSON path and message (`docs/referee.md`).

        What the message breaks by itself (its revision's wire model, its headers) is judged when this is read;
        what only the server could tell (a cursor it never handed out, an id in flight, the negotiated version)
        was noted as the request arrived. A request refused before it reached an era is not judged; a stdio line
        is judged as the handshake era's.
        """
        seq = self.seq
        era = self.era or ("handshake" if self.http_method == "STDIO" else None)  # stdio speaks the handshake era
        found = [] if era is None else judge(self.message, era, self.protocol_version, self.headers)
        found += self._noted or ()
        return [Violation(v.rule, v.path, v.message, seq) for v in found]

    def keep_response(self, raw: bytes | None) -> None:
        """Keep the answer as the bytes of JSON that were sent, decoded on the first read of `response`.

        What a transport calls as it frames an answer (the fake's, the proxy's), so that a request nobody reads
        the answer of costs no decoding; `None` or empty bytes: no answer.
        """
        self._response = None
        self._response_raw = raw or None

    def _status_line(self) -> str:
        """The status, marked `isError` for a tool's error result, `error CODE` for a JSON-RPC error."""
        answer = self.response if self.error is None else None  # a refusal says why in the summary
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            return f"{self.status} error {answer['error'].get('code')}"
        if isinstance(answer, dict) and isinstance(answer.get("result"), dict) and answer["result"].get("isError"):
            return f"{self.status} isError"
        return str(self.status)

    def summary(self) -> str:
        """One line: seq, session, JSON-RPC method, tool, status (and `isError` or `error CODE`), fault."""
        what = self.rpc_method or ("batch" if isinstance(self.message, list) else self.http_method)
        if self.tool:
            what += f" {self.tool}"
        where = "stateless" if self.era == STATELESS else f"session={(self.session_id or '-')[:8]}"
        line = f"#{self.seq} {self.http_method} {where} {what} -> {self._status_line()}"
        if self.error:
            line += f" ({self.error})"
        if self.fault is not None:
            line += f" fault={self.fault!r}"
        return line

    def to_json(self, required: Collection[str] = (), *, redact: bool = True) -> dict[str, Any]:
        """The record as plain JSON data; secret header values become '***' (see `is_secret_header`),
        and so do those named in `required`, unless `redact` is False."""
        return _exported(self, required, redact)


class _RowRecord(Record):
    """A `Record` over a finished row of the journal; its headers are built from the row when first read."""

    __slots__ = ("_built", "_row_data")

    _built: Headers | None
    _row_data: tuple[Any, ...]

    @property
    def headers(self) -> Mapping[str, str]:
        """The request's headers (a `Headers`: case-insensitive, credentials hidden from its repr)."""
        built = self._built
        if built is None:
            row = self._row_data
            start = _REQUIRED + 1 + row[_REQUIRED]
            flat = row[start:]
            required = frozenset(row[_REQUIRED + 1 : start])
            built = self._built = Headers.of_pairs(zip(flat[::2], flat[1::2], strict=True), required)
        return built

    @headers.setter
    def headers(self, value: Mapping[str, str]) -> None:
        self._built = value if isinstance(value, Headers) else Headers(value)


def record_of_row(row: tuple[Any, ...], faults: list[Any]) -> Record:
    """A record over a finished row of the journal (`faults` resolves its fault's number)."""
    record = _RowRecord.__new__(_RowRecord)
    (
        record.seq, record.at, record.http_method, record.path, record.body, record.rpc_method,
        record.rpc_id, record.tool, record.session_id, record.protocol_version, record.status, fault,
        record.executed, record.error, record.era, response, record._noted,
    ) = row[:_REQUIRED]
    record._row_data = row
    record._built = None
    record.fault = None if fault is None else faults[fault]
    record._message = _UNDECODED
    if type(response) is tuple:
        record._response, record._response_raw = response[0], None
    else:
        record._response, record._response_raw = None, response
    return record


def _exported(record: Record, required: Collection[str], redact: bool) -> dict[str, Any]:
    """`Record.to_json`: every field as plain JSON data, the headers redacted unless `redact` is False."""
    if redact:
        headers = redacted(record.headers, {*required, *getattr(record.headers, "required", ())})
    else:
        headers = dict(record.headers.items())
    fault = record.fault
    if fault is not None and hasattr(fault, "to_json"):
        fault = fault.to_json()
    elif fault is not None:
        fault = repr(fault)
    body: Any
    try:
        body = record.body.decode()
    except UnicodeDecodeError:
        body = record.body.hex()
    return {
        "seq": record.seq,
        "at": record.at,
        "http_method": record.http_method,
        "path": record.path,
        "headers": headers,
        "body": body if record.message is None else None,
        "message": record.message,
        "rpc_method": record.rpc_method,
        "rpc_id": record.rpc_id,
        "tool": record.tool,
        "arguments": record.arguments,
        "session_id": record.session_id,
        "era": record.era,
        "protocol_version": record.protocol_version,
        "status": record.status,
        "response": record.response,
        "fault": fault,
        "executed": record.executed,
        "error": record.error,
        "violations": [violation.to_json() for violation in record.violations],
    }


def row_of(record: Record, fault: int | None) -> tuple[Any, ...]:
    """`record` as one flat tuple of atoms (`fault` is its journal's number for the fault), for the journal to keep.

    The answer is kept as JSON bytes: the ones sent, or the decoded answer encoded again
    (kept as is, in a 1-tuple, when it is not JSON data).
    """
    headers = record.headers
    flat: Any
    if type(headers) is Headers:  # as the server builds them: names lower-case already
        required: Any = headers.required
        flat = _flatten(dict.items(headers))
    else:
        required = getattr(headers, "required", ())
        flat = _flatten((name.lower(), value) for name, value in headers.items())
    response: Any = record._response
    if response is None:
        response = record._response_raw
    else:
        try:
            response = _ANSWER_JSON.encode(response).encode()
        except (TypeError, ValueError):
            response = (response,)
    return (
        record.seq, record.at, record.http_method, record.path, record.body, record.rpc_method, record.rpc_id,
        record.tool, record.session_id, record.protocol_version, record.status, fault, record.executed,
        record.error, record.era, response, record._noted, len(required), *required, *flat,
    )
