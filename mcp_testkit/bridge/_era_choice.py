"""Which era one server is spoken in: fixed by its configuration, or in auto mode settled by the first probe and
kept until it fails. The one place the bridge chooses between the eras and opens the session of the one chosen."""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.bridge._errors import MCPConnectionError
from mcp_testkit.bridge._get_stream import hear_on_get_streams
from mcp_testkit.bridge._handshake import McpSession
from mcp_testkit.bridge._rpc import MODERN_CODES, EraRefused, RpcError
from mcp_testkit.bridge._stateless import StatelessSession, hear_tool_changes
from mcp_testkit.bridge._stdio import StdioSession

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    import httpx2

    from mcp_testkit.bridge._config import ServerConfig
    from mcp_testkit.bridge._get_stream import OpenedSessions
    from mcp_testkit.bridge._input import AskInput
    from mcp_testkit.bridge._rpc import RpcSession

__all__ = ["EraChoice"]

logger = logging.getLogger("mcp_testkit.bridge")


class EraChoice:
    """The era a server is spoken in: ``settled`` is 'handshake' or 'stateless', or None until a probe settles it."""

    def __init__(self, configured: str) -> None:
        self.auto = configured == "auto"
        self.settled: str | None = None if self.auto else configured
        self.ask_input: AskInput | None = None
        """Answers the tools' input requests on every session opened (the pool's `input_handler`), if given."""

    async def connect(
        self,
        config: ServerConfig,
        client: httpx2.AsyncClient,
        credentials: Mapping[str, str],
        opened: list[RpcSession],
    ) -> RpcSession:
        """Start a command server; or probe and speak the stateless era, or open a handshake session, as the
        era and the server decide. Each session opened is appended to ``opened`` (for the caller to end
        on failure).

        In auto mode a probe answered as no modern server answers it falls back to the handshake (the
        spec's rule), and a handshake refused with a modern error (a server of the stateless era only)
        goes back to the stateless era.
        """
        if config.command is not None:
            command = StdioSession(config.command, config.args, config.env, config.read_timeout_s)
            command.ask_input = self.ask_input
            opened.append(command)
            await command.initialize()
            self.settled = HANDSHAKE
            return command
        assert config.url is not None
        if self.settled != HANDSHAKE:
            stateless = StatelessSession(client, config.url, credentials)
            stateless.ask_input = self.ask_input
            opened.append(stateless)
            try:
                await stateless.discover()
            except EraRefused as exc:
                if not self.auto or self.settled == STATELESS:
                    raise MCPConnectionError(
                        config.name, f"the server does not speak the stateless era: it {exc.reason}"
                    ) from None
                logger.info("server %r: %s; falling back to the handshake era", config.name, exc.reason)
            else:
                self.settled = STATELESS
                return stateless
        session = McpSession(client, config.url, credentials)
        session.ask_input = self.ask_input
        opened.append(session)
        try:
            await session.initialize()
        except RpcError as exc:
            if not (self.auto and self.settled == HANDSHAKE and exc.code in MODERN_CODES):
                raise
            self.settled = None  # the handshake was refused by a modern server: probe it again
            return await self.connect(config, client, credentials, opened)
        self.settled = HANDSHAKE
        return session

    def change_listener(self, config: ServerConfig, sessions: OpenedSessions) -> Callable[..., Awaitable[None]] | None:
        """What holds a stream of the server's tool changes open for a cache to hear (see `bridge/_listen.py`) over
        HTTP: in the stateless era a `subscriptions/listen` stream; in the handshake era the GET stream of each
        session `sessions` opens; None over stdio (whose notices ride the one pipe) or before a probe settled the
        era."""
        if config.url is None or self.settled is None:
            return None
        if self.settled == STATELESS:
            return hear_tool_changes
        return functools.partial(hear_on_get_streams, sessions)

    def listing_refused(self, server: str, refusal: EraRefused) -> None:
        """A stateless listing was refused as a handshake-era server refuses one (a half-upgraded deployment):
        in auto mode the handshake from now on, else ``MCPConnectionError``."""
        if not self.auto:
            raise MCPConnectionError(server, f"tool listing failed: the server {refusal.reason}") from None
        logger.warning("server %r: %s; falling back to the handshake era", server, refusal.reason)
        self.settled = HANDSHAKE

    def call_refused(self) -> None:
        """A stateless call was refused as a handshake-era server refuses one: in auto mode the handshake from the
        next connect on."""
        if self.auto:
            self.settled = HANDSHAKE
