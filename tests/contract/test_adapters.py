"""Tests of `mcp_testkit.adapters`: `Outcome`, the reference adapters in the era asked for, the SDK client adapter's
two modes and `SdkErrorClassifier`, the classifier over a real 127.0.0.1 socket with the official SDK client in both
eras."""

from __future__ import annotations

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.adapters import (
    Outcome,
    PerCallReferenceAdapter,
    ReferenceBridgeAdapter,
    SdkClientAdapter,
    SdkErrorClassifier,
)
from mcp_testkit.adapters._sdk import SAME_FOR_EVERY_STATUS
from mcp_testkit.contract import run_contract


def test_outcome_errors_carry_their_rendered_text() -> None:
    """An error outcome carries the text the bridge rendered (str(error) unless given) and compares on it."""
    error = RuntimeError("disk full")
    assert Outcome.tool_error(error).text == "disk full"
    assert Outcome.tool_error(error, text="tool said: disk full").text == "tool said: disk full"
    assert Outcome.tool_error(error) == Outcome.tool_error(RuntimeError("disk full"))
    assert Outcome.tool_error(error) != Outcome.tool_error(RuntimeError("disk full (#2)"))
    assert str(Outcome.auth_error(error)) == "auth_error(RuntimeError: disk full)"


def test_per_call_adapter_holds_no_session_between_operations() -> None:
    """PerCallReferenceAdapter ends its session after connect and after each call: no session lives between them."""
    server = TestMcpServer(eras=("handshake",))  # sessions are what this counts
    server.tool("read", read_only=True, returns="r")

    async def use() -> list[int]:
        adapter = PerCallReferenceAdapter(transport=httpx2.ASGITransport(app=server.asgi_app))
        alive = []
        with anyio.fail_after(10):
            try:
                assert (await adapter.connect("http://127.0.0.1/mcp", {})).kind == "ok"
                alive.append(len(server.sessions.alive))
                assert await adapter.call("read", {}) == Outcome.ok("r")
                alive.append(len(server.sessions.alive))
            finally:
                await adapter.close()
        return alive

    assert anyio.run(use) == [0, 0]
    assert len(server.journal.requests("initialize")) == 2
    assert PerCallReferenceAdapter.sessions == "per_call"


CLASSIFIED = [
    (faults.ProtocolError(-32603, "disk full"), "tool_error"),
    (faults.HttpStatus(500), "outcome_unknown"),
    (faults.HttpStatus(401), "outcome_unknown"),  # the SDK raises the same error as for a 500
    (faults.HttpStatus(403), "outcome_unknown"),
    (faults.LoseSession(), "connection_error"),
    # The server's -32600 "Session not found" in a 400, as in a 404: it refused the request, nothing ran.
    (faults.Restart(unknown_session_status=400), "connection_error"),
    (faults.EndStream(), "outcome_unknown"),
]


def test_classifier_says_connection_error_at_connect() -> None:
    """A failure at connect that is not a refusal of the credentials is a connection error, never a tool error."""
    classifier = SdkErrorClassifier()
    assert classifier.outcome(MCPError(-32603, "x"), at="connect").kind == "connection_error"


STATELESS_CLASSIFIED = [
    (faults.HeaderMismatch(), "connection_error"),
    (faults.MissingCapability(), "connection_error"),
    (faults.ProtocolError(-32602, "bad argument"), "tool_error"),
    (faults.ProtocolError(-32603, "disk full"), "tool_error"),
    (faults.HttpStatus(400), "outcome_unknown"),
    (faults.HttpStatus(404), "connection_error"),
    (faults.EndStream(), "outcome_unknown"),
]
"""In the stateless era (the SDK client in auto mode), the era's refusals are connection errors and a JSON-RPC
error answering the call with HTTP 400 is the tool's error; a bare 400 may have run."""

BY_MODE = [("legacy", fault, kind) for fault, kind in CLASSIFIED] + [
    ("auto", fault, kind) for fault, kind in STATELESS_CLASSIFIED
]


@pytest.mark.parametrize(("mode", "fault", "kind"), BY_MODE, ids=[f"{m}-{f!r}" for m, f, _ in BY_MODE])
def test_classifier_sorts_sdk_errors_by_what_the_client_raised(mode: str, fault: faults.Fault, kind: str) -> None:
    """Over a real socket, the classifier sorts the SDK's errors from the error the caller receives alone (no hook on
    the wire): in legacy mode (the handshake era) and in auto mode (it lands on 2026-07-28, whose answers differ)."""
    server = TestMcpServer()
    server.tool("create", returns="created")
    classifier = SdkErrorClassifier()

    async def call() -> str:
        with anyio.fail_after(10):
            async with httpx2.AsyncClient() as http:
                transport = streamable_http_client(server.url, http_client=http)
                async with Client(transport, mode=mode, read_timeout_seconds=5) as client:
                    assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
                    server.inject(fault, method="tools/call", tool="create", times=None)
                    try:
                        await client.call_tool("create", {})
                    except MCPError as error:
                        return classifier.outcome(error, at="call").kind
        return "ok"

    with server:
        assert anyio.run(call) == kind
    assert {r.era for r in server.calls("create")} == {"stateless" if mode == "auto" else "handshake"}


