"""The SDK client adapter is faithful to the `mcp` SDK `Client` it hosts: one call's lost answer ends the adapter
exactly when it ends the `Client` itself, over a real 127.0.0.1 socket, in both modes.

What the `Client` (mcp 2.x) does is pinned here from our server's journal and ledger, never from its wording: a
connection closed without an answer (`Drop()`, `Drop(after_execution=True)`) escapes its transport's task group and
ends the whole client, so a second call on the same `Client` fails and sends nothing (upstream:
modelcontextprotocol/python-sdk#3522); an answer lost inside a stream that ends cleanly (`EndStream`, `TruncateBody`)
fails that call alone, and the next one is answered. The contract's SDK verdicts rest on the adapter reporting just
that: `outcome_unknown` for the call in flight, then `connection_error` (nothing sent) or the next answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.adapters import Outcome, SdkClientAdapter

# Generous: a limit only stops a broken test from hanging, it never decides a pass.
LIMIT_S = 10.0
ERAS = {"auto": "stateless", "legacy": "handshake"}
"""The era each SDK mode lands on against a server of both eras: auto speaks 2026-07-28, legacy the handshake."""


@dataclass(frozen=True)
class Case:
    fault: faults.Fault
    ran: int
    """How many times the faulted call's handler ran."""
    survives: bool
    """Whether the `Client` answers a second call after the faulted one."""


CASES = [
    Case(faults.Drop(after_execution=True), ran=1, survives=False),
    Case(faults.Drop(), ran=0, survives=False),
    Case(faults.EndStream(), ran=1, survives=True),
    Case(faults.TruncateBody(), ran=1, survives=True),
]
PARAMS = [
    pytest.param(mode, response_mode, case, id=f"{mode}-{response_mode}-{case.fault!r}")
    for mode in ERAS
    for response_mode in ("json", "sse")
    for case in CASES
]


def _server(response_mode: str, fault: faults.Fault) -> TestMcpServer:
    """A server of both eras whose first call of "write" meets `fault`; "read" always answers."""
    server = TestMcpServer("sdk-faithful", response_mode=response_mode)
    server.tool("write", returns="written")
    server.tool("read", read_only=True, returns="read")
    server.inject(fault, method="tools/call", tool="write", times=1)
    return server


async def _fate(client: Client, tool: str) -> str:
    """'ok' when the call is answered, 'error' when it raises (whatever the SDK raises, whatever it says)."""
    try:
        await client.call_tool(tool, {})
    except Exception:
        return "error"
    return "ok"


async def _raw_client(server: TestMcpServer, mode: str) -> tuple[bool, str]:
    """Call "write" then "read" on one SDK `Client`: whether the client's own task group ended, and the second
    call's fate (made on the same `Client` after it ended, if it did)."""
    client = Client(streamable_http_client(server.url), mode=mode, read_timeout_seconds=LIMIT_S)
    with anyio.fail_after(LIMIT_S):
        try:
            async with client:
                await _fate(client, "write")
                return False, await _fate(client, "read")
        except Exception:  # the client's task group ended with the call in flight: it never returned
            return True, await _fate(client, "read")


async def _adapter(server: TestMcpServer, mode: str) -> tuple[Outcome, Outcome, Outcome]:
    """Connect the SDK client adapter, call "write" then "read" twice: the three outcomes."""
    adapter = SdkClientAdapter(mode=mode, timeout_s=LIMIT_S)  # type: ignore[arg-type]
    with anyio.fail_after(LIMIT_S):
        try:
            assert (await adapter.connect(server.url, {})).kind == "ok"
            return await adapter.call("write", {}), await adapter.call("read", {}), await adapter.call("read", {})
        finally:
            await adapter.close()


def _assert_journal(server: TestMcpServer, mode: str, case: Case, reads: int) -> None:
    """The faulted write was sent once and ran `case.ran` times; `reads` reads reached the server and ran."""
    assert len(server.calls("write")) == 1
    assert server.executions("write") == case.ran
    assert len(server.calls("read")) == reads
    assert server.executions("read") == reads
    assert {record.era for record in server.calls()} == {ERAS[mode]}


@pytest.mark.parametrize(("mode", "response_mode", "case"), PARAMS)
def test_raw_sdk_client_survives_a_lost_answer_only_when_its_stream_ended_cleanly(
    mode: str, response_mode: str, case: Case
) -> None:
    """The SDK Client itself ends on a dropped connection (the next call sends nothing) and survives a stream that
    ended without the answer (the next call runs)."""
    server = _server(response_mode, case.fault)
    with server:
        ended, second = anyio.run(_raw_client, server, mode)
    assert (ended, second) == ((False, "ok") if case.survives else (True, "error"))
    _assert_journal(server, mode, case, reads=1 if case.survives else 0)


@pytest.mark.parametrize(("mode", "response_mode", "case"), PARAMS)
def test_sdk_adapter_ends_exactly_when_the_sdk_client_does(mode: str, response_mode: str, case: Case) -> None:
    """Through SdkClientAdapter the faulted call may have run (outcome_unknown); later calls are answered when the
    raw Client survives and are connection errors that send nothing when it ends, as the raw Client on a twin server."""
    twin = _server(response_mode, case.fault)
    with twin:
        ended, _ = anyio.run(_raw_client, twin, mode)
    server = _server(response_mode, case.fault)
    with server:
        first, second, third = anyio.run(_adapter, server, mode)
    assert first.kind == "outcome_unknown"
    later = "ok" if case.survives else "connection_error"
    assert (second.kind, third.kind) == (later, later)
    assert ended is not case.survives
    assert (second.kind == "ok") is not ended
    _assert_journal(server, mode, case, reads=2 if case.survives else 0)
    if case.survives:
        assert [json.loads(o.text or "")["content"][0]["text"] for o in (second, third)] == ["read", "read"]
