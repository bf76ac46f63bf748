"""Dispatch of what a server offers besides tools: `resources/*`, `prompts/*` and `completion/complete`.

Both eras answer them alike, but for two things: an unknown URI is -32002 in the handshake era and -32602
in 2026-07-28 (`Era.unknown_resource`), and subscriptions (`resources/subscribe`) belong to a session, so only the
handshake era has them (2026-07-28 subscribes on `subscriptions/listen`, `server/_eras/_listen.py`).

A `resources/read` holds the event loop for little more than `MATCH_BUDGET_S` whatever its URI: one longer than
`MAX_URI_LENGTH` is the era's unknown-resource error before any matching, and matching past the budget is -32603.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from mcp_testkit.resources import MAX_URI_LENGTH, MatchingOverBudget, match_deadline
from mcp_testkit.server._dispatch._messages import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    error_response,
    handler_raised,
    result_response,
)
from mcp_testkit.server._dispatch._paging import LISTINGS, Page, page_of
from mcp_testkit.server._state._cursors import Cursor, encode_cursor
from mcp_testkit.tools import JsonRpcError, takes_context

if TYPE_CHECKING:
    from mcp_testkit.server._dispatch._era import Era
    from mcp_testkit.server._state import ServerState

__all__ = ["OFFERING_METHODS", "SESSION_METHODS", "notify_changed", "notify_updated"]


class _Call(Protocol):
    """What these methods need of dispatch's `Call`."""

    state: ServerState
    session: Any
    era: Era
    effect: Any


async def _paged(
    request_id: Any, params: dict[str, Any], call: _Call, method: str, entries: Sequence[dict[str, Any]]
) -> Any:
    """One page of a listing, in the server's page size, behind the same opaque cursors as `tools/list`, reshaped
    by a listing fault as `tools/list` is."""
    sent = params.get("cursor")
    here = Cursor(1, 0)
    if sent is not None:
        decoded = call.era.cursor(call.state, sent)
        if decoded is None or decoded.offset > len(entries):
            return error_response(request_id, INVALID_PARAMS, f"Invalid cursor: {sent!r}")
        here = decoded
    effect = call.effect
    if effect is not None:
        replaced = await effect.before_page(call, request_id, sent)
        if replaced is not None:
            return replaced
    page, next_offset = page_of(entries, min(here.offset, len(entries)), call.state.page_size)
    following = here if here.stuck else None if next_offset is None else Cursor(here.page + 1, next_offset)
    result: dict[str, Any] = {LISTINGS[method]: page}
    if effect is not None:
        shaped = Page(page, here, following, next_offset, len(entries), method, entries)
        await effect.shape_page(call, shaped)
        following = shaped.following
        if shaped.next_cursor is not None:
            result["nextCursor"] = shaped.next_cursor
            return result_response(request_id, result)
    if following is not None:
        result["nextCursor"] = encode_cursor(following)
    return result_response(request_id, result)