@pytest.mark.parametrize(
    ("era", "opening"),
    [
        ("handshake", ["initialize", "notifications/initialized"]),
        ("stateless", ["server/discover", "tools/list"]),
        ("auto", ["server/discover", "tools/list"]),
    ],
)
def test_reference_adapter_speaks_the_era_it_is_given(era: str, opening: list[str]) -> None:
    """ReferenceBridgeAdapter(era=...) is the bridge's ServerConfig(era=...): against a server of both eras it
    opens with initialize, or with the probe and then the stateless era."""
    server = TestMcpServer()
    server.tool("read", read_only=True, returns="r")

    async def use() -> Outcome:
        adapter = ReferenceBridgeAdapter(transport=httpx2.ASGITransport(app=server.asgi_app), era=era)  # type: ignore[arg-type]
        with anyio.fail_after(10):
            try:
                assert (await adapter.connect("http://127.0.0.1/mcp", {})).kind == "ok"
                return await adapter.call("read", {})
            finally:
                await adapter.close()

    assert anyio.run(use) == Outcome.ok("r")
    assert [r.rpc_method for r in server.journal][:2] == opening
    assert server.calls("read")[0].era == ("handshake" if era == "handshake" else "stateless")
    assert ReferenceBridgeAdapter.eras == ("handshake", "stateless")


def test_sdk_adapter_has_two_modes_and_refuses_others() -> None:
    """SdkClientAdapter runs the SDK client in auto mode (its default) or legacy mode, named for the matrix;
    any other mode is refused naming the two."""
    assert (SdkClientAdapter().mode, SdkClientAdapter().name) == ("auto", "sdk-client (auto)")
    legacy = SdkClientAdapter.legacy(timeout_s=2.0)
    assert (legacy.mode, legacy.name, legacy.timeout_s) == ("legacy", "sdk-client (legacy)", 2.0)
    with pytest.raises(ValueError, match="SdkClientAdapter mode must be 'auto' or 'legacy', not '2026-07-28'"):
        SdkClientAdapter(mode="2026-07-28")  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_sdk_adapter_fails_p4_saying_401_and_500_look_the_same(era: str) -> None:
    """Over a real socket, in both eras, the SDK client fails P4: it raises the one -32603 error for a 401 as for a
    500, and the verdict says so (the adapter reports what the client tells its caller, nothing more)."""
    [result] = run_contract(SdkClientAdapter, properties=["P4"], max_examples=12, via="socket", eras=[era])
    assert result.status == "failed", result.counterexample
    said = result.counterexample or ""
    assert "surfaced as outcome_unknown, not auth_error" in said
    assert "its caller cannot tell a 401 or 403 from a 500" in said


def test_classifier_notes_the_http_stand_in() -> None:
    """The SDK's -32603 stand-in for an HTTP error status is a lost answer (at a call) with a note naming the
    ambiguity; a server's own -32603 is the tool's error; a single-error group and a cause are looked through."""
    classifier = SdkErrorClassifier()
    stand_in = classifier.outcome(MCPError(-32603, "Server returned an error response"), at="call")
    assert (stand_in.kind, stand_in.note) == ("outcome_unknown", SAME_FOR_EVERY_STATUS)
    assert SAME_FOR_EVERY_STATUS in str(stand_in)
    assert classifier.outcome(MCPError(-32603, "disk full"), at="call").kind == "tool_error"
    assert classifier.outcome(MCPError(-32000, "scripted failure"), at="call").kind == "tool_error"
    assert classifier.outcome(MCPError(-32000, "Connection closed"), at="call").kind == "outcome_unknown"
    assert classifier.outcome(MCPError(-32600, "Session terminated"), at="call").kind == "connection_error"
    wrapped = RuntimeError("the bridge failed")
    wrapped.__cause__ = MCPError(-32602, "bad argument")
    assert classifier.outcome(wrapped, at="call").kind == "tool_error"
    group = BaseExceptionGroup("one", [MCPError(-32600, "Session terminated")])  # noqa: F821
    assert classifier.outcome(group, at="call").kind == "connection_error"
    assert classifier.outcome(ValueError("no MCPError here"), at="call").kind == "outcome_unknown"
