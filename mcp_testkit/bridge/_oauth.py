"""`OAuth`: a server's credentials got with OAuth 2.1 as the MCP spec's authorization section describes, through the
official SDK's OAuth client (`mcp.client.auth`) rather than a client of our own; and where its tokens are kept.

The SDK's provider does the protocol: protected-resource metadata found through `WWW-Authenticate` (RFC 9728),
authorization-server metadata (RFC 8414), PKCE S256, the resource indicator (RFC 8707), the `iss` check (RFC 9207),
dynamic registration or a client ID metadata document, refresh before a known expiry, a new authorization on a 401,
and a step-up asking for the union of scopes on `403 insufficient_scope`. The pool sends every request of the
server through it, each server with a provider and a client of its own (so a token never reaches another server),
and turns a failed flow into `MCPAuthError` naming the server.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import httpx2

from mcp_testkit._wire.tls import tls_context
from mcp_testkit.bridge._errors import MCPAuthError
from mcp_testkit.bridge._rpc import AuthRefused

if TYPE_CHECKING:
    from mcp.client.auth import TokenStorage
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthToken

__all__ = ["OAuth", "client_of", "oauth_auth"]

Grant = Literal["authorization_code", "client_credentials"]
DEFAULT_REDIRECT_URI = "http://127.0.0.1:33418/callback"


@dataclass(frozen=True)
class OAuth:
    """Authorize to the server with OAuth 2.1 (`ServerConfig(auth=OAuth(...))`, docs/bridge.md).

    With the authorization-code grant (the default) the user consents in a browser: `redirect_handler(url)` sends
    them to the authorization URL (an application opens a browser there), and `callback_handler()` returns the
    code, state and `iss` the authorization server redirected to `redirect_uri` with (what the application's local
    callback listener received). Both are what `mcp.client.auth.OAuthClientProvider` takes; `Browserless`
    (`mcp_testkit.auth`) plays them against the fake. With `grant="client_credentials"` no user is involved.

    The client is registered dynamically unless `client_id` names a pre-registered one (its secret read from the
    environment variable `client_secret_env`, never given as a value), or `client_metadata_url` names a client ID
    metadata document the authorization server may fetch. Tokens are kept in memory, or in `token_file` (JSON,
    created with mode 0600, a section per server URL) so that a later process starts with them.
    """

    redirect_handler: Callable[[str], Awaitable[None]] | None = None
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]] | None = None
    redirect_uri: str = DEFAULT_REDIRECT_URI
    scope: str | None = None
    """The scopes asked first (space-separated); None: those the server's challenge or metadata names."""
    grant: Grant = "authorization_code"
    client_id: str | None = None
    client_secret_env: str | None = None
    client_metadata_url: str | None = None
    issuer: str | None = None
    """For `client_credentials`: the authorization server the client's credentials belong to (its issuer URL)."""
    client_name: str = "mcp-testkit bridge"
    token_file: str | os.PathLike[str] | None = None

    def __post_init__(self) -> None:
        if self.grant not in ("authorization_code", "client_credentials"):
            raise ValueError(f"OAuth grant must be 'authorization_code' or 'client_credentials', not {self.grant!r}")
        if self.grant == "client_credentials" and (self.client_id is None or self.client_secret_env is None):
            raise ValueError(
                "OAuth(grant='client_credentials') needs client_id= and client_secret_env= (the name of the "
                "environment variable holding the secret)"
            )
        if self.client_secret_env is not None and self.client_id is None:
            raise ValueError("OAuth client_secret_env= belongs to a pre-registered client: give client_id= too")
        if self.client_metadata_url is not None and self.client_id is not None:
            raise ValueError("OAuth takes client_id= (pre-registered) or client_metadata_url= (CIMD), not both")

    def __repr__(self) -> str:  # the handlers' reprs say nothing useful; the secret is only ever an env name
        fields = [f"grant={self.grant!r}", f"redirect_uri={self.redirect_uri!r}"]
        fields += [
            f"{name}={getattr(self, name)!r}"
            for name in ("scope", "client_id", "client_secret_env", "client_metadata_url", "issuer", "token_file")
            if getattr(self, name) is not None
        ]
        return f"OAuth({', '.join(fields)})"


def client_of(
    auth: object,
    server: str,
    url: str | None,
    shared: httpx2.AsyncClient,
    transport: httpx2.AsyncBaseTransport | None,
    environ: Mapping[str, str] | None,
) -> httpx2.AsyncClient:
    """The HTTP client of server `server`'s requests (its `ServerConfig.auth` and `url`): the pool's `shared` one;
    for a server authorized with OAuth, a client of its own (on the pool's `transport`) whose every request goes
    through the server's OAuth flow, so that its tokens never reach another server. The pool closes it."""
    if not isinstance(auth, OAuth):
        return shared
    assert url is not None  # a command server takes no auth= (ServerConfig checks)
    return httpx2.AsyncClient(
        transport=transport,
        timeout=None,
        follow_redirects=False,
        verify=tls_context(),
        auth=oauth_auth(auth, server, url, environ),
    )


