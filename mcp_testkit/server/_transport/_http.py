"""The HTTP request before its era and around it: the journal's record of it, the refusals that need no body (path,
Host, Origin, Sec-Fetch-Site, required headers: 401 or 403 with a challenge; a bearer token on a protected
endpoint, `_protected.py`), the body read (only up to `max_body`;
the server's protocol bounds the time with `body_timeout_s`) and decoded, what a POST must carry to reach an era
(406, 415, 400), an HTTP method no era has (405), and the last-resort answer to a crash of ours (-32603, 500),
journaled.

`serve` does these in order around the route it is given: `McpApp` (`_app.py`) gives the one to the request's
era. Written as bare ASGI because it sits on every request of every test.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.asgi import BODY_PREFIX, Receive, Scope, Send, read_body
from mcp_testkit._wire.origin import cross_site_refusal, host_refusal, origin_refusal
from mcp_testkit._wire.runner import BODY_TIMED_OUT, STOPPING
from mcp_testkit._wire.strict_json import JsonError, loads
from mcp_testkit.journal import Headers, Record
from mcp_testkit.server._dispatch._messages import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, describe
from mcp_testkit.server._framing._response import Response, accepts, header
from mcp_testkit.server._transport._protected import refuse_unauthorized

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState

__all__ = ["JOURNAL_PREFIX", "Route", "ServerCrash", "admit", "serve"]


JOURNAL_PREFIX = BODY_PREFIX
"""How many bytes of a body refused for its size the journal keeps."""

Route = Callable[["ServerState", str, Receive, Response], Awaitable[None]]
"""Where a request that passed the checks goes: to its era, by its HTTP method (`McpApp._route`)."""


class ServerCrash(Exception):
    """mcp-testkit itself failed on a request (a bug of ours): answered -32603/500, kept for `server.check()`."""


async def serve(state: ServerState, scope: Scope, receive: Receive, send: Send, route: Route) -> None:
    """Serve one HTTP request: record it, refuse what may not reach an era, `route` the rest, and journal it,
    whatever happens; a crash of ours is answered -32603 (500) and kept for `server.check()`."""
    journal = state.journal
    headers = Headers(scope["headers"], state.hidden)
    # seq is numbered when journaled: after the body is read, so that seq follows the fault plan's order.
    record = Record(0, time.time(), scope["method"], scope["path"], headers, b"")
    record.session_id = header(headers, "mcp-session-id")
    out = Response(send, record, headers, receive)
    try:
        if not await _refused_early(state, scope, receive, out):
            await route(state, scope["method"], receive, out)
    except asyncio.CancelledError as exc:
        if exc.args != (STOPPING,):
            raise
        # The server stops with this request running: close its connection, with nothing to log.
        await out.drop("the server stopped before answering")
    except Exception as exc:
        if out.dropped:
            raise  # in-process, a dropped connection is this exception, on purpose
        admit(journal, record)
        await _crashed(state, out, exc)
    finally:
        if out.plan is not None and out.plan.stream is not None:
            out.plan.stream.finish()  # whatever happened, a GET following this stream must not wait forever
        admit(journal, record)
        journal.writer.finish(record)


async def _refused_early(state: ServerState, scope: Scope, receive: Receive, out: Response) -> bool:
    """Check what needs no body, read the body (bounded) and journal the request; True when it was refused (and
    answered here), so that no era sees it."""
    record = out.record
    method = scope["method"]
    refusal = _blocked(state, scope, out.headers)
    if refusal is None and method == "POST":
        refusal = await _read(state, scope, receive, out)
    elif refusal is not None and refusal[0] == 401 and method == "POST" and not refusal[3][1]:
        # A wrong credential is a scripted test condition, not an attack: read the (bounded) body
        # anyway, so the journal shows which call was refused; a size or time problem wins. A missing
        # one is refused at once, as a bad Host or Origin is, without waiting for a body.
        refusal = await _read(state, scope, receive, out) or refusal
    admit(state.journal, record)
    if refusal is None and state.auth is not None and await refuse_unauthorized(state, scope, out):
        return True
    if refusal is None:
        if method == "POST":
            return not await _usable_post(out)
        if method in ("GET", "DELETE"):
            return False
        allow = b"GET, POST, DELETE" if state.allow_delete else b"GET, POST"
        await out.error(405, INVALID_REQUEST, f"HTTP {method} is not supported", [(b"allow", allow)])
        return True
    status, code, message, extra = refusal
    if status == 401:
        required, missing = extra
        await _refuse_credentials(out, required.name, required.status, scope, missing)
    else:
        await out.error(status, code, message, extra)
        if status == 413 and record.body:
            record.error = f"{message}; the journal keeps its first {len(record.body)} bytes (cut)"
    return True


@functools.lru_cache(maxsize=64)
def _accepts_both(accept: str) -> bool:
    """Whether a POST's Accept lists both JSON and SSE; clients send the same value every time."""
    return accepts(accept, "application/json") and accepts(accept, "text/event-stream")


async def _refuse_credentials(out: Response, name: str, status: int, scope: Scope, missing: bool) -> None:
    """401 (or 403) with an OAuth-style body and challenge; never echoes what the client sent."""
    if status == 403:
        error, description = "insufficient_scope", f"the {name} header does not grant access to this server"
        challenge = 'Bearer error="insufficient_scope"'
    else:
        error = "invalid_token"
        description = f"{'missing' if missing else 'wrong'} {name} header"
        server = dict(scope.get("headers", [])).get(b"host", b"127.0.0.1").decode("latin-1")
        challenge = f'Bearer resource_metadata="http://{server}/.well-known/oauth-protected-resource"'
    out.record.error = description
    await out.json(
        status,
        {"error": error, "error_description": description},
        [(b"www-authenticate", challenge.encode())],
    )


