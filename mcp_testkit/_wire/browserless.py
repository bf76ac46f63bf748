"""`Browserless`: the user's browser, played for an OAuth client under test: its redirect handler fetches the
authorization URL without following the redirect and keeps the code, state and `iss` the Location carries; its
callback handler hands them back, as an app's local callback server would."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["AuthorizationRefused", "Browserless"]


class AuthorizationRefused(Exception):
    """The authorization endpoint did not redirect with a code; the message says what it answered instead."""


class Browserless:
    """A redirect handler and a callback handler for `mcp.client.auth.OAuthClientProvider` (or any client that takes
    an async `redirect_handler(url)` and `callback_handler()`), consenting through the fake's authorization endpoint.

    `visited` lists the authorization URLs it was sent to, so a test can read the scope and resource a client asked.
    `http` is the `httpx2.AsyncClient` it fetches with (one of its own per fetch by default); or `transport`, the
    `httpx2` transport of the client it opens for each fetch and closes after it: one over
    `httpx2.ASGITransport(app=server.asgi_app)` consents in-process.
    """

    def __init__(self, http: Any = None, *, transport: Any = None) -> None:
        if http is not None and transport is not None:
            raise ValueError("Browserless takes http= (a client of yours) or transport= (for its own), not both")
        self.http = http
        self.transport = transport
        self.visited: list[str] = []
        self._answer: dict[str, str] | None = None

    async def redirect_handler(self, authorization_url: str) -> None:
        """GET the authorization URL (not following the redirect) and keep what the Location carries."""
        import httpx2

        self.visited.append(authorization_url)
        if self.http is not None:
            response = await self.http.get(authorization_url, follow_redirects=False)
        else:
            async with httpx2.AsyncClient(transport=self.transport) as http:
                response = await http.get(authorization_url, follow_redirects=False)
        location = response.headers.get("location")
        if response.status_code not in (302, 303) or location is None:
            raise AuthorizationRefused(
                f"the authorization endpoint answered {response.status_code} without a redirect: {response.text[:200]}"
            )
        found = {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}
        if "error" in found:
            raise AuthorizationRefused(
                f"the authorization endpoint refused: {found['error']} ({found.get('error_description', '')})"
            )
        self._answer = found

    async def callback_handler(self) -> Any:
        """The code, state and `iss` of the last redirect, as an `AuthorizationCodeResult` of the mcp SDK."""
        from mcp.shared.auth import AuthorizationCodeResult

        answer, self._answer = self._answer, None
        if answer is None:
            raise AuthorizationRefused("callback_handler was called before redirect_handler got a redirect")
        return AuthorizationCodeResult(code=answer["code"], state=answer.get("state"), iss=answer.get("iss"))
