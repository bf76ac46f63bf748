"""How the reference bridge picks the era: it probes with server/discover, speaks 2026-07-28 when offered, and falls
back to the handshake by the spec's rule (a refusal that is not a modern JSON-RPC error)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcp_testkit import Record, TestMcpServer, faults
from mcp_testkit.bridge import MCPConnectionError, ToolPool

from .conftest import LIMIT_S, config_for, script_tools

pytestmark = pytest.mark.anyio


def _opening(server: TestMcpServer) -> list[tuple[str | None, int | None]]:
    """The journal up to the first tools/list: (method, status) of each request."""
    opening = []
    for record in server.journal:
        if record.rpc_method == "tools/list":
            break
        opening.append((record.rpc_method, record.status))
    return opening


def _eras(records: list[Record]) -> set[str | None]:
    return {record.era for record in records}


@pytest.mark.parametrize(
    ("eras", "era", "opening"),
    [
        (("handshake", "stateless"), "stateless", [("server/discover", 200)]),
        (("stateless",), "stateless", [("server/discover", 200)]),
        (
            ("handshake",),
            "handshake",
            [("server/discover", 200), ("initialize", 200), ("notifications/initialized", 202)],
        ),
    ],
    ids=["both-eras", "stateless-only", "handshake-only"],
)
async def test_auto_mode_speaks_the_newest_era_the_server_offers(
    eras: tuple[str, ...], era: str, opening: list[Any]
) -> None:
    """era='auto' (the default) lands on 2026-07-28 where offered and falls back to initialize otherwise."""
    server = script_tools(TestMcpServer(eras=eras))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            assert await pool.call("t.search") == "found"
            assert pool.era("t") == era
    assert _opening(server) == opening
    assert _eras(server.calls("search")) == {era}


@pytest.mark.parametrize(
    "fault",
    [
        faults.DiscoverError(),
        faults.DiscoverError(404, None),
        faults.DiscoverError(405, None),
        faults.DiscoverError(200, -32601, "Method not found"),
        faults.UnsupportedVersion(["2025-11-25"]),
        # An older server that answers every method it does not know with an empty result.
        faults.HttpStatus(200, {"jsonrpc": "2.0", "id": 1, "result": {}}),
    ],
    ids=repr,
)
async def test_a_probe_refused_as_a_legacy_server_refuses_it_falls_back(fault: faults.Fault) -> None:
    """A probe answered without a modern JSON-RPC error (or -32022 offering handshake versions only, or a result
    that is no DiscoverResult): initialize."""
    server = script_tools(TestMcpServer())
    server.inject(fault, method="server/discover")
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            assert pool.era("t") == "handshake"
            assert await pool.call("t.create") == "created"
    assert [method for method, _ in _opening(server)] == ["server/discover", "initialize", "notifications/initialized"]
    assert server.executions("create") == 1


async def test_a_32022_at_the_probe_renegotiates_once() -> None:
    """-32022 offering 2026-07-28 at the probe: the bridge probes once more and stays in the stateless era."""
    server = script_tools(TestMcpServer())
    server.inject(faults.UnsupportedVersion(), method="server/discover")
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            assert pool.era("t") == "stateless"
    assert _opening(server) == [("server/discover", 400), ("server/discover", 200)]


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (faults.DiscoverError(400, -32020, "Header mismatch: Mcp-Method header"), r"Mcp-Method did not match"),
        (faults.HeaderMismatch("MCP-Protocol-Version"), r"MCP-Protocol-Version did not match"),
        (faults.MissingCapability(["sampling"]), r"needs client capabilities the bridge does not have: sampling"),
        (faults.UnsupportedVersion(["2027-01-01"]), r"-32022 after renegotiating the protocol version once"),
    ],
    ids=["32020-by-hand", "32020", "32021", "32022-disjoint"],
)
async def test_a_modern_refusal_of_the_probe_is_not_a_fallback(fault: faults.Fault, message: str) -> None:
    """A modern error at the probe means a modern server: no fallback, a connection error that names it."""
    server = script_tools(TestMcpServer())
    server.inject(fault, method="server/discover", times=None)
    with anyio.fail_after(LIMIT_S), pytest.raises(MCPConnectionError, match=message):
        async with server, ToolPool([config_for(server, connect_retries=0)]):
            pass
    assert server.journal.requests("initialize") == []


async def test_a_stateless_config_refuses_a_handshake_only_server() -> None:
    """era='stateless' never falls back: a server of the handshake era only fails the connect, naming why."""
    server = script_tools(TestMcpServer(eras=("handshake",)))
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPConnectionError, match=r"does not speak the stateless era"):
                async with ToolPool([config_for(server, era="stateless", connect_retries=0)]):
                    pass
    assert [r.rpc_method for r in server.journal] == ["server/discover"]


async def test_a_handshake_config_against_a_stateless_only_server_names_its_versions() -> None:
    """era='handshake' against eras=('stateless',): initialize is refused with -32022, a connection error."""
    server = script_tools(TestMcpServer(eras=("stateless",)))
    with anyio.fail_after(LIMIT_S):
        async with server:
            with pytest.raises(MCPConnectionError, match=r"speaks only 2026-07-28"):
                async with ToolPool([config_for(server, era="handshake", connect_retries=0)]):
                    pass
    assert [r.rpc_method for r in server.journal] == ["initialize"]


async def test_a_half_upgraded_deployment_is_listed_through_the_handshake() -> None:
    """EraDowngrade: the probe is answered, the stateless listing refused; the bridge falls back and lists there."""
    server = script_tools(TestMcpServer(page_size=2))
    server.inject(faults.EraDowngrade())
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            assert [tool.bare_name for tool in pool.tools()] == ["search", "create", "upsert"]
            assert pool.era("t") == "handshake"
            assert await pool.call("t.create") == "created"
    methods = [(r.rpc_method, r.era, r.status) for r in server.journal][:4]
    assert methods == [
        ("server/discover", "stateless", 200),
        ("tools/list", "stateless", 400),
        ("initialize", "handshake", 200),
        ("notifications/initialized", "handshake", 202),
    ]
    assert server.executions("create") == 1


async def test_the_stateless_era_sends_meta_and_mirrored_headers_on_every_request() -> None:
    """Every request of the stateless era carries its version, client info and capabilities, and the headers."""
    server = script_tools(TestMcpServer(page_size=2))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            await pool.call("t.upsert", {"key": "k"})
    for record in server.journal:
        assert record.era == "stateless"
        assert record.headers["mcp-protocol-version"] == "2026-07-28"
        assert record.headers["mcp-method"] == record.rpc_method
        assert record.client_info == {"name": "mcp-testkit-bridge", "version": "0.1.0"}
        assert record.client_capabilities == {}
    assert server.calls("upsert")[0].headers["mcp-name"] == "upsert"


async def test_a_bare_400_to_a_stateless_only_server_does_not_strand_the_bridge() -> None:
    """A bare 400 sends the bridge to the handshake, which a stateless-only server refuses with -32022: it probes
    again and stays stateless; the read is resent there."""
    server = script_tools(TestMcpServer(eras=("stateless",)))
    with anyio.fail_after(LIMIT_S):
        async with server, ToolPool([config_for(server)]) as pool:
            server.inject(faults.HttpStatus(400), method="tools/call", tool="search")
            assert await pool.call("t.search") == "found"
            assert pool.era("t") == "stateless"
    calls = [(r.rpc_method, r.status) for r in server.journal if r.rpc_method != "subscriptions/listen"]  # cache's
    assert calls[-4:] == [("tools/call", 400), ("initialize", 400), ("server/discover", 200), ("tools/call", 200)]
