"""One server's session as the pool holds it: connect with retries, serialized calls and the resend rules."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit.bridge._catalogue import read_catalogue
from mcp_testkit.bridge._config import read_credentials
from mcp_testkit.bridge._errors import (
    MCPAuthError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPToolError,
)
from mcp_testkit.bridge._render import render_result
from mcp_testkit.bridge._session import (
    AuthRefused,
    ConnectionLost,
    HttpFailure,
    McpSession,
    RpcError,
    SessionGone,
    WireError,
)

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx2
    import mcp_types

    from mcp_testkit.bridge._catalogue import BridgeTool
    from mcp_testkit.bridge._config import ServerConfig

__all__ = ["ServerLink", "backoff_delays"]

logger = logging.getLogger("mcp_testkit.bridge")

# A DELETE at shutdown is a courtesy to the server; it must never hold the pool open for long.
CLOSE_TIMEOUT_S = 5.0


def backoff_delays(config: ServerConfig) -> list[float]:
    """The waits between connection attempts: ``connect_backoff_s`` doubling, one per retry."""
    return [config.connect_backoff_s * 2**retry for retry in range(config.connect_retries)]


def _transient(error: Exception) -> bool:
    """Whether a failed handshake is worth another attempt: the server may be starting or overloaded."""
    if isinstance(error, HttpFailure):
        return error.status in (408, 429) or error.status >= 500
    return isinstance(error, (ConnectionLost, SessionGone, TimeoutError))


class ServerLink:
    """The pool's hold on one server: its live session, the lock that serializes calls, the rules."""

    def __init__(
        self, config: ServerConfig, client: httpx2.AsyncClient, environ: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        self._client = client
        self._environ = environ
        self._session: McpSession | None = None
        # A session whose credentials were refused: ended and replaced before the next call is sent.
        self._refused: McpSession | None = None
        self._lock = anyio.Lock()

    @property
    def session_id(self) -> str | None:
        """The id of the live session, if any."""
        return self._session.session_id if self._session is not None else None

    async def start(self) -> list[mcp_types.Tool]:
        """Open the session (retrying the handshake) and read the whole tool listing (never retried)."""
        session = await self._open()
        return await read_catalogue(session, self.config)

    async def relist(self) -> list[mcp_types.Tool]:
        """End any session, then open a new one and read the whole listing, between calls (under the lock).

        What a paused call resumes on: the tools the server offers now, not at start-up.
        """
        async with self._lock:
            await self.aclose()
            return await self.start()

    async def call(self, tool: BridgeTool, arguments: Mapping[str, Any]) -> str:
        """Send one call under the server's lock and return the text a model reads."""
        async with self._lock:
            return await self._call(tool, arguments)

    async def aclose(self) -> None:
        """End the live session and any refused one with DELETE, bounded and shielded from cancellation."""
        sessions = [s for s in (self._refused, self._session) if s is not None]
        self._session = self._refused = None
        for session in sessions:
            await _end(session)

    async def _open(self) -> McpSession:
        name = self.config.name
        credentials = read_credentials(self.config, self._environ)
        if self._refused is not None:
            stale, self._refused = self._refused, None
            await _end(stale, credentials)
        delays = backoff_delays(self.config)
        attempts = self.config.connect_retries + 1
        for attempt in range(1, attempts + 1):
            session = McpSession(self._client, self.config.url, credentials)
            try:
                with anyio.fail_after(self.config.connect_timeout_s):
                    await session.initialize()
            except AuthRefused as exc:
                await _end(session)
                raise MCPAuthError(name, f"refused the credentials (HTTP {exc.status})", status=exc.status) from None
            except (WireError, RpcError, TimeoutError) as exc:
                await _end(session)
                reason = _reason(exc, self.config.connect_timeout_s)
                if not _transient(exc):
                    raise MCPConnectionError(name, f"handshake failed: the server {reason}") from None
                if attempt == attempts:
                    plural = "" if attempts == 1 else "s"
                    raise MCPConnectionError(
                        name, f"could not connect after {attempts} attempt{plural}: the server {reason}"
                    ) from None
                delay = delays[attempt - 1]
                logger.warning(
                    "server %r: connect attempt %d failed (%s); retrying in %ss", name, attempt, reason, delay
                )
                await anyio.sleep(delay)
            except BaseException:
                await _end(session)
                raise
            else:
                self._session = session
                logger.debug("server %r: session open", name)
                return session
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call(self, tool: BridgeTool, arguments: Mapping[str, Any]) -> str:
        name = self.config.name
        budget = self.config.retry if tool.resendable else 0
        resent_after_404 = False
        attempts = 0
        while True:
            session = self._session
            if session is None:
                logger.info("server %r: reconnecting before calling %r", name, tool.bare_name)
                session = await self._open()
            attempts += 1
            try:
                with anyio.fail_after(self.config.timeout_s):
                    result = await session.call_tool(tool.bare_name, arguments)
            except AuthRefused as exc:
                self._session, self._refused = None, session
                raise MCPAuthError(name, f"refused the credentials (HTTP {exc.status})", status=exc.status) from None
            except SessionGone as exc:
                self._session = None
                if exc.status == 404 and not resent_after_404:
                    resent_after_404 = True
                    logger.info("server %r: session lost (404), resending %r", name, tool.bare_name)
                    continue
                reason, sent = exc.reason, exc.status != 404
            except (WireError, TimeoutError) as exc:
                reason = _reason(exc, self.config.timeout_s)
                sent = exc.sent if isinstance(exc, WireError) else True
            except RpcError as exc:
                raise MCPToolError(
                    name,
                    f"tool {tool.bare_name!r} failed: JSON-RPC error {exc.code}: {exc.message}",
                    code=exc.code,
                ) from None
            else:
                text = render_result(result)
                if result.is_error:
                    raise MCPToolError(name, f"tool {tool.bare_name!r} returned an error: {text or '(no text)'}")
                return text
            if budget > 0:
                budget -= 1
                logger.info("server %r: %r %s; sending it again", name, tool.bare_name, reason)
                continue
            if sent and not tool.resendable:
                raise MCPCallOutcomeUnknown(name, tool.name, f"was sent but the server {reason}")
            plural = "" if attempts == 1 else "s"
            raise MCPConnectionError(
                name, f"call to {tool.name!r} failed after {attempts} attempt{plural}: the server {reason}"
            )


def _reason(error: Exception, timeout_s: float) -> str:
    if isinstance(error, TimeoutError):
        return f"did not answer within {timeout_s}s"
    if isinstance(error, RpcError):
        return f"answered JSON-RPC error {error.code}"
    assert isinstance(error, WireError)
    return error.reason


async def _end(session: McpSession, credentials: Mapping[str, str] | None = None) -> None:
    with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
        await session.close(credentials)
