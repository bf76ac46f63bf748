"""What the auth tests share: the SDK's OAuth provider pointed at a fake, with tokens kept in memory."""

from __future__ import annotations

from typing import Any

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import OAuthClientMetadata

from mcp_testkit.auth import Browserless
from mcp_testkit.bridge._oauth import MemoryTokens

LIMIT_S = 20.0
REDIRECT_URI = "http://127.0.0.1:1/callback"
"""Never listened on: the browserless consent reads the redirect's Location instead of following it."""


MemoryStorage = MemoryTokens
"""The SDK's `TokenStorage`, in memory (the reference bridge's own): what a test gives the provider so that nothing
touches disk."""


def sdk_provider(url: str, browser: Browserless, **metadata: Any) -> tuple[OAuthClientProvider, MemoryStorage]:
    """The SDK's OAuth provider for the MCP endpoint `url`, consenting through `browser`, and its storage."""
    storage = MemoryStorage()
    client_metadata = OAuthClientMetadata(
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        client_name="mcp-testkit auth test",
        grant_types=["authorization_code", "refresh_token"],
        **metadata,
    )
    provider = OAuthClientProvider(
        url,
        client_metadata,
        storage,
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
    )
    return provider, storage


def secrets_of(storage: MemoryStorage) -> dict[str, str]:
    """Every secret the SDK holds after a flow: its tokens and its client secret, by name."""
    found: dict[str, str] = {}
    if storage.tokens is not None:
        found["access_token"] = storage.tokens.access_token
        if storage.tokens.refresh_token:
            found["refresh_token"] = storage.tokens.refresh_token
    if storage.client_info is not None and storage.client_info.client_secret:
        found["client_secret"] = storage.client_info.client_secret
    return found


ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def mcp_post(http: Any, url: str, message: dict[str, Any], token: str | None = None) -> Any:
    """POST one JSON-RPC message to the MCP endpoint, with a bearer token if given (an awaitable response)."""
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return http.post(url, json=message, headers=headers)


def challenge_of(response: Any) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer ...` challenge."""
    import re

    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer ")
    return dict(re.findall(r'(\w+)="([^"]*)"', value))