Blocked = tuple[int, int, str, Any]
"""(HTTP status, JSON-RPC code, message, extra): extra is response headers, or for 401 (required header, missing)."""


def admit(journal: Any, record: Record) -> None:
    """Number the record and put it in the journal, once."""
    if not record.seq:
        journal.writer.begin(record)


def _blocked(state: ServerState, scope: Scope, headers: Headers) -> Blocked | None:
    """Why the request is refused before its body is read (path, Host, Origin, Sec-Fetch-Site, required headers),
    or None."""
    if scope["path"] != state.path:
        return 404, INVALID_REQUEST, f"no MCP endpoint at {scope['path']}: the endpoint is {state.path}", None
    raw = scope["headers"]
    host = header(headers, "host")
    if len(headers) == len(raw):  # no name sent twice: one Host header at most, sent as `host` or not
        hosts = 0 if host is None or (b"host", host.encode("latin-1")) not in raw else 1
    else:
        hosts = [name for name, _ in raw].count(b"host")
    if hosts > 1 or (not hosts and scope.get("http_version", "1.1") != "1.0"):
        problem = "more than one Host header" if hosts else "no Host header"
        return 400, INVALID_REQUEST, f"Bad Request: {problem} (RFC 9112 wants exactly one)", None
    allowed = state.allowed_hosts
    refused = None if host is None else host_refusal(host, allowed)
    if refused is None:
        origin = header(headers, "origin")
        if origin is not None:
            refused = origin_refusal(origin, allowed)
        else:
            site = header(headers, "sec-fetch-site")
            refused = None if site is None else cross_site_refusal((site,), False, allowed)
    if refused is not None:
        return refused[0], INVALID_REQUEST, refused[1], None
    for required in tuple(state.required.values()):  # a snapshot: scripting may add one from another thread
        value = headers.get(required.name)
        if value is None or not hmac.compare_digest(value.encode(), required.value.encode()):
            return 401, INVALID_REQUEST, "", (required, value is None)
    return None


async def _read(state: ServerState, scope: Scope, receive: Receive, out: Response) -> Blocked | None:
    """Read and decode a POST body into the record; the refusal (413, 408) when it is too big or too slow."""
    record = out.record
    limit = state.max_body
    close = _CLOSE
    declared = _declared_length_of(out.headers)
    if declared is not None and declared > limit:
        message = f"Payload Too Large: the body (Content-Length {declared}) exceeds max_body ({limit} bytes); not read"
        return 413, INVALID_REQUEST, message, close
    body, size = await read_body(receive, limit)
    if scope.get(BODY_TIMED_OUT):  # set by the server's protocol when the body took longer than body_timeout_s
        message = f"Request Timeout: the body did not arrive within {state.body_timeout_s} s (body_timeout_s)"
        return 408, INVALID_REQUEST, message, close
    record.body = body
    if size is not None:
        message = f"Payload Too Large: the body exceeds max_body ({limit} bytes); not read past {size} bytes"
        return 413, INVALID_REQUEST, message, close
    if body:
        # Decoded before the other checks, so that even a refused request shows what it asked for.
        try:
            out.message = loads(body)
        except JsonError as exc:
            out.parse_error = str(exc)
        else:
            if isinstance(out.message, dict):
                describe(record, out.message)
    return None


_CLOSE = ((b"connection", b"close"),)
"""The headers of a 413 or 408: the rest of the body is never read, so this connection is done."""


def _declared_length_of(headers: Headers) -> int | None:
    value = header(headers, "content-length")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


async def _usable_post(out: Response) -> bool:
    """Whether a POST's Accept, Content-Type and body let it reach its era; answers 406, 415 or 400 if not."""
    record = out.record
    headers = out.headers
    if not _accepts_both(header(headers, "accept") or ""):
        await out.error(
            406,
            INVALID_REQUEST,
            "Not Acceptable: Accept must list both application/json and text/event-stream",
        )
        return False
    content_type = header(headers, "content-type") or ""
    if content_type != "application/json" and content_type.split(";", 1)[0].strip().lower() != "application/json":
        await out.error(415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json")
        return False
    if out.parse_error is not None or not record.body:
        reason = out.parse_error or "the body is empty"
        await out.error(400, PARSE_ERROR, f"Parse error: {reason}")
        return False
    return True


async def _crashed(state: ServerState, out: Response, exc: Exception) -> None:
    """The last resort: a crash of ours is a journaled -32603/500 (if nothing was sent yet) and fails `check()`."""
    record = out.record
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    crash = ServerCrash(f"mcp-testkit failed on request #{record.seq} ({record.summary()}): {detail}")
    crash.__cause__ = exc
    state.errors.append(crash)
    message = f"Internal error: mcp-testkit failed on this request ({detail}); please report it"
    if not out.started:
        await out.error(500, INTERNAL_ERROR, message)
        return
    record.error = message
    if out.streaming:
        try:
            await out.send({"type": "http.response.body", "body": b""})
        except Exception:  # the connection is gone too
            pass
