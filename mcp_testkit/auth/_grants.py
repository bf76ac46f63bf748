"""The token endpoint: how a client authenticates (client_secret_basic, client_secret_post, none) and the three
grants (authorization code with PKCE S256, refresh with rotation, client credentials), each answered as OAuth 2.1
says, with an error that names what to fix and never echoes a secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from mcp_testkit.auth._store import GrantStore, RegisteredClient

__all__ = ["AuthSettings", "Outcome", "authenticate", "document_client", "failed", "token_grant"]


@dataclass
class AuthSettings:
    """What an `AuthServer` was built with; `consent` may change while it serves."""

    scopes: tuple[str, ...] | None
    issuer_path: str
    token_ttl_s: float
    code_ttl_s: float
    refresh_tokens: bool
    registration: bool
    consent: bool
    metadata_documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_metadata: str = "both"
    """Where the protected resource's RFC 9728 document is served: 'both', 'path' (path-inserted) or 'root'."""
    challenge_metadata: bool = True
    """Whether a 401's `WWW-Authenticate` names the resource metadata's URL."""
    challenge_scope: bool = True
    """Whether a 401's `WWW-Authenticate` names the scopes needed (a 403 `insufficient_scope` always does)."""
    metadata_scopes: bool = True
    """Whether the resource metadata lists the scopes needed (`scopes_supported`)."""


@dataclass
class Outcome:
    """What an endpoint answers, and what the auth log keeps of it."""

    status: int
    body: dict[str, Any] | None = None
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    client_id: str | None = None
    client_auth: str | None = None
    issued: tuple[str, ...] = ()
    error: str | None = None
    fault_unused: bool = False
    """The fault the request carried found nothing to change here (a RejectRefresh on another grant)."""


def failed(status: int, error: str, description: str, **known: Any) -> Outcome:
    """An OAuth error answer (RFC 6749 section 5.2)."""
    outcome = Outcome(status, {"error": error, "error_description": description}, error=f"{error}: {description}")
    for name, value in known.items():
        setattr(outcome, name, value)
    return outcome


def authenticate(
    store: GrantStore, settings: AuthSettings, params: Mapping[str, str], authorization: str | None
) -> tuple[RegisteredClient | None, str, Outcome | None]:
    """The client a token or revocation request comes from, the method it used, or the 401 that refuses it."""
    client_id = params.get("client_id")
    secret = params.get("client_secret")
    method = "client_secret_post" if secret is not None else "none"
    if authorization is not None and authorization[:6].lower() == "basic ":
        try:
            decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode()
            basic_id, _, basic_secret = decoded.partition(":")
        except ValueError:
            return None, "client_secret_basic", failed(401, "invalid_client", "the Basic credentials do not decode")
        client_id, secret, method = unquote(basic_id), unquote(basic_secret), "client_secret_basic"
    if not client_id:
        return None, method, failed(401, "invalid_client", "no client_id: send it in the body or as Basic credentials")
    client = store.clients.get(client_id) or document_client(store, settings, client_id)
    if client is None:
        message = f"unknown client {client_id!r}: register it first (RFC 7591) or with AuthServer.register_client"
        return None, method, failed(401, "invalid_client", message, client_id=client_id, client_auth=method)
    if client.auth_method != method:
        message = f"client {client_id!r} is registered for {client.auth_method}, but authenticated with {method}"
        return None, method, failed(401, "invalid_client", message, client_id=client_id, client_auth=method)
    expected = client.client_secret
    if method != "none" and (expected is None or not hmac.compare_digest((secret or "").encode(), expected.encode())):
        message = f"wrong client secret for client {client_id!r}"
        return None, method, failed(401, "invalid_client", message, client_id=client_id, client_auth=method)
    return client, method, None


def document_client(store: GrantStore, settings: AuthSettings, client_id: str) -> RegisteredClient | None:
    """A client whose id is the URL of a client ID metadata document the test scripted, as a public client."""
    document = settings.metadata_documents.get(client_id)
    if document is None:
        return None
    redirect_uris = tuple(str(uri) for uri in document.get("redirect_uris", ()))
    client = RegisteredClient(client_id, None, redirect_uris, "none", registered_by="metadata document")
    return store.add_client(client)


