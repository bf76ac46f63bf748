"""`AuthServer`: the fake OAuth 2.1 authorization server a `TestMcpServer(auth=...)` serves beside its MCP endpoint,
and what a test scripts and reads of it (clients, tokens by label, consent)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_testkit.auth._endpoints import AuthEndpoints, ProtectedPath
from mcp_testkit.auth._grants import AuthSettings
from mcp_testkit.auth._store import TOKEN_AUTH_METHODS, Grant, GrantStore, RegisteredClient

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Receive, Scope, Send
    from mcp_testkit.faults import FaultPlan
    from mcp_testkit.journal import Journal

__all__ = ["AuthServer", "IssuedToken"]


@dataclass(frozen=True)
class IssuedToken:
    """A token a test minted with `AuthServer.issue_token`: its value (for the test to send) and its label."""

    access_token: str = field(repr=False)
    label: str


class AuthServer:
    """A fake OAuth 2.1 authorization server: RFC 8414 metadata (and OpenID discovery), an authorization endpoint
    that consents without a browser, a token endpoint (authorization code with PKCE S256, refresh with rotation,
    client credentials; client_secret_basic, client_secret_post and none), RFC 7591 registration, client ID
    metadata documents the test scripts, RFC 7009 revocation, and RFC 9207 `iss` on every authorization response.

    Give it to `TestMcpServer(auth=...)`, which serves it at `issuer_path` beside the MCP endpoint and makes that
    endpoint a protected resource. `scopes` are the scopes it grants (None: whatever is asked). Access tokens are
    opaque strings, or with `tokens="jwt"` JWTs (HS256, with `iss`, `aud`, `sub`, `scope`, `exp`); tests know them
    by label ('token 1', 'refresh 1'). It keeps its clients and tokens across the server's `reset()`.
    """

    __test__ = False

    def __init__(
        self,
        *,
        scopes: Sequence[str] | None = None,
        issuer_path: str = "/oauth",
        token_ttl_s: float = 3600.0,
        code_ttl_s: float = 60.0,
        refresh_tokens: bool = True,
        registration: bool = True,
        consent: bool = True,
        tokens: str = "opaque",
        resource_metadata: str = "both",
        challenge_metadata: bool = True,
        challenge_scope: bool = True,
        metadata_scopes: bool = True,
    ) -> None:
        if issuer_path and (not issuer_path.startswith("/") or issuer_path.endswith("/")):
            raise ValueError(f"issuer_path must be '' or start with '/' and not end with one, not {issuer_path!r}")
        for label, seconds in (("token_ttl_s", token_ttl_s), ("code_ttl_s", code_ttl_s)):
            if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
                raise ValueError(f"{label} must be a positive number of seconds, not {seconds!r}")
        if tokens not in ("opaque", "jwt"):
            raise ValueError(f"tokens must be 'opaque' or 'jwt', not {tokens!r}")
        if isinstance(scopes, str):
            raise ValueError("scopes is a list of scope names, such as ['tickets:read']")
        if resource_metadata not in ("both", "path", "root"):
            raise ValueError(
                "resource_metadata must be 'both', 'path' (RFC 9728's path-inserted URL) or 'root', "
                f"not {resource_metadata!r}"
            )
        self._settings = AuthSettings(
            None if scopes is None else tuple(scopes),
            issuer_path,
            float(token_ttl_s),
            float(code_ttl_s),
            refresh_tokens,
            registration,
            consent,
            resource_metadata=resource_metadata,
            challenge_metadata=bool(challenge_metadata),
            challenge_scope=bool(challenge_scope),
            metadata_scopes=bool(metadata_scopes),
        )
        self._store = GrantStore()
        if tokens == "jwt":
            self._store.jwt_key = secrets.token_bytes(32)
        self._endpoints = AuthEndpoints(self._store, self._settings)

    def __repr__(self) -> str:
        return f"<AuthServer issuer_path={self._settings.issuer_path!r} tokens={len(self._store.access)}>"

    @property
    def consent(self) -> bool:
        """Whether the authorization endpoint consents (else it redirects with `error=access_denied`)."""
        return self._settings.consent

    @consent.setter
    def consent(self, value: bool) -> None:
        self._settings.consent = bool(value)

    # -- clients -----------------------------------------------------------------------------------

    def register_client(
        self,
        client_id: str | None = None,
        *,
        auth_method: str = "client_secret_basic",
        redirect_uris: Sequence[str] = (),
        grant_types: Sequence[str] = ("authorization_code", "refresh_token", "client_credentials"),
        client_secret: str | None = None,
    ) -> RegisteredClient:
        """Pre-register a client (its secret is made up unless given; a client with auth_method 'none' has none)."""
        if auth_method not in TOKEN_AUTH_METHODS:
            raise ValueError(f"auth_method must be one of {', '.join(TOKEN_AUTH_METHODS)}, not {auth_method!r}")
        secret = None if auth_method == "none" else (client_secret or secrets.token_urlsafe(24))
        client = RegisteredClient(
            client_id or self._store.new_client_id(), secret, tuple(redirect_uris), auth_method, tuple(grant_types)
        )
        return self._store.add_client(client)

    def client_metadata_document(self, url: str, document: Mapping[str, Any]) -> None:
        """Script what the client ID metadata document at `url` says (it is not fetched): a client whose id is
        `url` is then a public client with the document's `redirect_uris`, and the metadata advertises
        `client_id_metadata_document_supported`."""
        if "redirect_uris" not in document:
            raise ValueError(f"the client ID metadata document of {url!r} needs redirect_uris")
        self._settings.metadata_documents[url] = dict(document)

    @property
    def clients(self) -> dict[str, RegisteredClient]:
        """The clients it knows, by id (secrets hidden from their repr)."""
        return dict(self._store.clients)

    # -- tokens ------------------------------------------------------------------------------------

    def issue_token(
        self, *, resource: str | None, scopes: Sequence[str] = (), client_id: str | None = None
    ) -> IssuedToken:
        """Mint an access token for `resource` (the MCP endpoint's URL, RFC 8707) without any exchange."""
        token, grant, _ = self._store.issue(client_id, tuple(scopes), resource, self._settings.token_ttl_s, False)
        return IssuedToken(token, grant.label)

    @property
    def grants(self) -> list[Grant]:
        """Every access token issued, as grants (label, client, scopes, resource, expiry), oldest first."""
        return list(self._store.access.values())

    def grant(self, label: str) -> Grant:
        """The access token `label` ('token 1'); KeyError naming the labels there are."""
        for grant in self.grants:
            if grant.label == label:
                return grant
        raise KeyError(f"no token {label!r}; issued: {', '.join(g.label for g in self.grants) or '(none)'}")

    def revoke(self, label: str) -> None:
        """Revoke the token `label` ('token 1', or 'refresh 1', which takes its access token along)."""
        if not self._store.revoke(label):
            raise KeyError(f"no token {label!r} was issued")

    def expire(self, label: str) -> None:
        """Make the access token `label` expired from now on (the MCP endpoint answers it 401 invalid_token)."""
        if not self._store.expire(label):
            raise KeyError(f"no token {label!r} was issued")

    def grant_for(self, token: str) -> Grant | None:
        """The grant of an access token value as a client sent it, None when it never issued it."""
        return self._store.grant_of(token)

    # -- serving (what TestMcpServer calls) --------------------------------------------------------

    def issuer(self, base: str) -> str:
        """Its issuer identifier when reached at `base` (`http://host:port`)."""
        return self._endpoints.issuer(base)

    def challenge(self, base: str, resource_path: str, status: int, scopes: tuple[str, ...]) -> dict[str, str]:
        """The `WWW-Authenticate` fields with which the resource at `resource_path` refuses a token (`status`)."""
        return self._endpoints.challenge(base, resource_path, status, scopes)

    def serves(self, path: str, protected: ProtectedPath) -> bool:
        """Whether `path` is one of its endpoints or the protected resource's metadata."""
        return self._endpoints.endpoint_of(path, protected) is not None

    async def serve(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        journal: Journal,
        protected: ProtectedPath,
        plan: FaultPlan | None = None,
    ) -> None:
        """Answer a request to one of its paths, logging it in `journal.auth`; a rule of `plan` naming the endpoint
        (`oauth/token`, ...) may put a fault of the authorization server on it."""
        await self._endpoints.serve(scope, receive, send, journal, protected, plan)
