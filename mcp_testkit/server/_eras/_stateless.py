"""The stateless era (protocol 2026-07-28): which requests belong to it, what each must carry, and what it is answered.

There is no `initialize` and no session: every request names its protocol version and the client's
capabilities in `params._meta`, and the headers `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name`
mirror the body. It mirrors `_handshake.py`: `McpApp` (`_app.py`) routes a request here, `_run.answer` runs it
and frames the answer, the dispatcher (`_protocol.py`) answers `tools/list` and `tools/call` for both eras, and
the era's faults act through their handlers (`_effects/`); this module holds the rest: the POST of the era (GET
and DELETE have no meaning in it), the checks a request passes before it runs, `server/discover`, the fields every
result of the era carries, and what dispatch does differently in it (`ERA`); its stream, `subscriptions/listen`,
is `_listen.py`. Statuses and codes follow the spec, checked against the `mcp` SDK's own server
(`ERROR_CODE_HTTP_STATUS`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit._wire.asgi import run_until_disconnect
from mcp_testkit._wire.eras import (
    CAPABILITIES_KEY,
    HANDSHAKE,
    LOG_LEVEL_KEY,
    MISSING_CAPABILITY,
    NAME_PARAMS,
    SERVER_INFO_KEY,
    STATELESS,
    STATELESS_VERSION,
    STATELESS_VERSIONS,
    VERSION_KEY,
    decode_header_value,
    error_status,
)
from mcp_testkit._wire.param_headers import ABSENT, PARAM_HEADER_PREFIX, value_at
from mcp_testkit.journal import CANCELLED_BY_CLIENT
from mcp_testkit.server._dispatch._input import begin_rounds, rounds_asker
from mcp_testkit.server._dispatch._messages import INVALID_PARAMS, INVALID_REQUEST, kind_of, result_response
from mcp_testkit.server._dispatch._offerings import OFFERING_METHODS
from mcp_testkit.server._dispatch._paging import LISTINGS, page_number, request_target
from mcp_testkit.server._dispatch._protocol import CANCELLED, LOG_LEVELS, Call, Handler, call_tool, list_tools
from mcp_testkit.server._dispatch._tasks import TASK_METHODS, TASKS_EXTENSION, task_support, task_tool_call
from mcp_testkit.server._eras._listen import listen
from mcp_testkit.server._eras._run import answer, faulted
from mcp_testkit.server._eras._served import ServedEra
from mcp_testkit.server._framing._refusals import Refusal, mismatch, missing_capability, unsupported, versions
from mcp_testkit.server._framing._response import header
from mcp_testkit.server._state._cursors import decode_cursor

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive
    from mcp_testkit._wire.headers import Headers
    from mcp_testkit.journal import Record
    from mcp_testkit.server._effects import Effect
    from mcp_testkit.server._framing._response import Response
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._cursors import Cursor

__all__ = ["ERA", "METHODS", "call_for", "decorate", "delete", "get", "post", "refusal"]

_CACHEABLE = frozenset(
    {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read", "prompts/list"}
)


def _header(headers: Headers, name: str) -> str | None:
    """A header's value without the optional whitespace around it, which RFC 9110 says is no part of it."""
    value = header(headers, name)
    return None if value is None else value.strip(" \t")


