"""The objects fixtures hand out: `McpServerFactory` (more servers in one test) and `McpEnv` (a server's URL
and token in environment variables)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit._plugin.clients import http_client
from mcp_testkit._plugin.pool import stop_all
from mcp_testkit._plugin.served import add_secret, check, serve, used_by

if TYPE_CHECKING:
    import httpx2
    import pytest

    from mcp_testkit.server import TestMcpServer

__all__ = ["McpEnv", "McpServerFactory"]


class McpServerFactory:
    """Makes servers for one test; each starts listening (unless --mcp-transport=asgi) and stops after it."""

    def __init__(self, item: pytest.Item, via: str) -> None:
        self._item = item
        self._transport = via
        self.servers: list[TestMcpServer] = []
        """The servers made so far, oldest first."""

    def __call__(
        self, name: str = "test", *, required_headers: Mapping[str, str] | None = None, **settings: Any
    ) -> TestMcpServer:
        """A new `TestMcpServer(name, **settings)` requiring `required_headers`, started unless asgi."""
        from mcp_testkit.server import TestMcpServer

        server = TestMcpServer(name, **settings)
        headers = dict(required_headers or {})
        for header, value in headers.items():
            server.require_header(header, value)
        self.servers.append(server)
        if self._transport == "socket":
            server.start()
        serve(self._item, server, f"mcp journal: {name}", settings.get("path", "/mcp"), headers)
        return server

    def http_client(self, server: TestMcpServer) -> httpx2.AsyncClient:
        """An unopened `httpx2.AsyncClient` whose base URL is `server`; in-process with asgi. Use `async with`."""
        return http_client(server, self._transport, {})

    def close(self) -> None:
        """Stop every server made (at once), then raise what their handlers raised, if not yet reported."""
        stop_all(self.servers)
        used = used_by(self._item)
        assert used is not None
        check(self._item, [s for s in used.served if s.server in self.servers and not s.checked])


class McpEnv:
    """Sets environment variables for a bridge configured from the environment; restored after the test."""

    def __init__(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        self._request = request
        self._monkeypatch = monkeypatch

    def __call__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        server: TestMcpServer | None = None,
        value: str | None = None,
        header: str = "Authorization",
        scheme: str = "Bearer",
    ) -> dict[str, str]:
        """Write `server`'s URL into `url` and a token into `token`; the server then requires the token.

        `server` defaults to `mcp_server` (started now if the transport is asgi). The token is `value`
        or a fresh random one; the server requires `header: <scheme> <token>` (just the token when
        `scheme` is empty). Returns the variables written.
        """
        import secrets

        if server is None:
            server = self._request.getfixturevalue("mcp_server")
        assert server is not None
        written: dict[str, str] = {}
        if url is not None:
            if not server.started:
                server.start()
            written[url] = server.url
        if token is not None:
            secret = value if value is not None else f"mcp-testkit-{secrets.token_hex(12)}"
            written[token] = secret
            server.require_header(header, f"{scheme} {secret}" if scheme else secret)
            add_secret(self._request.node, header, secret)
        for name, text in written.items():
            self._monkeypatch.setenv(name, text)
        return written
