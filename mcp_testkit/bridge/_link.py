"""One server's session as the pool holds it: connect with retries, serialized calls and the resend rules."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit._wire.eras import HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION
from mcp_testkit._wire.param_headers import invalid_annotation
from mcp_testkit.bridge._catalogue import read_catalogue
from mcp_testkit.bridge._config import read_credentials
from mcp_testkit.bridge._era_choice import EraChoice
from mcp_testkit.bridge._errors import (
    MCPAuthError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPInputRequired,
    MCPResultTooLarge,
    MCPToolError,
)
from mcp_testkit.bridge._get_stream import OpenedSessions
from mcp_testkit.bridge._input import NoInputHandler, bind
from mcp_testkit.bridge._render import render_result
from mcp_testkit.bridge._rpc import (
    MODERN_CODES,
    AnswerTooLarge,
    AuthRefused,
    ConnectionLost,
    EraRefused,
    HttpFailure,
    RpcError,
    SessionGone,
    WireError,
)
from mcp_testkit.bridge._stdio import CommandFailed

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    import httpx2
    import mcp_types

    from mcp_testkit.bridge._config import ServerConfig
    from mcp_testkit.bridge._input import InputHandler
    from mcp_testkit.bridge._rpc import RpcSession
    from mcp_testkit.bridge._tool import BridgeTool

__all__ = ["ServerLink", "backoff_delays"]

logger = logging.getLogger("mcp_testkit.bridge")

# A DELETE at shutdown is a courtesy to the server; it must never hold the pool open for long.
CLOSE_TIMEOUT_S = 5.0
_HEADER_NAMES = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
_PARAM_HEADER = re.compile(r"Mcp-Param-[!#$%&'*+\-.^_`|~0-9A-Za-z]+", re.IGNORECASE)


def backoff_delays(config: ServerConfig) -> list[float]:
    """The waits between connection attempts: ``connect_backoff_s`` doubling, one per retry."""
    return [config.connect_backoff_s * 2**retry for retry in range(config.connect_retries)]


def _transient(error: Exception) -> bool:
    """Whether a failed handshake is worth another attempt: the server may be starting or overloaded."""
    if isinstance(error, HttpFailure):
        return error.status in (408, 429) or error.status >= 500
    if isinstance(error, CommandFailed):
        return False  # a command that cannot be started will not start on a second try
    return isinstance(error, (ConnectionLost, SessionGone, TimeoutError))


def _modern_refusal(server: str, error: RpcError, what: str, *, relisted: bool = False) -> MCPConnectionError:
    """-32020 (a bug of this bridge's headers, or a server whose listing and checks disagree), -32021 or an
    unresolved -32022, as a connection error naming it."""
    if error.code == HEADER_MISMATCH:
        named = [name for name in _HEADER_NAMES if name.lower() in error.message.lower()]
        named += list(dict.fromkeys(_PARAM_HEADER.findall(error.message)))
        headers = " and ".join(named) if named else "the mirrored headers (" + ", ".join(_HEADER_NAMES) + ")"
        again = ", also after listing the tools again and sending it once more" if relisted else ""
        why = (
            "the server checks them against another inputSchema than it lists"
            if any(_PARAM_HEADER.fullmatch(name) for name in named)
            else "this is a bug of the bridge, not of the call"
        )
        return MCPConnectionError(
            server,
            f"{what} was refused with HeaderMismatch (-32020): {headers} did not match the body as the server "
            f"read it{again}; {why}",
        )
    if error.code == MISSING_CAPABILITY:
        needed = error.data.get("requiredCapabilities") if isinstance(error.data, dict) else None
        names = ", ".join(sorted(needed)) if isinstance(needed, dict) and needed else "unnamed ones"
        return MCPConnectionError(server, f"{what} needs client capabilities the bridge does not have: {names}")
    return MCPConnectionError(
        server, f"{what} was refused with -32022 after renegotiating the protocol version once: {error.message}"
    )


class ServerLink:
    """The pool's hold on one server: its live session, the lock that serializes calls, the rules."""

    def __init__(
        self,
        config: ServerConfig,
        client: httpx2.AsyncClient,
        environ: Mapping[str, str] | None = None,
        input_handler: InputHandler | None = None,
    ) -> None:
        self.config = config
        self.client = client
        """The HTTP client of this server's requests: the pool's, or for OAuth one of its own (`_oauth.py`)."""
        self._environ = environ
        self._session: RpcSession | None = None
        # A session whose credentials were refused: ended and replaced before the next call is sent.
        self._refused: RpcSession | None = None
        self._lock = anyio.Lock()
        self.sessions = OpenedSessions()
        self._choice = EraChoice(config.era)
        self._choice.ask_input = bind(input_handler, config.name)
        """The era this server is spoken in: settled by the first probe in auto mode, kept until it fails."""
        self._schemas: dict[str, Mapping[str, Any]] = {}
        self.listing_ttl_s: float | None = None
        """How long the last listing may be cached, as its server said (`ttlMs`, 2026-07-28); None: it did not."""
        """Each tool's inputSchema as this link last listed it: what its Mcp-Param-* headers are derived from
        (a listing read after the pool's, or none when the pool took its listing from the cache)."""

    @property
    def session_id(self) -> str | None:
        """The id of the live session, if any (never in the stateless era)."""
        return self._session.session_id if self._session is not None else None

    @property
    def era(self) -> str | None:
        """'handshake' or 'stateless' once connected; None before the first probe settled it."""
        return self._choice.settled

    def change_listener(self) -> Callable[..., Awaitable[None]] | None:
        """What listens for this server's tool changes in its era, if the bridge opens a stream for them there."""
        return self._choice.change_listener(self.config, self.sessions)

    async def start(self) -> list[mcp_types.Tool]:
        """Connect (retrying), then read the whole tool listing (never retried).

        In auto mode a stateless listing refused as a handshake-era server refuses one (a half-upgraded
        deployment) falls back to the handshake and reads the listing there, once.
        """
        session = await self._open()
        try:
            listed = await read_catalogue(session, self.config)
        except EraRefused as exc:
            self._choice.listing_refused(self.config.name, exc)
            self._session = None
            session = await self._open()
            listed = await read_catalogue(session, self.config)
        return self._offered(session, listed)

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

    def _offered(self, session: RpcSession, listed: list[mcp_types.Tool]) -> list[mcp_types.Tool]:
        """The listing as the session's era offers it, its schemas kept for the headers of later calls."""
        listed = session.offered(self.config.name, listed)
        self._schemas = {tool.name: tool.input_schema for tool in listed}
        self.listing_ttl_s = session.listing_ttl_s
        return listed

    async def _listed_again(self, session: RpcSession, tool: BridgeTool) -> None:
        """Read the listing again after a call was refused with -32020: its tool's schema may have changed.

        ``MCPToolError`` when the server no longer lists the tool; a failed listing raises as at start-up.
        """
        name = self.config.name
        try:
            listed = await read_catalogue(session, self.config)
        except EraRefused as exc:
            self._session = None
            raise MCPConnectionError(name, f"listing the tools again failed: the server {exc.reason}") from None
        except MCPAuthError:
            self._session, self._refused = None, session
            raise
        self._offered(session, listed)
        found = [listed_tool for listed_tool in listed if listed_tool.name == tool.bare_name]
        problem = invalid_annotation(found[0].input_schema) if found else None
        if not found or problem is not None:
            why = f": its inputSchema now breaks the x-mcp-header rules of 2026-07-28 ({problem})" if problem else ""
            raise MCPToolError(
                name,
                f"{tool.name} is no longer offered by its MCP server{why} (listed again after HeaderMismatch "
                "(-32020)); nothing ran and it was not sent again",
            )

    async def _open(self) -> RpcSession:
        name = self.config.name
        credentials = read_credentials(self.config, self._environ)
        if self._refused is not None:
            stale, self._refused = self._refused, None
            await _end(stale, credentials=credentials)
        delays_s = backoff_delays(self.config)
        attempts = self.config.connect_retries + 1
        for attempt in range(1, attempts + 1):
            opened: list[RpcSession] = []
            try:
                with anyio.fail_after(self.config.connect_timeout_s):
                    session = await self._choice.connect(self.config, self.client, credentials, opened)
            except AuthRefused as exc:
                await _end(*opened)
                raise MCPAuthError(name, exc.reason, status=exc.status) from None
            except RpcError as exc:
                await _end(*opened)
                if exc.code not in MODERN_CODES:
                    raise MCPConnectionError(name, f"handshake failed: the server {_reason(exc, 0)}") from None
                raise _modern_refusal(name, exc, "connecting") from None
            except (WireError, TimeoutError) as exc:
                await _end(*opened)
                reason = _reason(exc, self.config.connect_timeout_s)
                if not _transient(exc):
                    raise MCPConnectionError(name, f"handshake failed: the server {reason}") from None
                if attempt == attempts:
                    plural = "" if attempts == 1 else "s"
                    raise MCPConnectionError(
                        name, f"could not connect after {attempts} attempt{plural}: the server {reason}"
                    ) from None
                delay_s = delays_s[attempt - 1]
                logger.warning(
                    "server %r: connect attempt %d failed (%s); retrying in %ss", name, attempt, reason, delay_s
                )
                await anyio.sleep(delay_s)
            except BaseException:
                await _end(*opened)
                raise
            else:
                session.max_answer_bytes = self.config.max_result_bytes
                self._session = session
                self.sessions.opened(session)
                logger.debug("server %r: connected in the %s era", name, session.era)
                return session
        raise AssertionError("unreachable")  # pragma: no cover

    async def _call(self, tool: BridgeTool, arguments: Mapping[str, Any]) -> str:
        name = self.config.name
        budget = self.config.retry if tool.resendable else 0
        resent_after_404 = renegotiated = restarted = relisted = False
        attempts = 0
        while True:
            session = self._session
            if session is not None and not session.usable:
                self._session = None  # a command server that exited since the last call
                await _end(session)
                session = None
            if session is None:
                logger.info("server %r: reconnecting before calling %r", name, tool.bare_name)
                session = await self._open()
            schema = self._schemas.get(tool.bare_name, tool.input_schema)
            headers = session.call_headers(name, tool, schema, arguments)
            attempts += 1
            try:
                with anyio.fail_after(self.config.timeout_s):
                    result = await session.call_tool(tool.bare_name, arguments, headers)
            except AuthRefused as exc:
                self._session, self._refused = None, session
                raise MCPAuthError(name, exc.reason, status=exc.status) from None
            except SessionGone as exc:
                self._session = None
                if exc.status == 404 and not resent_after_404:
                    resent_after_404 = True
                    logger.info("server %r: session lost (404), resending %r", name, tool.bare_name)
                    continue
                reason, sent = exc.reason, exc.status != 404
            except EraRefused as exc:
                # The stateless era no longer holds: speak the handshake from the next connect on.
                self._session = None
                self._choice.call_refused()
                if not exc.sent and not renegotiated:
                    renegotiated = True  # refused before it ran (-32022): sent once more in the other era
                    logger.info("server %r: %s; reconnecting, then resending %r", name, exc.reason, tool.bare_name)
                    continue
                reason, sent = exc.reason, exc.sent
            except AnswerTooLarge as exc:
                # It ran and answered: not a lost answer to resend, and the session is intact.
                raise MCPResultTooLarge(name, tool.bare_name, exc.size, exc.limit) from None
            except (WireError, TimeoutError) as exc:
                reason = _reason(exc, self.config.timeout_s)
                sent = exc.sent if isinstance(exc, WireError) else True
                if not session.usable:
                    self._session = None  # a command server that was stopped: the next attempt starts it again
                    await _end(session)
                    if not sent and not restarted:
                        restarted = True  # it had exited before the call could be sent: start it, then send
                        logger.info("server %r: %s; starting it again before calling %r", name, reason, tool.bare_name)
                        continue
            except NoInputHandler as exc:
                raise MCPInputRequired(name, tool.bare_name, exc.methods) from None
            except RpcError as exc:
                if not relisted and _relists(session, exc):
                    # Refused before it ran, so even a write may go again: once, with headers from a new listing.
                    relisted = True
                    logger.info(
                        "server %r: %r was refused with HeaderMismatch (-32020); listing the tools again, then "
                        "sending it once more",
                        name,
                        tool.bare_name,
                    )
                    await self._listed_again(session, tool)
                    continue
                raise _call_refusal(name, tool, session, exc, relisted=relisted) from None
            else:
                text = render_result(result)
                if result.is_error:
                    raise MCPToolError(name, f"tool {tool.bare_name!r} returned an error: {text or '(no text)'}")
                return text
            if budget > 0:
                budget -= 1
                logger.info("server %r: %r %s; sending it again", name, tool.bare_name, reason)
                continue
            raise _gave_up(name, tool, reason, sent=sent, attempts=attempts)


def _gave_up(name: str, tool: BridgeTool, reason: str, *, sent: bool, attempts: int) -> Exception:
    """The error of a call that may not (or can no more) be sent again: its outcome unknown once a write was sent."""
    if sent and not tool.resendable:
        return MCPCallOutcomeUnknown(name, tool.name, f"was sent but the server {reason}")
    plural = "" if attempts == 1 else "s"
    message = f"call to {tool.name!r} failed after {attempts} attempt{plural}: the server {reason}"
    return MCPConnectionError(name, message)


def _relists(session: RpcSession, error: RpcError) -> bool:
    """Whether a call's JSON-RPC error is a HeaderMismatch that a new listing may mend (the session says whether
    its era relists), rather than a need for input requests the client did not declare."""
    needs_input = session.ask_input is None and _needs_input(error)
    return error.code == HEADER_MISMATCH and session.relists_on_header_mismatch and not needs_input


def _call_refusal(name: str, tool: BridgeTool, session: RpcSession, error: RpcError, *, relisted: bool) -> Exception:
    """The error a call's JSON-RPC error becomes: input the client cannot give, an era's refusal, or the tool's."""
    if session.ask_input is None and _needs_input(error):
        needs = sorted(error.data["requiredCapabilities"])
        return MCPInputRequired(name, tool.bare_name, needs, code=error.code, detail=error.message)
    if error.code in (HEADER_MISMATCH, UNSUPPORTED_VERSION):
        return _modern_refusal(name, error, f"call to {tool.name!r}", relisted=relisted)
    message = f"tool {tool.bare_name!r} failed: JSON-RPC error {error.code}: {error.message}"
    return MCPToolError(name, message, code=error.code)


def _needs_input(error: RpcError) -> bool:
    """Whether a call's JSON-RPC error says the tool needs input requests the client did not declare."""
    data = error.data
    needed = data.get("requiredCapabilities") if isinstance(data, dict) else None
    return isinstance(needed, dict) and bool(needed) and set(needed) <= {"elicitation", "sampling", "roots"}


def _reason(error: Exception, timeout_s: float) -> str:
    if isinstance(error, TimeoutError):
        return f"did not answer within {timeout_s}s"
    if isinstance(error, RpcError):
        return f"answered JSON-RPC error {error.code}"
    assert isinstance(error, WireError)
    return error.reason


async def _end(*sessions: RpcSession, credentials: Mapping[str, str] | None = None) -> None:
    for session in sessions:
        with anyio.move_on_after(CLOSE_TIMEOUT_S, shield=True):
            await session.close(credentials)
