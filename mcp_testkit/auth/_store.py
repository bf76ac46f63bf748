"""What the fake authorization server holds: its clients, its pending authorization codes, and the tokens it issued,
each token known to tests only by its label ('token 1', 'refresh 1'), never by its value."""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from mcp_testkit.auth._jwt import access_jwt

__all__ = ["TOKEN_AUTH_METHODS", "AuthorizationCode", "Grant", "GrantStore", "RefreshGrant", "RegisteredClient"]

TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
"""How a client may authenticate at the token endpoint."""


@dataclass(frozen=True)
class RegisteredClient:
    """A client the authorization server knows: registered by a test, by RFC 7591 registration, or a client ID
    metadata document."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    redirect_uris: tuple[str, ...] = ()
    auth_method: str = "client_secret_basic"
    """Its token endpoint auth method: client_secret_basic, client_secret_post or none (a public client)."""
    grant_types: tuple[str, ...] = ("authorization_code", "refresh_token")
    registered_by: str = "test"
    """'test' (`register_client`), 'registration' (RFC 7591) or 'metadata document' (a client ID metadata document)."""


@dataclass(frozen=True)
class AuthorizationCode:
    """A code the authorization endpoint handed out, waiting for its one exchange."""

    client_id: str
    redirect_uri: str
    challenge: str
    scopes: tuple[str, ...]
    resource: str | None
    expires_at: float


@dataclass(frozen=True)
class Grant:
    """An access token, as tests see it: its label, for whom, for what and until when; never its value."""

    label: str
    client_id: str | None
    scopes: tuple[str, ...]
    resource: str | None
    """The RFC 8707 resource (audience) it was issued for."""
    expires_at: float
    revoked: bool = False

    @property
    def expired(self) -> bool:
        return time.time() >= self.expires_at

    @property
    def usable(self) -> bool:
        return not self.revoked and not self.expired


@dataclass(frozen=True)
class RefreshGrant:
    """A refresh token: what it renews. Rotated: once used, it is spent."""

    label: str
    client_id: str
    scopes: tuple[str, ...]
    resource: str | None
    spent: bool = False
    revoked: bool = False


class GrantStore:
    """Clients, codes and tokens, behind one lock: the server's thread issues and checks, a test's thread reads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.clients: dict[str, RegisteredClient] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, Grant] = {}
        self.refresh: dict[str, RefreshGrant] = {}
        self.jwt_key: bytes | None = None
        """Set: access tokens are JWTs signed with it (`AuthServer(tokens="jwt")`)."""
        self._numbers = itertools.count(1)
        self._client_numbers = itertools.count(1)

    def new_client_id(self) -> str:
        return f"client-{next(self._client_numbers)}"

    def add_client(self, client: RegisteredClient) -> RegisteredClient:
        with self.lock:
            self.clients[client.client_id] = client
        return client

    def add_code(self, code: AuthorizationCode) -> str:
        value = secrets.token_urlsafe(24)
        with self.lock:
            self.codes[value] = code
        return value

    def take_code(self, value: str) -> AuthorizationCode | None:
        """The code's grant, once: a second exchange of one code finds nothing."""
        with self.lock:
            return self.codes.pop(value, None)

    def issue(
        self,
        client_id: str | None,
        scopes: Sequence[str],
        resource: str | None,
        ttl_s: float,
        refresh: bool,
        issuer: str | None = None,
    ) -> tuple[str, Grant, str | None]:
        """A new access token (and a refresh token if asked): (token, its grant, refresh token or None); a JWT
        naming `issuer` when the store has a `jwt_key`, else an opaque string."""
        number = next(self._numbers)
        now = time.time()
        grant = Grant(f"token {number}", client_id, tuple(scopes), resource, now + ttl_s)
        key = self.jwt_key
        if key is None:
            token = secrets.token_urlsafe(32)
        else:
            token = access_jwt(
                key,
                issuer=issuer,
                client_id=client_id,
                resource=resource,
                scopes=scopes,
                issued_at=now,
                expires_at=grant.expires_at,
            )
        refresh_token = secrets.token_urlsafe(32) if refresh and client_id is not None else None
        with self.lock:
            self.access[token] = grant
            if refresh_token is not None and client_id is not None:
                self.refresh[refresh_token] = RefreshGrant(f"refresh {number}", client_id, tuple(scopes), resource)
        return token, grant, refresh_token

    def grant_of(self, token: str) -> Grant | None:
        return self.access.get(token)

    def spend_refresh(self, value: str) -> RefreshGrant | None:
        """The refresh token's grant, marked spent (rotation); the grant as it was before, or None if unknown."""
        with self.lock:
            found = self.refresh.get(value)
            if found is not None and not found.spent and not found.revoked:
                self.refresh[value] = replace(found, spent=True)
            return found

    def revoke(self, label: str | None = None, *, value: str | None = None) -> bool:
        """Revoke a token by label or value (a refresh token takes the access tokens of its number with it)."""
        with self.lock:
            hit = False
            for token, grant in list(self.access.items()):
                if token == value or grant.label == label:
                    self.access[token] = replace(grant, revoked=True)
                    hit = True
            for token, refresh in list(self.refresh.items()):
                if token == value or refresh.label == label:
                    self.refresh[token] = replace(refresh, revoked=True)
                    number = refresh.label.rpartition(" ")[2]
                    for other, grant in list(self.access.items()):
                        if grant.label == f"token {number}":
                            self.access[other] = replace(grant, revoked=True)
                    hit = True
            return hit

    def expire(self, label: str) -> bool:
        """Make the access token `label` expired from now on."""
        with self.lock:
            for token, grant in list(self.access.items()):
                if grant.label == label:
                    self.access[token] = replace(grant, expires_at=time.time() - 1)
                    return True
            return False
