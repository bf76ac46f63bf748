"""mkdocs hook: the sequence diagrams of the docs, drawn at build time from real journals.

A page asks for one with an HTML comment on a line of its own, `<!-- diagram: NAME -->`; on GitHub the
comment shows nothing, in the built site it becomes the inline SVG of `journal_svg` (mcp_testkit.journal.diagram.svg):
a TestMcpServer of this repository is started in-process on loopback, real clients run the exchange that
NAME scripts below, and the journal they leave is drawn. A diagram can therefore never drift from the code,
and the site needs no script and no network to show it. An unknown NAME, or an exchange that no longer goes
as scripted (each asserts what it shows), fails the build, naming the page.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # draw with this repository's code, whichever copy of the package is installed
    sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402

from mcp_testkit import TestMcpServer, faults  # noqa: E402
from mcp_testkit.bridge import ServerConfig, ToolPool  # noqa: E402
from mcp_testkit.journal import Journal  # noqa: E402
from mcp_testkit.journal.diagram import svg  # noqa: E402

LIMIT_S = 30.0
_MARKER = re.compile(r"^<!-- diagram: (?P<name>[a-z0-9-]+) -->$", re.MULTILINE)


async def _call_with_a_fault() -> Journal:
    """docs/journal.md: the SDK client (handshake era) calls a tool; the server answers the scripted error result."""
    server = TestMcpServer(name="tickets")
    server.tool("create", returns="opened")
    async with server, Client(server.url, mode="legacy") as client:
        server.inject(faults.ErrorResult("store unavailable"), tool="create")
        assert (await client.call_tool("create", {"title": "printer on fire"})).is_error
    return server.journal


async def _lost_session() -> Journal:
    """docs/faults.md: the reference bridge's session is lost mid-run; it opens a new one and calls again."""
    server = TestMcpServer(name="tickets", eras=("handshake",))
    server.tool("search", read_only=True, returns="found")
    async with server, ToolPool([ServerConfig(name="t", url=server.url)]) as pool:
        server.fail_next_call(faults.LoseSession(), tool="search")
        assert await pool.call("t.search") == "found"
    assert len({record.session_id for record in server.journal if record.session_id}) == 2
    return server.journal


async def _modern_client_old_server() -> Journal:
    """docs/server.md: a 2026-07-28 client in auto mode meets a server of the handshake era only: the probe is
    refused, and the client falls back to `initialize` and a session."""
    server = TestMcpServer(name="legacy", eras=("handshake",))
    server.tool("search", returns="found")
    async with server, Client(server.url, mode="auto") as client:
        assert client.protocol_version != "2026-07-28"
        await client.call_tool("search", {})
    assert [record.rpc_method for record in server.journal][:2] == ["server/discover", "initialize"]
    return server.journal


async def _old_client_modern_server() -> Journal:
    """docs/server.md: a client of the handshake era only meets a server of 2026-07-28 only: its `initialize` is
    refused, naming the versions the server speaks, and it has nothing else to try."""
    server = TestMcpServer(name="modern", eras=("stateless",))
    server.tool("search", returns="found")
    async with server:
        try:
            async with Client(server.url, mode="legacy") as client:
                await client.call_tool("search", {})
        except Exception:  # the SDK reports the refusal as its own error, or as a group of them
            pass
        else:
            raise AssertionError("a handshake-only client was served by a 2026-07-28-only server")
    assert [record.status for record in server.journal][:1] == [400]
    return server.journal


async def _modern_client_modern_server() -> Journal:
    """docs/server.md: a 2026-07-28 client in auto mode meets a server of both eras: the probe answers, and every
    request after it carries its version itself; no `initialize`, no session."""
    server = TestMcpServer(name="modern")
    server.tool("search", returns="found")
    async with server, Client(server.url, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await client.call_tool("search", {})
    assert server.journal.requests("initialize") == []
    return server.journal


EXCHANGES: dict[str, Callable[[], Awaitable[Journal]]] = {
    "call-with-a-fault": _call_with_a_fault,
    "lost-session": _lost_session,
    "era-modern-client-old-server": _modern_client_old_server,
    "era-old-client-modern-server": _old_client_modern_server,
    "era-modern-client-modern-server": _modern_client_modern_server,
}
"""Every diagram a page may ask for, by name: the exchange that makes its journal."""

_drawn: dict[str, str] = {}
"""Diagrams drawn once per process: `mkdocs serve` rebuilds without running the exchanges again."""


def journal_of(name: str) -> Journal:
    """The journal the exchange `name` leaves, run now against a real server on loopback."""

    async def run() -> Journal:
        with anyio.fail_after(LIMIT_S):
            return await EXCHANGES[name]()

    return anyio.run(run)


def journal_svg(name: str) -> str:
    """The diagram `name` as inline SVG in a figure, drawn from a fresh journal (cached per process)."""
    if name not in _drawn:
        drawing = svg(list(journal_of(name)), prefix=f"{name}-", compact=True)
        _drawn[name] = f'<figure class="mcp-diagram" data-diagram="{name}">{drawing}</figure>'
    return _drawn[name]


def on_page_content(html: str, *, page: Any, config: Any, files: Any) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in EXCHANGES:
            known = ", ".join(sorted(EXCHANGES))
            raise PluginError(f"{page.file.src_path}: no diagram named {name!r} (mkdocs_diagrams.py draws {known})")
        try:
            return journal_svg(name)
        except Exception as failure:
            raise PluginError(f"{page.file.src_path}: drawing the diagram {name!r} failed: {failure!r}") from failure

    return _MARKER.sub(replace, html)
