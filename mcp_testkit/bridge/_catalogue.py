"""The paged tool listing, read whole or not at all, and how each tool is classified."""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio

from mcp_testkit._wire.eras import HEADER_MISMATCH, MISSING_CAPABILITY
from mcp_testkit.bridge._errors import MCPAuthError, MCPConnectionError
from mcp_testkit.bridge._rpc import AuthRefused, EraRefused, RpcError, WireError
from mcp_testkit.bridge._tool import BridgeTool, Kind, Source

if TYPE_CHECKING:

    import mcp_types

    from mcp_testkit.bridge._config import ServerConfig
    from mcp_testkit.bridge._rpc import RpcSession

__all__ = ["BridgeTool", "read_catalogue", "select_tools"]


def _classify(tool: mcp_types.Tool, config: ServerConfig) -> tuple[Kind, bool, Source]:
    """Read or write, idempotent or not, and what decided it; an override of 'write' forbids resends."""
    hints = tool.annotations
    override = config.overrides.get(tool.name)
    if override is not None:
        return override, False, "override"
    idempotent = bool(hints is not None and hints.idempotent_hint)
    if hints is not None and hints.read_only_hint is not None:
        return ("read" if hints.read_only_hint else "write"), idempotent, "hint"
    return "write", idempotent, "default"


def select_tools(config: ServerConfig, listed: list[mcp_types.Tool]) -> list[BridgeTool]:
    """The listed tools that ``allow`` and ``deny`` let through, named ``server.tool`` and classified."""
    chosen: list[BridgeTool] = []
    for tool in listed:
        if config.allow is not None and tool.name not in config.allow:
            continue
        if config.deny is not None and tool.name in config.deny:
            continue
        kind, idempotent, source = _classify(tool, config)
        chosen.append(
            BridgeTool(
                name=f"{config.name}.{tool.name}",
                server=config.name,
                bare_name=tool.name,
                description=tool.description or "",
                input_schema=tool.input_schema,
                kind=kind,
                idempotent=idempotent,
                classified_by=source,
            )
        )
    return chosen


def _short(cursor: str) -> str:
    return repr(cursor if len(cursor) <= 40 else cursor[:40] + "…")


async def read_catalogue(session: RpcSession, config: ServerConfig) -> list[mcp_types.Tool]:
    """Follow ``nextCursor`` to the end within ``connect_timeout_s``, or fail whole naming the pages read.

    An empty ``nextCursor`` ends nothing in the stateless era (2026-07-28 makes "" a cursor like any
    other); in the handshake era it fails the listing, as no page can follow it. ``EraRefused`` passes
    through, for the caller to fall back to the handshake.
    """
    tools: list[mcp_types.Tool] = []
    seen: set[str] = set()
    sent: set[str] = set()
    cursor: str | None = None
    pages = 0

    def failed(why: str) -> MCPConnectionError:
        plural = "" if pages == 1 else "s"
        return MCPConnectionError(config.name, f"tool listing {why} after {pages} page{plural}; no tools were loaded")

    try:
        with anyio.fail_after(config.connect_timeout_s):
            while True:
                try:
                    page = await session.list_tools(cursor)
                except AuthRefused as exc:
                    raise MCPAuthError(
                        config.name, exc.reason, status=exc.status
                    ) from None
                except EraRefused:
                    raise
                except WireError as exc:
                    raise failed(f"failed on page {pages + 1}: the server {exc.reason}") from None
                except RpcError as exc:
                    if exc.code in (HEADER_MISMATCH, MISSING_CAPABILITY):
                        raise failed(f"got {exc.code} for page {pages + 1} ({exc.message})") from None
                    raise failed(f"got JSON-RPC error {exc.code} for page {pages + 1}") from None
                pages += 1
                for tool in page.tools:
                    if tool.name in seen:
                        raise failed(f"listed tool {tool.name!r} twice")
                    seen.add(tool.name)
                    tools.append(tool)
                if session.list_changed:
                    raise failed("was interrupted by notifications/tools/list_changed")
                cursor = page.next_cursor
                if cursor is None:
                    return tools
                if not cursor and not session.empty_cursor_is_a_cursor:
                    raise failed("got an empty nextCursor")
                if cursor in sent:
                    raise failed(f"repeated cursor {_short(cursor)}")
                if pages >= config.max_tool_pages:
                    raise failed(f"needs more than max_tool_pages={config.max_tool_pages} pages")
                sent.add(cursor)
    except TimeoutError:
        raise failed(f"did not finish within connect_timeout_s={config.connect_timeout_s}s") from None