async def _list_resources(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    entries = [resource.definition for resource in list(call.state.offerings.resources.values())]
    return await _paged(request_id, params, call, "resources/list", entries)


async def _list_templates(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    entries = [template.definition for template in list(call.state.offerings.templates.values())]
    return await _paged(request_id, params, call, "resources/templates/list", entries)


def _scripted(request_id: Any, call: _Call, what: str, build: Callable[[], dict[str, Any]]) -> Any:
    """The result a test's function builds; its JsonRpcError as that error, anything else it raises as -32603
    (kept for `server.check()`, as a tool handler's exception is)."""
    try:
        return result_response(request_id, build())
    except JsonRpcError as exc:
        return error_response(request_id, exc.code, exc.message, exc.data)
    except MatchingOverBudget as exc:  # ours, not the test's function's: not kept for check()
        return error_response(request_id, INTERNAL_ERROR, f"resources/read: {exc}")
    except Exception as exc:
        call.state.errors.append(exc)
        return error_response(request_id, INTERNAL_ERROR, f"{what} raised {handler_raised(exc)}")


async def _read_resource(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    uri = params.get("uri")
    if not isinstance(uri, str):
        return error_response(request_id, INVALID_PARAMS, "resources/read needs params.uri (a string)")
    if len(uri) > MAX_URI_LENGTH:
        message = (
            f"Resource not found: a URI of {len(uri)} characters, over the limit of {MAX_URI_LENGTH} "
            "(mcp_testkit.resources.MAX_URI_LENGTH); read a shorter URI"
        )
        data = {"uriLength": len(uri), "maxUriLength": MAX_URI_LENGTH}
        return error_response(request_id, call.era.unknown_resource, message, data)
    offerings, deadline_s = call.state.offerings, match_deadline()

    def read() -> dict[str, Any]:
        found = offerings.reading(uri, deadline_s=deadline_s)  # None exactly when `offerings.knows(uri)` is False
        if found is None:
            raise JsonRpcError(call.era.unknown_resource, f"Resource not found: {uri}", {"uri": uri})
        return found

    return _scripted(request_id, call, f"reading {uri!r}", read)


def _subscription(method: str, keep: bool) -> Callable[[Any, dict[str, Any], _Call], Awaitable[Any]]:
    """`resources/subscribe` (`keep`) or `resources/unsubscribe`: the session's set of watched URIs, changed."""

    async def answer(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
        uri = params.get("uri")
        if not isinstance(uri, str):
            return error_response(request_id, INVALID_PARAMS, f"{method} needs params.uri (a string)")
        if call.session is not None:
            (call.session.subscriptions.add if keep else call.session.subscriptions.discard)(uri)
        return result_response(request_id, {})

    return answer


async def _list_prompts(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    entries = [prompt.definition for prompt in list(call.state.offerings.prompts.values())]
    return await _paged(request_id, params, call, "prompts/list", entries)


async def _get_prompt(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    name = params.get("name")
    if not isinstance(name, str):
        return error_response(request_id, INVALID_PARAMS, "prompts/get needs params.name (a string)")
    prompt = call.state.offerings.prompts.get(name)
    if prompt is None:
        return error_response(request_id, INVALID_PARAMS, f"Unknown prompt: {name}")
    given = params.get("arguments") or {}
    if not isinstance(given, dict) or not all(isinstance(value, str) for value in given.values()):
        return error_response(request_id, INVALID_PARAMS, f"prompts/get {name}: arguments must map names to strings")
    missing = prompt.missing(given)
    if missing:
        names = ", ".join(missing)
        return error_response(request_id, INVALID_PARAMS, f"prompts/get {name}: missing required argument(s) {names}")
    if callable(prompt.messages) and takes_context(prompt.messages):  # it may ask the client for input
        from mcp_testkit.server._dispatch._input import prompt_with_input

        return await prompt_with_input(call, request_id, params, prompt, dict(given))  # type: ignore[arg-type]
    return _scripted(request_id, call, f"prompt {name!r}", lambda: prompt.get(dict(given)))


async def _complete(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        return error_response(request_id, INVALID_PARAMS, "completion/complete needs params.ref and params.argument")
    kind = ref.get("type")
    target = ref.get("name") if kind == "ref/prompt" else ref.get("uri") if kind == "ref/resource" else None
    name, value = argument.get("name"), argument.get("value", "")
    if not isinstance(target, str) or not isinstance(name, str) or not isinstance(value, str):
        return error_response(
            request_id,
            INVALID_PARAMS,
            "completion/complete: ref must be {type: ref/prompt, name} or {type: ref/resource, uri}, and argument "
            "{name, value} strings",
        )
    offerings = call.state.offerings
    known = offerings.prompts if kind == "ref/prompt" else offerings.templates
    if target not in known:
        what = "prompt" if kind == "ref/prompt" else "resource template"
        return error_response(request_id, INVALID_PARAMS, f"completion/complete: unknown {what} {target!r}")
    return _scripted(
        request_id, call, f"completing {name!r}", lambda: offerings.completing(str(kind), target, name, value)
    )


Handler = Callable[[Any, dict[str, Any], Any], Awaitable[Any]]


def _offered(capability: str, method: str, handler: Handler) -> Handler:
    """`handler`, answered only while the server announces `capability`: a server with nothing of the kind
    scripted answers -32601 (Method not found), as before, and as its capabilities say."""

    async def answer(request_id: Any, params: dict[str, Any], call: _Call) -> Any:
        if capability not in call.state.offerings.capabilities():
            return error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        return await handler(request_id, params, call)

    return answer


OFFERING_METHODS: dict[str, Handler] = {
    method: _offered(capability, method, handler)
    for method, capability, handler in (
        ("resources/list", "resources", _list_resources),
        ("resources/templates/list", "resources", _list_templates),
        ("resources/read", "resources", _read_resource),
        ("prompts/list", "prompts", _list_prompts),
        ("prompts/get", "prompts", _get_prompt),
        ("completion/complete", "completions", _complete),
    )
}
"""The methods both eras answer."""

SESSION_METHODS: dict[str, Handler] = {
    method: _offered("resources", method, _subscription(method, keep))
    for method, keep in (("resources/subscribe", True), ("resources/unsubscribe", False))
}
"""The methods only a session has (the handshake era)."""


def notify_changed(state: ServerState, kind: str) -> None:
    """Tell every open session, and each listen stream that opted in, that its listing of `kind` (`resources` or
    `prompts`) changed."""
    message = {"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"}
    for session in state.sessions.alive:
        session.outbox.put(message)
    state.listeners.publish(message)


def notify_updated(state: ServerState, uri: str) -> None:
    """Tell every session and listen stream subscribed to `uri` that it changed."""
    message = {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}
    for session in state.sessions.alive:
        if uri in session.subscriptions:
            session.outbox.put(message)
    state.listeners.publish(message)
