"""The admin API of `mcp-testkit serve --admin`: script and inspect a running server over HTTP.

A Starlette `Router`: `/_testkit/...` goes through a token gate (a bearer token, checked before any
body is read) to one `Route` per admin endpoint, and everything else to the server's MCP app, which
stays raw ASGI. Admin requests are never recorded in the MCP journal, and the MCP endpoint never
answers them. Every bad request gets a 4xx JSON error naming the problem; none stops the server.
"""

from __future__ import annotations

import dataclasses
import hmac
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, Router

from mcp_testkit._wire.asgi import read_body
from mcp_testkit._wire.runner import BODY_TIMED_OUT
from mcp_testkit._wire.strict_json import JsonError, loads, where_refused
from mcp_testkit._wire.strict_json import dumps as strict_dumps
from mcp_testkit.scenario import ScenarioError, add_offering, add_rules, add_tool, check_transport, from_json

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from mcp_testkit.server import TestMcpServer

__all__ = ["PREFIX", "AdminApp", "ProxyAdminApp"]


PREFIX = "/_testkit"
"""Where the admin endpoints live; the MCP endpoint may not be under it."""

_MAX_DEPTH = 160
"""The deepest nesting of an admin body: a message's bound (128) and room for a scenario's envelope."""
_LIVE_SETTINGS = ("page_size", "response_mode", "get_stream")
_BODY_METHODS = ("POST", "PUT", "PATCH")


