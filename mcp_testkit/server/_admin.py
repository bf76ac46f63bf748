"""The admin API of `mcp-testkit serve --admin`: script and inspect a running server over HTTP.

An ASGI wrapper: requests under `/_testkit/` go to the admin endpoints (bearer token required),
everything else to the server's MCP app. Admin requests are never recorded in the MCP journal,
and the MCP endpoint never answers them. Every bad request gets a 4xx JSON error naming the
problem; none stops the server.
"""

from __future__ import annotations

import hmac
import json
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from mcp_testkit._asgi import Receive, Scope, Send, read_body
from mcp_testkit._runner import BODY_TIMED_OUT
from mcp_testkit.scenario import ScenarioError, add_rules, add_tool, check_transport, from_json

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = ["PREFIX", "AdminApp"]


PREFIX = "/_testkit"
"""Where the admin endpoints live; the MCP endpoint may not be under it."""

_LIVE_SETTINGS = ("page_size", "response_mode", "get_stream")


class AdminError(Exception):
    """A request the admin API refuses: HTTP status, a short error code and a message naming the problem."""

    def __init__(self, status: int, error: str, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = headers or []


class _Request:
    __slots__ = ("body", "method", "query")

    def __init__(self, method: str, query: dict[str, list[str]], body: bytes) -> None:
        self.method = method
        self.query = query
        self.body = body

    def json(self, *, optional: bool = False) -> Any:
        """The body as JSON; None for an empty body when `optional`."""
        if not self.body.strip():
            if optional:
                return None
            raise AdminError(400, "bad_request", "this endpoint needs a JSON body")
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise AdminError(400, "bad_request", f"the body is not JSON: {exc}") from None

    def params(self, *allowed: str) -> dict[str, str]:
        """The query parameters, each given once; 400 naming an unknown one."""
        unknown = sorted(set(self.query) - set(allowed))
        if unknown:
            known = ", ".join(allowed) or "none"
            message = f"unknown query parameter {unknown[0]!r}; this endpoint takes: {known}"
            raise AdminError(400, "bad_request", message)
        return {name: values[-1] for name, values in self.query.items()}


Handler = Callable[[_Request], Any]


class AdminApp:
    """Routes `/_testkit/...` to the admin endpoints of `server` and everything else to `app`.

    `on_reset(server)` runs after `POST /_testkit/reset`, to script the fresh state again (the
    command line re-applies its scenario there and re-attaches the journal file).
    """

    def __init__(
        self,
        server: TestMcpServer,
        token: str,
        *,
        app: Any = None,
        on_reset: Callable[[TestMcpServer], None] | None = None,
    ) -> None:
        if not token:
            raise ValueError("the admin API needs a non-empty token")
        self.server = server
        self._token = token.encode()
        self._app = app if app is not None else server.asgi_app
        self._on_reset = on_reset
        self._routes: dict[str, dict[str, Handler]] = {
            "health": {"GET": self._health},
            "journal": {"GET": self._journal},
            "executions": {"GET": self._executions},
            "tools": {"POST": self._tools},
            "faults": {"GET": self._pending_faults, "POST": self._faults},
            "scenario": {"POST": self._scenario},
            "reset": {"POST": self._reset},
            "restart": {"POST": self._restart},
            "lose-session": {"POST": self._lose_session},
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == PREFIX or path.startswith(PREFIX + "/")):
            await self._app(scope, receive, send)
            return
        try:
            self._authorize(scope)  # before the body is read: no token, no memory spent on it
            handler = self._route(scope["method"], path[len(PREFIX) :].strip("/"))
            body = await self._body(scope, receive) if scope["method"] in ("POST", "PUT", "PATCH") else b""
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
            status, payload = handler(_Request(scope["method"], query, body))
            headers: list[tuple[bytes, bytes]] = []
        except AdminError as exc:
            status, payload, headers = exc.status, {"error": exc.error, "message": exc.message}, exc.headers
        except Exception as exc:  # a bug of ours must not stop the server
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            status, payload, headers = 500, {"error": "internal_error", "message": detail}, []
        data = json.dumps(payload, default=repr).encode()
        raw = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            (b"cache-control", b"no-store"),
            *headers,
        ]
        await send({"type": "http.response.start", "status": status, "headers": raw})
        await send({"type": "http.response.body", "body": data})

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        """The request body, bounded by the server's max_body and body_timeout, as the MCP endpoint's."""
        state = self.server._state
        close = [(b"connection", b"close")]
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > state.max_body:
                raise AdminError(413, "payload_too_large", f"the body exceeds max_body ({state.max_body} bytes)", close)
        body, size = await read_body(receive, state.max_body)
        if scope.get(BODY_TIMED_OUT):
            raise AdminError(408, "request_timeout", f"the body did not arrive within {state.body_timeout} s", close)
        if size is not None:
            raise AdminError(413, "payload_too_large", f"the body exceeds max_body ({state.max_body} bytes)", close)
        return body

    def _authorize(self, scope: Scope) -> None:
        values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        challenge = [(b"www-authenticate", b'Bearer realm="mcp-testkit admin"')]
        if not values:
            message = "missing admin token: send Authorization: Bearer <the token mcp-testkit serve printed>"
            raise AdminError(401, "unauthorized", message, challenge)
        scheme, _, credential = values[0].partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), self._token):
            raise AdminError(401, "unauthorized", "wrong admin token (it changes on every start)", challenge)

    def _route(self, method: str, name: str) -> Handler:
        methods = self._routes.get(name)
        if methods is None:
            endpoints = ", ".join(f"{m} {PREFIX}/{n}" for n, ms in self._routes.items() for m in ms)
            raise AdminError(404, "not_found", f"no admin endpoint {PREFIX}/{name}; endpoints: {endpoints}")
        handler = methods.get(method)
        if handler is None:
            allow = ", ".join(methods)
            message = f"{PREFIX}/{name} takes {allow}, not {method}"
            raise AdminError(405, "method_not_allowed", message, [(b"allow", allow.encode())])
        return handler

    # -- endpoints -----------------------------------------------------------------------------------------------

    def _health(self, request: _Request) -> tuple[int, Any]:
        request.params()
        server = self.server
        sessions = list(server.sessions)
        return 200, {
            "status": "ok",
            "name": server.name,
            "url": server.url if server.started else None,
            "tools": list(server.tools),
            "sessions": {"alive": sum(s.alive for s in sessions), "total": len(sessions)},
            "requests": len(server.journal),
            "dropped": server.journal.dropped,
            "pending_faults": len(server.pending_faults()),
        }

    def _journal(self, request: _Request) -> tuple[int, Any]:
        params = request.params("method", "tool", "since")
        since = _int_param(params, "since", 0)
        journal = self.server.journal
        hidden = journal._redacted()
        records = [
            record.to_json(hidden)
            for record in journal.requests(params.get("method") or None, tool=params.get("tool") or None)
            if record.seq > since
        ]
        return 200, {"count": len(records), "records": records}

    def _executions(self, request: _Request) -> tuple[int, Any]:
        params = request.params("tool")
        ledger = dict(self.server._state.executions)
        tool = params.get("tool")
        if tool:
            ledger = {tool: ledger.get(tool, 0)}
        return 200, {"total": sum(ledger.values()), "tools": ledger}

    def _tools(self, request: _Request) -> tuple[int, Any]:
        data = request.json()
        try:
            definition = add_tool(self.server, data)
        except ScenarioError as exc:
            raise AdminError(400, "bad_request", f"tool: {exc}") from None
        return 201, {"tool": definition}

    def _pending_faults(self, request: _Request) -> tuple[int, Any]:
        request.params()
        return 200, {"rules": [rule.to_json() for rule in self.server.pending_faults()]}

    def _faults(self, request: _Request) -> tuple[int, Any]:
        data = request.json()
        try:
            rules = add_rules(self.server, data, stdio=False)
        except ScenarioError as exc:
            raise AdminError(400, "bad_request", f"fault rule: {exc}") from None
        return 201, {"rules": [rule.to_json() for rule in rules]}

    def _scenario(self, request: _Request) -> tuple[int, Any]:
        data = request.json()
        fixed = sorted(key for key in ("name", "preset") if isinstance(data, dict) and key in data)
        if fixed:
            message = f"scenario: {fixed[0]!r} is fixed when the server starts; leave it out here"
            raise AdminError(400, "bad_request", message)
        try:
            scenario = from_json(data, source="(request body)")
            server = self.server
            state = server._state
            for key in _LIVE_SETTINGS:
                if key in scenario.options:
                    setattr(state, key, scenario.options[key])
            scenario.apply(server)
            check_transport(server.pending_faults(), stdio=False)
        except ScenarioError as exc:
            raise AdminError(400, "bad_request", str(exc)) from None
        return 200, {"tools": list(self.server.tools), "pending_faults": len(self.server.pending_faults())}

    def _reset(self, request: _Request) -> tuple[int, Any]:
        request.params()
        self.server.reset()
        if self._on_reset is not None:
            self._on_reset(self.server)
        return 200, {"reset": True, "tools": list(self.server.tools)}

    def _restart(self, request: _Request) -> tuple[int, Any]:
        data = request.json(optional=True) or {}
        if not isinstance(data, dict) or set(data) - {"unknown_session_status"}:
            message = 'restart takes an optional body {"unknown_session_status": 404 or 400}'
            raise AdminError(400, "bad_request", message)
        ended = len(self.server.sessions.alive)
        try:
            self.server.restart(data.get("unknown_session_status", 404))
        except ValueError as exc:
            raise AdminError(400, "bad_request", f"unknown_session_status: {exc}") from None
        return 200, {"sessions_ended": ended}

    def _lose_session(self, request: _Request) -> tuple[int, Any]:
        data = request.json(optional=True) or {}
        if not isinstance(data, dict) or set(data) - {"session_id"} or not isinstance(data.get("session_id", ""), str):
            raise AdminError(400, "bad_request", 'lose-session takes an optional body {"session_id": "..."}')
        try:
            session = self.server.lose_session(data.get("session_id"))
        except LookupError as exc:
            raise AdminError(409, "conflict", str(exc).strip("'\"")) from None
        return 200, {"session_id": session.id}


def _int_param(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise AdminError(400, "bad_request", f"query parameter {name} must be an integer, not {value!r}") from None