def _same_value(sent: str, value: Any) -> bool:
    """Whether a decoded header value stands for the body's value: a string as is, a boolean as true or false,
    an integer compared as a number (the spec's SHOULD: 42.0 is 42)."""
    if isinstance(value, bool):
        return sent == ("true" if value else "false")
    if isinstance(value, (int, float)):
        number = _JSON_NUMBER.fullmatch(sent)
        if number is None:
            return False
        try:
            # An integer compares exactly, beyond the 2**53 a float holds.
            return (float(sent) if number.group(1) else int(sent)) == value
        except ValueError:
            return False  # more digits than Python converts
    return isinstance(value, str) and sent == value


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)((?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)")
"""A number as JSON writes it (no `_`, no `+`, no spaces, which Python's int() and float() take); group 1 is
its fraction and exponent."""


def _param_refusal(mirrored: list[tuple[tuple[str, ...], str]], arguments: Any, headers: Headers) -> Refusal | None:
    """-32020 when a mirrored parameter's `Mcp-Param-{name}` header is missing, badly encoded or not the body's."""
    for path, name in mirrored:
        header = PARAM_HEADER_PREFIX + name
        sent = _header(headers, header.lower())
        value = value_at(arguments, path)
        where = "params.arguments." + ".".join(path)
        if value is ABSENT:
            if sent is not None:
                return mismatch(f"{header} header is sent, but the body has no {where}")
            continue
        if sent is None:
            return mismatch(f"the {header} header is missing; it must mirror {where}")
        if not _PLAIN_VALUE.fullmatch(sent):
            return mismatch(f"{header} header holds characters a header value may not carry")
        decoded = decode_header_value(sent)
        if decoded is None:
            return mismatch(f"{header} header is not valid =?base64?...?= (bad padding or characters)")
        if not _same_value(decoded, value):
            return mismatch(f"{header} header {sent!r} does not match the body's {where}")
    return None


_PLAIN_VALUE = re.compile(r"[\x20-\x7e\t]*")


def refusal(state: ServerState, headers: Headers, message: Any, kind: str | None) -> Refusal | None:
    """Why a stateless POST cannot run, checked in the spec's order; None when it may.

    The body must be one request or notification; a request carries `MCP-Protocol-Version` and
    `Mcp-Method` (and `Mcp-Name` for `tools/call`) matching its body (-32020), a `_meta` with the
    version and the client's capabilities (-32602), and a version this server speaks (-32022).
    """
    if kind not in ("request", "notification"):
        return Refusal(
            400,
            INVALID_REQUEST,
            "Invalid Request: a 2026-07-28 POST carries one JSON-RPC request or notification (no batch, no response)",
            request_id=False,
        )
    version = _header(headers, "mcp-protocol-version")
    if kind == "notification":
        return None if version in STATELESS_VERSIONS else unsupported(state, version)
    method = message["method"]
    params = message.get("params")
    if method == "initialize" and HANDSHAKE not in state.eras and version not in STATELESS_VERSIONS:
        # A legacy client has no way forward but this message: name what the server speaks. Under 2026-07-28
        # headers, initialize is only a method this era does not have: 404 and -32601, as any other.
        requested = params.get("protocolVersion") if isinstance(params, dict) else None
        refused = unsupported(state, requested if isinstance(requested, str) else version)
        spoken = ", ".join(STATELESS_VERSIONS)
        return Refusal(
            refused.status,
            refused.code,
            f"Unsupported protocol version: this server speaks only {spoken}, which has no initialize; "
            "send each request with its version in params._meta",
            refused.data,
        )
    if version is None:
        return mismatch("the MCP-Protocol-Version header is missing; every 2026-07-28 request carries it")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if version not in STATELESS_VERSIONS and not isinstance(meta, dict):
        return unsupported(state, version)  # a version of no era, and nothing else to go by: name ours
    method_header = _header(headers, "mcp-method")
    if method_header is None:
        return mismatch(f"the Mcp-Method header is missing; it must name the method, {method!r}")
    if not (isinstance(params, dict) and isinstance(meta, dict) and VERSION_KEY in meta and CAPABILITIES_KEY in meta):
        missing = [key for key in (VERSION_KEY, CAPABILITIES_KEY) if not isinstance(meta, dict) or key not in meta]
        return Refusal(
            400, INVALID_PARAMS, f"Invalid params: params._meta must carry {' and '.join(map(repr, missing))}"
        )
    if meta[VERSION_KEY] != version:
        return mismatch(
            f"MCP-Protocol-Version header {version!r} does not match the body's _meta version {meta[VERSION_KEY]!r}"
        )
    if method_header != method:
        return mismatch(f"Mcp-Method header {method_header!r} does not match the body's method {method!r}")
    name_param = NAME_PARAMS.get(method)
    if name_param is not None:
        named = params.get(name_param)
        sent = _header(headers, "mcp-name")
        if sent is None:
            return mismatch(f"the Mcp-Name header is missing; for {method} it must carry params.{name_param}")
        if decode_header_value(sent) != named:
            return mismatch(f"Mcp-Name header {sent!r} does not match the body's params.{name_param} {named!r}")
    if version not in STATELESS_VERSIONS:
        return unsupported(state, version)
    named = params.get("name")
    tool = state.tools.get(named) if method == "tools/call" and isinstance(named, str) else None
    if tool is not None:
        mirrored = tool.mirrored_params()
        if mirrored:
            mismatched = _param_refusal(mirrored, params.get("arguments"), headers)
            if mismatched is not None:
                return mismatched
        if tool.requires:
            declared = meta.get(CAPABILITIES_KEY)
            lacking = [name for name in tool.requires if not (isinstance(declared, dict) and name in declared)]
            if lacking:
                return missing_capability(lacking)
    return None


async def _discover(request_id: Any, params: dict[str, Any], call: Call) -> dict[str, Any]:
    state = call.state
    if state.discover_result is not None:
        return result_response(request_id, dict(state.discover_result))
    result = {
        "supportedVersions": versions(state),
        # Change notifications go on subscriptions/listen (`_listen.py`).
        "capabilities": {
            "tools": {"listChanged": True},
            "logging": {},
            **state.offerings.capabilities(),
            **_extensions(state),
        },
        # The schema puts the server's identity in the result's _meta (as `decorate` does); the page on
        # server/discover shows it as a field too. Both are sent, so a client reading either finds it.
        "serverInfo": state.server_info(),
    }
    return result_response(request_id, result)


def _extensions(state: ServerState) -> dict[str, Any]:
    """The extensions a server announces: the tasks extension once a tool runs as a task (`_tasks.py`)."""
    if any(task_support(tool) is not None for tool in list(state.tools.values())):
        return {"extensions": {TASKS_EXTENSION: {}}}
    return {}


METHODS: dict[str, Handler] = {
    "server/discover": _discover,
    "tools/list": list_tools,
    "tools/call": task_tool_call(call_tool, CANCELLED),
    **OFFERING_METHODS,
    **TASK_METHODS,
}
"""The methods of the stateless era: `ping`, `logging/setLevel` and `initialize` are not among them."""


def call_for(state: ServerState, record: Record, meta: Mapping[str, Any], effect: Effect[Any] | None) -> Call:
    """What dispatch needs for a stateless request: no session, the era's methods, the log level of `_meta`."""
    level = meta.get(LOG_LEVEL_KEY)
    return Call(
        state,
        record,
        None,
        record.protocol_version or STATELESS_VERSION,
        ERA,
        effect=effect,
        log_level=level if isinstance(level, str) and level in LOG_LEVELS else None,
    )


def decorate(state: ServerState, method: str, response: Any) -> None:
    """Give a stateless result what the era requires: `resultType`, cache fields where cacheable, serverInfo."""
    result = response.get("result") if isinstance(response, dict) else None
    if not isinstance(result, dict):
        return
    fresh = {"resultType": "complete", **result}
    if method in _CACHEABLE:
        # One scope on every page: the catalogue is the same for every caller.
        fresh["ttlMs"] = state.cache_ttl_ms
        fresh["cacheScope"] = state.cache_scope
    meta = fresh.get("_meta")
    server_info = state.server_info()
    if meta is None:
        fresh["_meta"] = {SERVER_INFO_KEY: server_info}
    elif isinstance(meta, dict) and SERVER_INFO_KEY not in meta:
        fresh["_meta"] = {**meta, SERVER_INFO_KEY: server_info}
    response["result"] = fresh


async def post(state: ServerState, out: Response, receive: Receive | None = None) -> None:
    """A 2026-07-28 request: checked, faulted, dispatched, answered; no session is read, made or echoed.

    A `tools/call` whose client closes the connection before its answer is cancelled (the era's cancellation:
    closing the request's stream), and its record says so; `receive` tells of the close.
    """
    record = out.record
    record.era = STATELESS
    record.session_id = None  # an older client's Mcp-Session-Id is ignored, as the spec says
    out.event_ids = False
    message = out.message
    kind = None if isinstance(message, list) else kind_of(message)
    params = message.get("params") if kind is not None else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        meta = {}
    version = meta.get(VERSION_KEY)
    record.protocol_version = version if isinstance(version, str) else header(out.headers, "mcp-protocol-version")
    refused = refusal(state, out.headers, message, kind)
    if refused is not None:
        await out.refuse(refused)
        return
    if kind == "notification":
        # The era defines no client notifications over HTTP (closing a stream cancels): accepted, dropped.
        await out.json(202, None)
        return
    effect = None
    if state.plan and record.rpc_method != "subscriptions/listen":  # no fault acts on a listen stream (yet)
        cursor = params.get("cursor") if isinstance(params, dict) else None
        page = None
        if record.rpc_method in LISTINGS:
            empty = state.empty_cursor
            page = empty.page if cursor == "" and empty is not None else page_number(cursor)
        target = request_target(record.rpc_method, params, record.tool)
        fault = state.plan.take(record.rpc_method, target, page, None, STATELESS)
        if fault is not None:
            effect, answered = await faulted(state, out, fault, None)
            if answered:
                return
    method = record.rpc_method or ""
    if method == "subscriptions/listen":
        await listen(state, out, receive, params if isinstance(params, dict) else {})
        return
    call = call_for(state, record, meta, effect)

    def settle(response: Any) -> int:
        decorate(state, method, response)
        return error_status(response)

    if receive is None or method != "tools/call":
        await answer(state, message, out, call, effect, settle=settle)
        return
    done = closed = False

    async def run() -> None:
        nonlocal done
        await answer(state, message, out, call, effect, settle=settle)
        done = True

    try:
        closed = await run_until_disconnect(receive, run, lambda: out.dropped)  # a fault's close cancels nothing
    except anyio.get_cancelled_exc_class():
        closed = not done  # in-process, the client's cancel reaches the server's task itself
        raise
    finally:
        if closed:
            record.error = f"{CANCELLED_BY_CLIENT}: it closed the request's stream (2026-07-28); nothing sent"


async def _no_stream(state: ServerState, out: Response) -> None:
    """GET and DELETE of an older client to a server in the stateless era: 405 (no stream, no session)."""
    record = out.record
    record.era = STATELESS
    record.session_id = None
    await out.error(
        405,
        INVALID_REQUEST,
        f"HTTP {record.http_method} has no meaning in the stateless era (2026-07-28): "
        "it has no stream and no session; POST each request",
        [(b"allow", b"POST")],
    )


async def get(state: ServerState, receive: Receive, out: Response, hint: str) -> None:
    """A GET: the era has no stream to open (405)."""
    await _no_stream(state, out)


async def delete(state: ServerState, out: Response) -> None:
    """A DELETE: the era has no session to end (405)."""
    await _no_stream(state, out)


def _request_capabilities(call: Call) -> dict[str, Any]:
    """What the client declared in the request's own `_meta`."""
    return call.record.client_capabilities or {}


def _cursor(state: ServerState, sent: Any) -> Cursor | None:
    """In this era "" is a cursor too: the one an `EmptyCursor` page handed out, which leads where it noted."""
    return state.empty_cursor if sent == "" else decode_cursor(sent)


def _hand_out_empty_cursor(state: ServerState, leads_to: Cursor) -> None:
    state.empty_cursor = leads_to


ERA = ServedEra(
    name=STATELESS,
    methods=METHODS,
    unknown_resource=INVALID_PARAMS,
    logs_unasked=False,
    declared_in="this request's _meta",
    undeclared_code=MISSING_CAPABILITY,
    capabilities=_request_capabilities,
    begin_rounds=begin_rounds,
    asker=rounds_asker,
    cursor=_cursor,
    hand_out_empty_cursor=_hand_out_empty_cursor,
    post=post,
    get=get,
    delete=delete,
)
"""The stateless era, as the transport routes to it and dispatch asks it."""
