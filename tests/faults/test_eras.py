"""Faults in the stateless era (2026-07-28): its own faults on the wire, the others there too, and misplaced ones."""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults

from ._support import CATALOGUE, FRAMINGS, LIMIT_S, Modern, Serve, Wire, events, messages, socket_client, tools

pytestmark = pytest.mark.anyio

ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]
LEGACY_REFUSAL = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Bad Request: Missing session ID"}}


def _error(response: httpx2.Response, status: int, code: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    return error


# -- the era's own faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "status", "body"),
    [
        (faults.DiscoverError(), 400, LEGACY_REFUSAL | {"id": 1}),
        (faults.DiscoverError(404, None), 404, None),
        (
            faults.DiscoverError(200, -32601, "Method not found", {"why": "old"}),
            200,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "error": {"code": -32601, "message": "Method not found", "data": {"why": "old"}},
            },
        ),
    ],
    ids=["default", "bare-404", "200-with-error"],
)
@pytest.mark.parametrize("eras", [("handshake", "stateless"), ("handshake",)], ids=["both-eras", "handshake-only"])
async def test_discover_error_answers_the_probe_as_scripted(
    serve: Serve, fault: faults.Fault, status: int, body: Any, eras: tuple[str, ...]
) -> None:
    """DiscoverError answers server/discover with its status and JSON-RPC error (or none), in both eras."""
    server = serve(eras=eras)
    server.inject(fault)
    async with socket_client(server) as client:
        probe = await Modern(client).post("server/discover")
        again = await Modern(client).post("server/discover", request_id=2)
    assert probe.status_code == status
    assert (probe.json() if body is not None else probe.content) == (body if body is not None else b"")
    assert server.journal[0].fault == fault
    assert again.status_code == 200
    assert ("result" in again.json()) is ("stateless" in eras)