def oauth_auth(oauth: OAuth, server: str, url: str, environ: Mapping[str, str] | None = None) -> httpx2.Auth:
    """The `httpx2.Auth` that sends the requests of server `server` (MCP endpoint `url`) with OAuth tokens."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    environ = os.environ if environ is None else environ
    storage: TokenStorage = (
        MemoryTokens() if oauth.token_file is None else FileTokens(Path(oauth.token_file).expanduser(), url)
    )
    secret = None
    if oauth.client_secret_env is not None:
        secret = environ.get(oauth.client_secret_env, "")
        if not secret:
            raise MCPAuthError(server, f"environment variable {oauth.client_secret_env!r} is not set or is empty")
    grant_types = ["authorization_code", "refresh_token"] if oauth.grant == "authorization_code" else [oauth.grant]
    # A pre-registered client authenticates with its secret, or is public; a registered one takes the SDK's default.
    method = {}
    if oauth.client_id is not None:
        method["token_endpoint_auth_method"] = "client_secret_basic" if secret else "none"
    metadata = OAuthClientMetadata(
        redirect_uris=[oauth.redirect_uri] if oauth.grant == "authorization_code" else None,  # type: ignore[list-item]
        client_name=oauth.client_name,
        grant_types=grant_types,  # type: ignore[arg-type]
        scope=oauth.scope,
        **method,  # type: ignore[arg-type]
    )
    provider: httpx2.Auth
    if oauth.grant == "client_credentials":
        from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

        assert oauth.client_id is not None  # checked in OAuth.__post_init__
        assert secret is not None
        provider = ClientCredentialsOAuthProvider(
            url, storage, oauth.client_id, secret, scope=oauth.scope, issuer=oauth.issuer
        )
    else:
        if oauth.client_id is not None:
            registered = OAuthClientInformationFull(
                **metadata.model_dump(exclude_none=True), client_id=oauth.client_id, client_secret=secret
            )
            storage = Preregistered(storage, registered)
        provider = OAuthClientProvider(
            url,
            metadata,
            storage,
            redirect_handler=_failing_as_auth(oauth.redirect_handler, "redirect_handler"),
            callback_handler=_failing_as_auth(oauth.callback_handler, "callback_handler"),
            client_metadata_url=oauth.client_metadata_url,
        )
    return _NamedFailures(provider)


class _HandlerFailed(Exception):
    """A redirect or callback handler of the application raised: the authorization did not happen."""


def _failing_as_auth(handler: Callable[..., Awaitable[Any]] | None, name: str) -> Any:
    """`handler`, whose failure (the user did not consent, the browser could not be opened) is the flow's."""
    if handler is None:
        return None

    async def handled(*args: Any) -> Any:
        try:
            return await handler(*args)
        except Exception as exc:
            raise _HandlerFailed(f"its {name} raised {type(exc).__name__}: {exc}") from exc

    return handled


class _NamedFailures(httpx2.Auth):
    """The SDK's provider, whose failed flow (`OAuthFlowError`: discovery, registration, the token endpoint; or a
    handler of the application that raised) is raised as `AuthRefused`, which the pool turns into an
    `MCPAuthError` naming the server."""

    def __init__(self, provider: Any) -> None:
        self._provider = provider

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        from mcp.client.auth import OAuthFlowError

        flow = self._provider.async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                if request.method == "DELETE" and outgoing.method == "DELETE" and outgoing.url == request.url:
                    # Ending a session never sends the user to authorize again: the DELETE goes with the token there
                    # is (refreshed first where it is known to have expired), and a refusal is left so.
                    return
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except OAuthFlowError as exc:
            raise AuthRefused(None, f"could not be authorized with OAuth ({type(exc).__name__}: {exc})"[:400]) from None
        except _HandlerFailed as exc:
            raise AuthRefused(None, f"could not be authorized with OAuth: {exc}"[:400]) from None
        finally:
            await flow.aclose()


class MemoryTokens:
    """The SDK's `TokenStorage`, in this process's memory: the tokens and client of one server, for one pool."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class Preregistered:
    """A storage whose client is the pre-registered one (`OAuth(client_id=...)`) until the flow stores another."""

    def __init__(self, storage: TokenStorage, client: OAuthClientInformationFull) -> None:
        self._storage, self._client = storage, client

    async def get_tokens(self) -> OAuthToken | None:
        return await self._storage.get_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._storage.set_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return await self._storage.get_client_info() or self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._storage.set_client_info(client_info)


class FileTokens:
    """Tokens and client of one server kept in a JSON file the user names, a section per server URL, so that two
    servers sharing the file never read each other's tokens; written whole (to a temporary file, then renamed),
    mode 0600."""

    def __init__(self, path: Path, url: str) -> None:
        self.path, self.url = path, url

    def _read(self) -> dict[str, Any]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(text)
        except ValueError:
            raise ValueError(f"OAuth token_file {str(self.path)!r} is not JSON: delete it to authorize again") from None
        if not isinstance(data, dict):
            raise ValueError(f"OAuth token_file {str(self.path)!r} holds no JSON object: delete it to authorize again")
        return data

    def _section(self) -> dict[str, Any]:
        section = self._read().get(self.url)
        return section if isinstance(section, dict) else {}

    async def _write(self, key: str, value: dict[str, Any]) -> None:
        def write() -> None:
            data = self._read()
            data.setdefault(self.url, {})[key] = value
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(self.path.name + ".partial")
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(data, file, indent=2)
            os.replace(partial, self.path)

        await anyio.to_thread.run_sync(write)

    async def get_tokens(self) -> OAuthToken | None:
        from mcp.shared.auth import OAuthToken

        found = self._section().get("tokens")
        return None if found is None else OAuthToken.model_validate(found)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        await self._write("tokens", tokens.model_dump(mode="json", exclude_none=True))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        from mcp.shared.auth import OAuthClientInformationFull

        found = self._section().get("client_info")
        return None if found is None else OAuthClientInformationFull.model_validate(found)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        await self._write("client_info", client_info.model_dump(mode="json", exclude_none=True))