class AdminError(Exception):
    """A request the admin API refuses: HTTP status, a short error code and a message naming the problem."""

    def __init__(self, status: int, error: str, message: str, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message
        self.headers = dict(headers or {})

    def response(self) -> AdminResponse:
        return AdminResponse({"error": self.error, "message": self.message}, self.status, self.headers)


class AdminResponse(JSONResponse):
    """A JSON answer of the admin API: never cached, and any value printable (`repr` for what JSON cannot say)."""

    def __init__(self, content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(content, status_code, {**(headers or {}), "cache-control": "no-store"})

    def render(self, content: Any) -> bytes:
        return strict_dumps(content, default=repr).encode()


class _Request:
    """What an endpoint handler reads: the method, the query and the (bounded) body."""

    __slots__ = ("body", "method", "query")

    def __init__(self, method: str, query: dict[str, str], body: bytes) -> None:
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
            return loads(self.body, max_depth=_MAX_DEPTH)
        except JsonError as exc:
            field = where_refused(self.body.decode("utf-8", "replace"), _MAX_DEPTH)
            at = f" at {field}" if field else ""
            raise AdminError(400, "bad_request", f"the body is not JSON this server reads{at}: {exc}") from None

    def params(self, *allowed: str) -> dict[str, str]:
        """The query parameters (the last value of a repeated one); 400 naming an unknown one."""
        unknown = sorted(set(self.query) - set(allowed))
        if unknown:
            known = ", ".join(allowed) or "none"
            message = f"unknown query parameter {unknown[0]!r}; this endpoint takes: {known}"
            raise AdminError(400, "bad_request", message)
        return self.query


Handler = Callable[[_Request], tuple[int, Any]]


class AdminApp(Router):
    """The `serve --admin` application: `/_testkit/...` routed to the admin endpoints of `server`, the rest to `app`.

    `app` is the server's MCP app unless given. `on_reset(server)` runs after `POST /_testkit/reset`, to
    script the fresh state again (the command line re-applies its scenario there and re-attaches the
    journal file).
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
        self._on_reset = on_reset
        self._endpoints = self._table()
        endpoints = Router(
            [Route(f"/{name}", _Endpoint(self, name, methods)) for name, methods in self._endpoints.items()],
            redirect_slashes=False,
            default=self._not_found,
        )
        gate = _TokenGate(token.encode(), endpoints)
        super().__init__(
            # Two routes: /_testkit itself (a 404 listing the endpoints, once authorized) and what is under it.
            [Route(PREFIX, gate), Route(PREFIX + "/{rest:path}", gate)],
            redirect_slashes=False,
            default=app if app is not None else server.asgi_app,  # the MCP endpoint, raw ASGI
        )

    def _table(self) -> dict[str, dict[str, Handler]]:
        """Each endpoint's handler per HTTP method."""
        return {
            "health": {"GET": self._health},
            "journal": {"GET": self._journal},
            "executions": {"GET": self._executions},
            "inputs": {"GET": self._inputs},
            "violations": {"GET": self._violations},
            "tools": {"POST": self._tools},
            "resources": {"POST": self._offering("resources", "resource"), "DELETE": self._remove_resource},
            "resource-templates": {
                "POST": self._offering("resource_templates", "resourceTemplate"),
                "DELETE": self._remove_resource,
            },
            "prompts": {"POST": self._offering("prompts", "prompt"), "DELETE": self._remove_prompt},
            "completions": {"POST": self._offering("completions", "completion")},
            "faults": {"GET": self._pending_faults, "POST": self._faults},
            "scenario": {"POST": self._scenario},
            "reset": {"POST": self._reset},
            "restart": {"POST": self._restart},
            "lose-session": {"POST": self._lose_session},
        }

    def _limits(self) -> tuple[int, float]:
        """The largest admin body, and how long it may take to arrive: the MCP endpoint's."""
        return self.server.max_body, self.server.body_timeout_s

    async def _not_found(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoints = ", ".join(f"{m} {PREFIX}/{n}" for n, ms in self._endpoints.items() for m in ms)
        message = f"no admin endpoint {PREFIX}/{_endpoint_name(scope)}; endpoints: {endpoints}"
        await AdminError(404, "not_found", message).response()(scope, receive, send)

    async def _body(self, request: Request) -> bytes:
        """The request body, bounded by the server's max_body and body_timeout, as the MCP endpoint's."""
        max_body, body_timeout = self._limits()
        close = {"connection": "close"}
        too_large = f"the body exceeds max_body ({max_body} bytes)"
        if any(_exceeds(value, max_body) for value in request.headers.getlist("content-length")):
            raise AdminError(413, "payload_too_large", too_large, close)
        body, size = await read_body(request.receive, max_body)
        if request.scope.get(BODY_TIMED_OUT):
            raise AdminError(408, "request_timeout", f"the body did not arrive within {body_timeout} s", close)
        if size is not None:
            raise AdminError(413, "payload_too_large", too_large, close)
        return body

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
        hidden = journal.writer.hidden_headers()
        records = [
            record.to_json(hidden)
            for record in journal.requests(params.get("method") or None, tool=params.get("tool") or None)
            if record.seq > since
        ]
        return 200, {"count": len(records), "records": records}

    def _executions(self, request: _Request) -> tuple[int, Any]:
        params = request.params("tool")
        ledger = self.server.ledger
        tool = params.get("tool")
        if tool:
            ledger = {tool: ledger.get(tool, 0)}
        return 200, {"total": sum(ledger.values()), "tools": ledger}

    def _inputs(self, request: _Request) -> tuple[int, Any]:
        """What tools asked the client for and what they got (`journal.inputs`), of one tool or kind if named."""
        params = request.params("tool", "kind")
        asked = self.server.journal.inputs.asked(params.get("tool") or None, kind=params.get("kind") or None)
        inputs = [{**dataclasses.asdict(e), "kind": e.kind, "answered": e.answered} for e in asked]
        return 200, {"count": len(inputs), "inputs": inputs}

    def _violations(self, request: _Request) -> tuple[int, Any]:
        """The referee's violations (`journal.violations`), of one rule if named, after request `since` if given."""
        params = request.params("rule", "since")
        since = _int_param(params, "since", 0)
        rule = params.get("rule") or None
        found = [
            violation.to_json()
            for violation in self.server.journal.violations
            if violation.seq > since and (rule is None or violation.rule == rule)
        ]
        return 200, {"count": len(found), "violations": found}

    def _tools(self, request: _Request) -> tuple[int, Any]:
        data = request.json()
        try:
            definition = add_tool(self.server, data)
        except ScenarioError as exc:
            raise AdminError(400, "bad_request", f"tool: {exc}") from None
        return 201, {"tool": definition}

    def _offering(self, key: str, field: str) -> Handler:
        """POST of a resource, template, prompt or completion values, in the JSON of the scenario key `key`: added
        (201), or replacing the one of the same URI or name (200); sessions are notified as the Python API does."""

        def add(request: _Request) -> tuple[int, Any]:
            data = request.json()
            offerings = self.server.offerings
            kinds: dict[str, Mapping[str, Any]] = {
                "resources": offerings.resources,
                "resource_templates": offerings.templates,
                "prompts": offerings.prompts,
            }
            known = kinds.get(key, {})
            fields = ("uri", "uriTemplate", "name") if isinstance(data, dict) else ()
            named = next((data[k] for k in fields if k in data), None)
            replaced = isinstance(named, str) and named in known
            try:
                offered = add_offering(self.server, key, data)
            except ScenarioError as exc:
                raise AdminError(400, "bad_request", f"{field}: {exc}") from None
            return (200 if replaced else 201), {field: offered}

        return add

    def _remove_resource(self, request: _Request) -> tuple[int, Any]:
        uri = request.params("uri").get("uri")
        if not uri:
            raise AdminError(400, "bad_request", "name the resource or template to remove: ?uri=... (its uriTemplate)")
        try:
            self.server.remove_resource(uri)
        except KeyError as exc:
            raise AdminError(404, "not_found", str(exc).strip("'\"")) from None
        return 200, {"removed": uri}

    def _remove_prompt(self, request: _Request) -> tuple[int, Any]:
        name = request.params("name").get("name")
        if not name:
            raise AdminError(400, "bad_request", "name the prompt to remove: ?name=...")
        try:
            self.server.remove_prompt(name)
        except KeyError as exc:
            raise AdminError(404, "not_found", str(exc).strip("'\"")) from None
        return 200, {"removed": name}

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
            for key in _LIVE_SETTINGS:
                if key in scenario.options:
                    setattr(server, key, scenario.options[key])  # through the server's checking setters
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


class ProxyAdminApp(AdminApp):
    """The admin API of `mcp-testkit proxy`: the journal and fault endpoints of `serve --admin`, for a chaos proxy
    (`proxy`, a `ChaosProxy`; its upstream's tools and sessions are not the proxy's to script)."""

    def __init__(self, proxy: Any, token: str, *, on_reset: Callable[[Any], None] | None = None) -> None:
        self.proxy = proxy
        super().__init__(proxy, token, app=proxy.asgi_app, on_reset=on_reset)

    def _table(self) -> dict[str, dict[str, Handler]]:
        return {
            "health": {"GET": self._proxy_health},
            "journal": {"GET": self._journal},
            "faults": {"GET": self._pending_faults, "POST": self._proxy_faults},
            "scenario": {"POST": self._proxy_scenario},
            "reset": {"POST": self._proxy_reset},
        }

    def _limits(self) -> tuple[int, float]:
        return 4 * 1024 * 1024, 60.0

    def _proxy_health(self, request: _Request) -> tuple[int, Any]:
        request.params()
        proxy = self.proxy
        return 200, {
            "status": "ok",
            "upstream": proxy.upstream,
            "url": proxy.url if proxy.started else None,
            "requests": len(proxy.journal),
            "dropped": proxy.journal.dropped,
            "pending_faults": len(proxy.pending_faults()),
        }

    def _add(self, data: Any, where: str) -> list[Any]:
        from mcp_testkit.scenario import parse_rules

        try:
            rules = [rule for _, rule in parse_rules(data, stdio=False)]
            for rule in rules:
                self.proxy.check_rule(rule)
        except (ScenarioError, ValueError) as exc:
            raise AdminError(400, "bad_request", f"{where}: {exc}") from None
        return [self.proxy.add_rule(rule) for rule in rules]

    def _proxy_faults(self, request: _Request) -> tuple[int, Any]:
        rules = self._add(request.json(), "fault rule")
        return 201, {"rules": [rule.to_json() for rule in rules]}

    def _proxy_scenario(self, request: _Request) -> tuple[int, Any]:
        data = request.json()
        extra = sorted(set(data) - {"faults"}) if isinstance(data, dict) else []
        if not isinstance(data, dict) or extra:
            named = f"; it has {', '.join(map(repr, extra))}" if extra else ""
            message = f'the proxy takes a scenario of faults only, {{"faults": [...]}}{named}'
            raise AdminError(400, "bad_request", message)
        self._add(data.get("faults", []), "scenario")
        return 200, {"pending_faults": len(self.proxy.pending_faults())}

    def _proxy_reset(self, request: _Request) -> tuple[int, Any]:
        request.params()
        self.proxy.reset()
        if self._on_reset is not None:
            self._on_reset(self.proxy)
        return 200, {"reset": True, "pending_faults": len(self.proxy.pending_faults())}


class _Endpoint:
    """One admin endpoint as ASGI: its methods, each answered by a handler (any other method gets 405)."""

    def __init__(self, admin: AdminApp, name: str, methods: dict[str, Handler]) -> None:
        self._admin = admin
        self._name = name
        self._methods = methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self._answer(Request(scope, receive))
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        try:
            handler = self._methods.get(request.method)
            if handler is None:
                allow = ", ".join(self._methods)
                message = f"{PREFIX}/{self._name} takes {allow}, not {request.method}"
                raise AdminError(405, "method_not_allowed", message, {"allow": allow})
            arguments = _Request(request.method, dict(request.query_params), b"")
            if request.method in _BODY_METHODS:
                arguments.body = await self._admin._body(request)
                # Decoding and checking a body (a scenario of 30,000 tools takes seconds) runs in a worker
                # thread, so that MCP traffic goes on meanwhile; scripting the server is safe from any thread.
                status, payload = await anyio.to_thread.run_sync(handler, arguments)
            else:
                status, payload = handler(arguments)
        except AdminError as exc:
            return exc.response()
        except Exception as exc:  # a bug of ours must not stop the server
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            return AdminResponse({"error": "internal_error", "message": detail}, 500)
        return AdminResponse(payload, status)


class _TokenGate:
    """Refuses an admin request without the bearer token (401, before its body is read), else routes it on.

    The endpoint is named by what follows `/_testkit/`, surrounding slashes dropped (`/_testkit/health/`
    is `health`), so the endpoint router sees `/health`.
    """

    def __init__(self, token: bytes, endpoints: ASGIApp) -> None:
        self._token = token
        self._endpoints = endpoints

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            self._authorize(scope)  # before the body is read: no token, no memory spent on it
        except AdminError as exc:
            await exc.response()(scope, receive, send)
            return
        root = scope.get("root_path", "")
        await self._endpoints({**scope, "path": f"{root}/{_endpoint_name(scope)}"}, receive, send)

    def _authorize(self, scope: Scope) -> None:
        values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
        challenge = {"www-authenticate": 'Bearer realm="mcp-testkit admin"'}
        if not values:
            message = "missing admin token: send Authorization: Bearer <the token mcp-testkit serve printed>"
            raise AdminError(401, "unauthorized", message, challenge)
        scheme, _, credential = values[0].partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), self._token):
            raise AdminError(401, "unauthorized", "wrong admin token (it changes on every start)", challenge)


def _endpoint_name(scope: Scope) -> str:
    """The admin endpoint a request names: what follows `/_testkit/`, surrounding slashes dropped."""
    return str(scope["path_params"].get("rest", "")).strip("/")


def _exceeds(declared: str, limit: int) -> bool:
    """Whether a Content-Length announces more than `limit` bytes (a value that is no number is left to the body)."""
    if not (declared.isascii() and declared.isdigit()):
        return False
    digits = declared.lstrip("0")
    return len(digits) > len(str(limit)) or int(digits or "0") > limit  # no int() of a 5,000-digit value


def _int_param(params: dict[str, str], name: str, default: int) -> int:
    value = params.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise AdminError(400, "bad_request", f"query parameter {name} must be an integer, not {value!r}") from None
