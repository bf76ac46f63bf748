"""The authorization server's HTTP endpoints, as bare ASGI: metadata (and the protected-resource metadata of the
MCP endpoint it is served beside), authorize (consent without a browser: 302 to the redirect URI with code, state
and `iss`), token, RFC 7591 registration and RFC 7009 revocation; each exchange goes into the journal's auth log,
redacted."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import anyio

from mcp_testkit import faults
from mcp_testkit._wire.asgi import Receive, Scope, Send, origin_of, read_body
from mcp_testkit.auth._grants import AuthSettings, Outcome, authenticate, document_client, failed, token_grant
from mcp_testkit.auth._metadata import (
    PRM_PATH,
    AuthPaths,
    authorization_server_metadata,
    protected_resource_metadata,
)
from mcp_testkit.auth._store import TOKEN_AUTH_METHODS, AuthorizationCode, GrantStore, RegisteredClient
from mcp_testkit.faults import AUTH_ENDPOINT_METHODS
from mcp_testkit.journal import AuthExchange

if TYPE_CHECKING:
    from mcp_testkit.faults import FaultPlan
    from mcp_testkit.journal import Journal

__all__ = ["MAX_AUTH_BODY", "SECRET_PARAMETERS", "AuthEndpoints", "ProtectedPath", "redacted_parameters"]

MAX_AUTH_BODY = 64 * 1024
"""Bytes a request to the authorization server may take."""

ProtectedPath = tuple[str, tuple[str, ...]]
"""The MCP endpoint's path and the scopes every request to it needs."""