async def test_header_mismatch_refuses_with_32020_naming_the_header(serve: Serve) -> None:
    """HeaderMismatch answers 400 and -32020 naming its header; the call does not run."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.HeaderMismatch("Mcp-Name"), tool="create")
    async with socket_client(server) as client:
        response = await Modern(client).post("tools/call", {"name": "create"})
    error = _error(response, 400, -32020)
    assert error["message"] == "Header mismatch: Mcp-Name header does not match the request body"
    record = server.calls("create")[0]
    assert (record.fault, record.executed, record.era) == (faults.HeaderMismatch("Mcp-Name"), False, "stateless")
    assert server.executions() == 0


@pytest.mark.parametrize(
    ("fault", "supported"),
    [(faults.UnsupportedVersion(), ALL_VERSIONS), (faults.UnsupportedVersion(["2025-11-25"]), ["2025-11-25"])],
    ids=["the-servers", "scripted"],
)
async def test_unsupported_version_offers_its_list(serve: Serve, fault: faults.Fault, supported: list[str]) -> None:
    """UnsupportedVersion answers 400 and -32022 with data.supported (the server's, or its own) and data.requested."""
    server = tools(serve(), "create")
    server.inject(fault)
    async with socket_client(server) as client:
        response = await Modern(client).post("tools/list")
    error = _error(response, 400, -32022)
    assert error["data"] == {"supported": supported, "requested": "2026-07-28"}


async def test_missing_capability_names_what_it_needs(serve: Serve) -> None:
    """MissingCapability answers a call 400 and -32021 with data.requiredCapabilities; nothing runs."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.MissingCapability(["elicitation", "sampling"]), tool="create")
    async with socket_client(server) as client:
        response = await Modern(client).post("tools/call", {"name": "create"})
    error = _error(response, 400, -32021)
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}, "sampling": {}}}
    assert "elicitation, sampling" in error["message"]
    assert server.executions() == 0


async def test_era_downgrade_answers_discover_then_refuses_stateless_requests(serve: Serve) -> None:
    """EraDowngrade: the probe is answered, every stateless request after it gets the legacy 400; sessions work."""
    server = tools(serve(), *CATALOGUE)
    server.inject(faults.EraDowngrade())
    async with socket_client(server) as client:
        modern = Modern(client)
        probe = await modern.post("server/discover")
        refused = [await modern.post("tools/list", request_id=n) for n in (2, 3)]
        wire = Wire(client)
        await wire.initialize()
        listed = await wire.result({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
    assert probe.status_code == 200
    assert [(r.status_code, r.json()) for r in refused] == [(400, LEGACY_REFUSAL)] * 2
    assert [tool["name"] for tool in listed["tools"]] == list(CATALOGUE)
    assert [r.fault for r in server.journal] == [None, faults.EraDowngrade(), faults.EraDowngrade(), None, None, None]


# -- misplaced faults -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("eras", "fault", "era", "message"),
    [
        (
            ("handshake", "stateless"),
            faults.LoseSession(),
            "stateless",
            "which has no session: inject it with era='handshake'",
        ),
        (("stateless",), faults.Restart(), None, "which has no session"),
        (("handshake",), faults.HeaderMismatch(), None, "inject it with era='stateless'"),
        (("handshake",), faults.Drop(), "stateless", "server 'test' speaks only handshake"),
        (("handshake", "stateless"), faults.EraDowngrade(), "handshake", "era='stateless'"),
    ],
    ids=[
        "lose-session-stateless",
        "restart-on-stateless-server",
        "mismatch-on-handshake-server",
        "era-not-spoken",
        "downgrade-handshake",
    ],
)
def test_inject_refuses_a_fault_for_an_era_it_means_nothing_in(
    eras: tuple[str, ...], fault: faults.Fault, era: str | None, message: str
) -> None:
    """A fault injected for an era it has no meaning in, or an era the server does not speak, is refused at once."""
    server = TestMcpServer(eras=eras)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        server.inject(fault, era=era)
    assert server.pending_faults() == []


async def test_a_session_fault_that_hits_a_stateless_request_says_so(serve: Serve) -> None:
    """LoseSession hitting a stateless request: 500 and -32603 saying why, recorded, and check() fails with it."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.LoseSession(), tool="create")
    async with socket_client(server) as client:
        response = await Modern(client).post("tools/call", {"name": "create"})
        after = await Modern(client).post("tools/call", {"name": "create"}, request_id=2)
    error = _error(response, 500, -32603)
    assert error["message"].startswith("mcp-testkit: LoseSession() has no meaning for a stateless (2026-07-28) request")
    assert after.status_code == 200
    assert server.calls("create")[0].error == error["message"].removeprefix("mcp-testkit: ")
    with pytest.raises(AssertionError, match=r"server 'faults': LoseSession\(\) has no meaning"):
        server.check()
    server.reset()


async def test_a_stateless_fault_that_hits_a_handshake_request_says_so(serve: Serve) -> None:
    """HeaderMismatch hitting a handshake-era request: 500 and -32603 naming the era it belongs to."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.HeaderMismatch(), tool="create")
    async with socket_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        response = await wire.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create"}})
    assert "inject it with era='stateless'" in _error(response, 500, -32603)["message"]
    assert len(server.errors) == 1
    server.reset()


async def test_a_rule_with_an_era_hits_only_that_eras_requests(serve: Serve) -> None:
    """inject(..., era="stateless") passes handshake requests by and hits the first stateless one."""
    server = tools(serve(), "create")
    rule = server.inject(faults.ErrorResult("only modern"), era="stateless")
    async with socket_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        old = await wire.result({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "create"}})
        new = await Modern(client).post("tools/call", {"name": "create"})
    assert old["content"][0]["text"] == "create ran"
    assert new.json()["result"]["isError"] is True
    assert rule.era == "stateless"
    assert [(c.era, c.fault) for c in server.calls("create")] == [("handshake", None), ("stateless", rule.fault)]


# -- the other faults, in the stateless era ---------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_answer_and_http_faults_work_on_stateless_requests(serve: Serve, framing: str) -> None:
    """ErrorResult, ProtocolError, HttpStatus, Accepted and WrongContentType answer stateless calls as any other."""
    server = tools(serve(response_mode=framing), "create")
    for fault in (
        faults.ErrorResult("disk full"),
        faults.ProtocolError(-32000, "busy"),
        faults.ProtocolError(-32602, "bad"),
        faults.HttpStatus(503, "later"),
        faults.Accepted(),
        faults.WrongContentType("text/html"),
    ):
        server.fail_next_call(fault, tool="create")
    async with socket_client(server) as client:
        modern = Modern(client)
        answers = [await modern.post("tools/call", {"name": "create"}, request_id=n) for n in range(6)]
    error_result = messages(answers[0])[-1]["result"]
    assert (error_result["isError"], error_result["resultType"]) == (True, "complete")
    assert (answers[1].status_code, messages(answers[1])[-1]["error"]["code"]) == (200, -32000)
    assert answers[2].status_code == 400, "an -32602 before any event goes out as JSON with the era's status"
    assert (answers[3].status_code, answers[3].text) == (503, "later")
    assert (answers[4].status_code, answers[4].content) == (202, b"")
    assert (answers[5].status_code, answers[5].headers["content-type"]) == (200, "text/html")
    assert [c.executed for c in server.calls("create")] == [False, False, False, False, False, True]


@pytest.mark.parametrize("after_execution", [False, True], ids=["before", "after-execution"])
async def test_a_dropped_stateless_call_reissued_with_a_new_id_shows_in_the_ledger(
    serve: Serve, after_execution: bool
) -> None:
    """A Drop loses the in-flight request; a client re-issues it with a new id, and the ledger shows both runs."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.Drop(after_execution=after_execution), tool="create")
    async with socket_client(server) as client:
        modern = Modern(client)
        with pytest.raises(httpx2.RemoteProtocolError):
            await modern.post("tools/call", {"name": "create"}, request_id=1)
        again = await modern.post("tools/call", {"name": "create"}, request_id=2)
    assert again.status_code == 200
    calls = server.calls("create")
    assert [(c.rpc_id, c.executed, c.status) for c in calls] == [(1, after_execution, None), (2, True, 200)]
    assert server.executions("create") == 1 + after_execution


@pytest.mark.parametrize("fault", [faults.EndStream(), faults.MalformedSse(), faults.TruncateBody()], ids=repr)
async def test_broken_streams_of_the_era_carry_no_event_ids(serve: Serve, fault: faults.Fault) -> None:
    """EndStream, MalformedSse and TruncateBody over SSE break the stream as usual, without `id:` lines."""
    server = tools(serve(response_mode="sse"), "create")
    server.fail_next_call(fault, tool="create")
    async with socket_client(server) as client:
        response = await Modern(client).post("tools/call", {"name": "create"})
    assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
    assert b"id:" not in response.content
    assert all("id" not in event for event in events(response))
    assert server.executions("create") == 1


async def test_listing_faults_work_on_stateless_pages(serve: Serve) -> None:
    """RepeatCursor, DuplicateTool and InvalidCursor hit their page of a stateless walk; -32602 comes as 400."""
    server = tools(serve(page_size=2), *CATALOGUE)
    server.inject(faults.RepeatCursor(2))
    async with socket_client(server) as client:
        modern = Modern(client)
        first = (await modern.post("tools/list")).json()["result"]
        second = (await modern.post("tools/list", {"cursor": first["nextCursor"]}, 2)).json()["result"]
        server.inject(faults.InvalidCursor(2))
        invalid = await modern.post("tools/list", {"cursor": first["nextCursor"]}, 3)
        server.inject(faults.DuplicateTool(1, name="t5"))
        duplicated = (await modern.post("tools/list", request_id=4)).json()["result"]
    assert second["nextCursor"] == first["nextCursor"]
    _error(invalid, 400, -32602)
    assert [tool["name"] for tool in duplicated["tools"]] == ["t1", "t2", "t5"]
    assert {page["cacheScope"] for page in (first, second, duplicated)} == {"public"}


async def test_a_slow_stateless_call_runs_after_a_delay(serve: Serve) -> None:
    """Delay holds a stateless call, then answers it normally."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.Delay(0.05), tool="create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            response = await Modern(client).post("tools/call", {"name": "create"})
    assert response.json()["result"]["content"] == [{"type": "text", "text": "create ran"}]