def token_grant(
    store: GrantStore, settings: AuthSettings, params: Mapping[str, str], client: RegisteredClient, issuer: str
) -> Outcome:
    """Answer a token request of an authenticated client by its `grant_type`."""
    grant_type = params.get("grant_type")
    if grant_type not in ("authorization_code", "refresh_token", "client_credentials"):
        supported = "authorization_code, refresh_token or client_credentials"
        return failed(400, "unsupported_grant_type", f"grant_type {grant_type!r} is not supported: use {supported}")
    if grant_type not in client.grant_types:
        message = f"client {client.client_id!r} is not registered for the {grant_type} grant"
        return failed(400, "unauthorized_client", message)
    if grant_type == "authorization_code":
        return _code_grant(store, settings, params, client, issuer)
    if grant_type == "refresh_token":
        return _refresh_grant(store, settings, params, client, issuer)
    if client.auth_method == "none":
        message = f"client {client.client_id!r} is a public client: client_credentials needs a client secret"
        return failed(400, "unauthorized_client", message)
    scopes = tuple(params.get("scope", "").split())
    unknown = _unknown_scopes(settings, scopes)
    if unknown:
        return failed(400, "invalid_scope", f"unknown scope {unknown!r}")
    return _issued(store, settings, client, scopes, params.get("resource"), issuer, refresh=False)


def _code_grant(
    store: GrantStore, settings: AuthSettings, params: Mapping[str, str], client: RegisteredClient, issuer: str
) -> Outcome:
    code = store.take_code(params.get("code", ""))
    if code is None or code.expires_at < time.time():
        return failed(400, "invalid_grant", "the authorization code is unknown, expired or was already exchanged")
    if code.client_id != client.client_id:
        return failed(400, "invalid_grant", f"the authorization code was not issued to client {client.client_id!r}")
    if params.get("redirect_uri") != code.redirect_uri:
        return failed(400, "invalid_grant", "redirect_uri differs from the one of the authorization request")
    verifier = params.get("code_verifier", "")
    if not 43 <= len(verifier) <= 128:
        return failed(400, "invalid_grant", "code_verifier must be 43 to 128 characters (PKCE, RFC 7636)")
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    if not hmac.compare_digest(challenge, code.challenge):
        return failed(400, "invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)")
    resource = params.get("resource", code.resource)
    if code.resource is not None and resource != code.resource:
        return failed(400, "invalid_target", "resource differs from the one of the authorization request (RFC 8707)")
    refresh = "refresh_token" in client.grant_types
    return _issued(store, settings, client, code.scopes, resource, issuer, refresh=refresh)


def _refresh_grant(
    store: GrantStore, settings: AuthSettings, params: Mapping[str, str], client: RegisteredClient, issuer: str
) -> Outcome:
    found = store.spend_refresh(params.get("refresh_token", ""))
    if found is None or found.client_id != client.client_id:
        return failed(400, "invalid_grant", "the refresh token is unknown or was issued to another client")
    if found.revoked:
        return failed(400, "invalid_grant", f"{found.label} was revoked")
    if found.spent:
        return failed(400, "invalid_grant", f"{found.label} was already used: refresh tokens rotate")
    asked = tuple(params.get("scope", "").split()) or found.scopes
    if not set(asked) <= set(found.scopes):
        return failed(400, "invalid_scope", "a refresh may not widen the scope: authorize again for more")
    resource = params.get("resource", found.resource)
    if found.resource is not None and resource != found.resource:
        return failed(400, "invalid_target", "resource differs from the one the refresh token was issued for")
    return _issued(store, settings, client, asked, resource, issuer, refresh=True)


def _unknown_scopes(settings: AuthSettings, scopes: tuple[str, ...]) -> str | None:
    if settings.scopes is None:
        return None
    unknown = [scope for scope in scopes if scope not in settings.scopes]
    return " ".join(unknown) or None


def _issued(
    store: GrantStore,
    settings: AuthSettings,
    client: RegisteredClient,
    scopes: tuple[str, ...],
    resource: str | None,
    issuer: str,
    *,
    refresh: bool,
) -> Outcome:
    token, grant, refresh_token = store.issue(
        client.client_id, scopes, resource, settings.token_ttl_s, refresh and settings.refresh_tokens, issuer
    )
    body: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "expires_in": round(settings.token_ttl_s)}
    if scopes:
        body["scope"] = " ".join(scopes)
    issued: tuple[str, ...] = (grant.label,)
    if refresh_token is not None:
        body["refresh_token"] = refresh_token
        issued = (grant.label, f"refresh {grant.label.rpartition(' ')[2]}")
    headers = [(b"cache-control", b"no-store")]
    return Outcome(200, body, headers, client_id=client.client_id, issued=issued)