class AuthEndpoints:
    """The endpoints of one authorization server, over its store and settings."""

    def __init__(self, store: GrantStore, settings: AuthSettings) -> None:
        self.store = store
        self.settings = settings
        self.paths = AuthPaths(settings.issuer_path)

    def issuer(self, base: str) -> str:
        return base + self.paths.issuer_path

    def endpoint_of(self, path: str, protected: ProtectedPath) -> str | None:
        if path in self.resource_metadata_paths(protected[0]):
            return "resource metadata"
        return self.paths.endpoint_of(path)

    def resource_metadata_paths(self, resource_path: str) -> tuple[str, ...]:
        """Where the resource at `resource_path` has its RFC 9728 document, as `resource_metadata=` says; the
        path-inserted one first (what a challenge names)."""
        where = self.settings.resource_metadata
        return (
            *((PRM_PATH + resource_path,) if where in ("both", "path") and resource_path != "/" else ()),
            *((PRM_PATH,) if where in ("both", "root") or resource_path == "/" else ()),
        )

    def challenge(self, base: str, resource_path: str, status: int, scopes: tuple[str, ...]) -> dict[str, str]:
        """The `WWW-Authenticate` fields a refusal of the resource names: its metadata's URL, and the scopes needed
        (a 401's as the settings say; a 403 insufficient_scope's always)."""
        fields = {}
        if self.settings.challenge_metadata:
            fields["resource_metadata"] = base + self.resource_metadata_paths(resource_path)[0]
        if scopes and (status == 403 or self.settings.challenge_scope):
            fields["scope"] = " ".join(scopes)
        return fields

    async def serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        journal: Journal,
        protected: ProtectedPath,
        plan: FaultPlan | None = None,
    ) -> None:
        """Answer one request to an auth path (`endpoint_of` says it is one) and log it; a rule of `plan` naming the
        endpoint (`oauth/token`, ...) may put a fault of the authorization server on it."""
        endpoint = self.endpoint_of(scope["path"], protected) or "unknown"
        method = scope["method"]
        params: dict[str, Any] = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        body, too_big = await read_body(receive, MAX_AUTH_BODY)
        target = AUTH_ENDPOINT_METHODS.get(endpoint)
        fault = plan.take(target, None, None, None) if plan and target is not None else None
        if isinstance(fault, faults.SlowAuthServer):
            await anyio.sleep(fault.delay_s)
        if too_big is not None:
            outcome = failed(413, "invalid_request", f"the body exceeds {MAX_AUTH_BODY} bytes")
        elif isinstance(fault, faults.AuthServerError):
            error = "invalid_request" if fault.status < 500 else "temporarily_unavailable"
            outcome = failed(fault.status, error, f"the authorization server failed ({fault!r})")
        else:
            outcome = self._answer(endpoint, method, scope, params, body, protected, fault)
            if outcome.fault_unused and plan is not None and fault is not None:
                plan.give_back(fault)  # it found nothing to change: still due for the next request it matches
                fault = None
        await _send(send, outcome)
        journal.auth.append(
            AuthExchange(
                len(journal.auth) + 1,
                time.time(),
                endpoint,
                method,
                scope["path"],
                outcome.status,
                redacted_parameters(params),
                outcome.client_id,
                outcome.client_auth,
                outcome.issued,
                outcome.error,
                None if fault is None else repr(fault),
                fault,
            )
        )

    def _answer(
        self,
        endpoint: str,
        method: str,
        scope: Scope,
        params: dict[str, Any],
        body: bytes,
        protected: ProtectedPath,
        fault: faults.Fault | None = None,
    ) -> Outcome:
        base = origin_of(scope)
        if endpoint in ("metadata", "resource metadata"):
            if method != "GET":
                return failed(405, "invalid_request", f"{scope['path']} answers GET only")
            if endpoint == "resource metadata":
                listed = protected[1] if self.settings.metadata_scopes else ()
                return Outcome(200, protected_resource_metadata(base + protected[0], self.issuer(base), listed))
            settings = self.settings
            document = authorization_server_metadata(
                base,
                self.paths,
                settings.scopes,
                registration=settings.registration,
                metadata_documents=bool(settings.metadata_documents),
            )
            return Outcome(200, document)
        if endpoint == "authorize":
            if method == "POST":
                params.update(_form(body))
            return self._authorize(base, params, fault)
        if method != "POST":
            return failed(405, "invalid_request", f"the {endpoint} endpoint answers POST only")
        if endpoint == "register":
            try:
                document = json.loads(body or b"{}")
            except ValueError:
                return failed(400, "invalid_client_metadata", "the registration body is not JSON")
            params.update(document if isinstance(document, dict) else {})
            return self._register(params)
        params.update(_form(body))
        authorization = dict(scope.get("headers", ())).get(b"authorization")
        client, method_used, refused = authenticate(
            self.store, self.settings, params, None if authorization is None else authorization.decode("latin-1")
        )
        if refused is not None:
            if method_used == "client_secret_basic":
                refused.headers.append((b"www-authenticate", b'Basic realm="mcp-testkit"'))
            return refused
        assert client is not None
        if isinstance(fault, faults.RejectRefresh) and endpoint == "token":
            if params.get("grant_type") == "refresh_token":
                self.store.spend_refresh(params.get("refresh_token", ""))  # it no longer refreshes either
                refusal = failed(400, "invalid_grant", "the refresh token was rejected (RejectRefresh)")
                refusal.client_id, refusal.client_auth = client.client_id, method_used
                return refusal
        outcome = (
            token_grant(self.store, self.settings, params, client, self.issuer(base))
            if endpoint == "token"
            else self._revoke(params)
        )
        outcome.fault_unused = isinstance(fault, faults.RejectRefresh)
        outcome.client_id, outcome.client_auth = client.client_id, method_used
        return outcome

    def _authorize(self, base: str, params: Mapping[str, str], fault: faults.Fault | None = None) -> Outcome:
        """Consent at once (or refuse, if `consent` is off): 302 to the client's redirect URI."""
        client_id = params.get("client_id", "")
        client = self.store.clients.get(client_id) or document_client(self.store, self.settings, client_id)
        if client is None:
            return failed(
                400, "invalid_client", f"unknown client {client_id!r}: register it first", client_id=client_id
            )
        redirect_uri = params.get("redirect_uri") or (client.redirect_uris[0] if len(client.redirect_uris) == 1 else "")
        if redirect_uri not in client.redirect_uris:
            message = f"redirect_uri is not one client {client_id!r} registered"
            return failed(400, "invalid_request", message, client_id=client_id)
        answer = {"state": params["state"]} if "state" in params else {}
        answer["iss"] = self.issuer(base)
        if isinstance(fault, faults.WrongIssuer):  # a mix-up: another issuer named, or none
            del answer["iss"]
            if fault.iss is not None:
                answer["iss"] = fault.iss
        error = self._refusal(params)
        if error is not None:
            outcome = _redirect(redirect_uri, {"error": error[0], "error_description": error[1], **answer})
            outcome.error, outcome.client_id = f"{error[0]}: {error[1]}", client_id
            return outcome
        scopes = tuple(params.get("scope", "").split())
        code = AuthorizationCode(
            client_id,
            redirect_uri,
            params["code_challenge"],
            scopes,
            params.get("resource"),
            time.time() + self.settings.code_ttl_s,
        )
        outcome = _redirect(redirect_uri, {"code": self.store.add_code(code), **answer})
        outcome.client_id = client_id
        return outcome

    def _refusal(self, params: Mapping[str, str]) -> tuple[str, str] | None:
        """Why an authorization request from a known client with a good redirect URI is refused, or None."""
        if params.get("response_type") != "code":
            return "unsupported_response_type", "response_type must be code"
        if not params.get("code_challenge"):
            return "invalid_request", "code_challenge is required (PKCE)"
        if params.get("code_challenge_method") != "S256":
            return "invalid_request", "code_challenge_method must be S256"
        known = self.settings.scopes
        unknown = [s for s in params.get("scope", "").split() if known is not None and s not in known]
        if unknown:
            return "invalid_scope", f"unknown scope {' '.join(unknown)!r}"
        if not self.settings.consent:
            return "access_denied", "the user did not consent (AuthServer.consent is False)"
        return None

    def _register(self, params: Mapping[str, Any]) -> Outcome:
        """RFC 7591: a new client from its metadata, 201 with its id (and secret unless it is public)."""
        if not self.settings.registration:
            return failed(404, "invalid_request", "dynamic registration is off (AuthServer(registration=False))")
        method = params.get("token_endpoint_auth_method") or "client_secret_basic"
        if method not in TOKEN_AUTH_METHODS:
            supported = ", ".join(TOKEN_AUTH_METHODS)
            return failed(400, "invalid_client_metadata", f"token_endpoint_auth_method must be one of {supported}")
        grant_types = tuple(params.get("grant_types") or ("authorization_code",))
        redirect_uris = params.get("redirect_uris") or []
        if not isinstance(redirect_uris, list) or not all(isinstance(uri, str) for uri in redirect_uris):
            return failed(400, "invalid_redirect_uri", "redirect_uris must be a list of URIs")
        if "authorization_code" in grant_types and not redirect_uris:
            return failed(400, "invalid_redirect_uri", "the authorization_code grant needs redirect_uris")
        client = RegisteredClient(
            self.store.new_client_id(),
            None if method == "none" else secrets.token_urlsafe(24),
            tuple(redirect_uris),
            method,
            grant_types,
            registered_by="registration",
        )
        self.store.add_client(client)
        body = {
            **{k: v for k, v in params.items() if k not in ("client_id", "client_secret")},
            "client_id": client.client_id,
            "client_id_issued_at": int(time.time()),
            "token_endpoint_auth_method": method,
            "grant_types": list(grant_types),
            "redirect_uris": list(redirect_uris),
        }
        if client.client_secret is not None:
            body["client_secret"] = client.client_secret
            body["client_secret_expires_at"] = 0
        return Outcome(201, body, client_id=client.client_id)

    def _revoke(self, params: Mapping[str, str]) -> Outcome:
        """RFC 7009: revoke the token given, if any; 200 either way."""
        self.store.revoke(value=params.get("token", ""))
        return Outcome(200, None)


SECRET_PARAMETERS = frozenset(
    {
        "code",
        "code_verifier",
        "client_secret",
        "refresh_token",
        "access_token",
        "token",
        "assertion",
        "client_assertion",
        "subject_token",
        "actor_token",
        "password",
    }
)
"""The parameters of an auth exchange whose value the auth log never keeps ('***')."""


def redacted_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `parameters` with the value of every secret one replaced by '***'."""
    return {name: "***" if name in SECRET_PARAMETERS else value for name, value in parameters.items()}


def _form(body: bytes) -> dict[str, str]:
    return dict(parse_qsl(body.decode("latin-1"))) if body else {}


def _redirect(uri: str, query: Mapping[str, str]) -> Outcome:
    joined = "&" if urlsplit(uri).query else "?"
    return Outcome(302, None, [(b"location", f"{uri}{joined}{urlencode(query)}".encode())])


async def _send(send: Send, outcome: Outcome) -> None:
    body = b"" if outcome.body is None else json.dumps(outcome.body).encode()
    headers = [*outcome.headers, (b"content-length", str(len(body)).encode())]
    if outcome.body is not None:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": outcome.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
