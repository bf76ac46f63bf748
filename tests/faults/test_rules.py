"""Rules: which request a fault hits (order, nth, times, method, tool, session), under concurrency too;
pending_faults and check(unused_faults=True); and faults as JSON values."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults

from ._support import LIMIT_S, Serve, Wire, call, messages, rpc, socket_client, tools

pytestmark = pytest.mark.anyio


async def _calls(server: TestMcpServer, names: list[str]) -> list[Any]:
    """Call the tools one after another on one session; each answer as 'ok', its isError text, or its error code."""
    outcomes: list[Any] = []
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            for request_id, name in enumerate(names, 1):
                answer = messages(await wire.post(call(name, request_id=request_id)))[-1]
                if "error" in answer:
                    outcomes.append(answer["error"]["code"])
                elif answer["result"].get("isError"):
                    outcomes.append(answer["result"]["content"][0]["text"])
                else:
                    outcomes.append("ok")
    return outcomes


async def test_faults_fire_in_the_order_they_were_added(serve: Serve) -> None:
    """Three rules on one tool hit its first three calls in the order they were added; the fourth call is normal."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.ErrorResult("first"), tool="create")
    server.fail_next_call(faults.ProtocolError(-32001, "second"), tool="create")
    server.fail_next_call(faults.ErrorResult("third"), tool="create")
    assert await _calls(server, ["create"] * 4) == ["first", -32001, "third", "ok"]
    assert [r.fault for r in server.calls("create")] == [
        faults.ErrorResult("first"),
        faults.ProtocolError(-32001, "second"),
        faults.ErrorResult("third"),
        None,
    ]


@pytest.mark.parametrize(
    ("nth", "times", "hit"),
    [(1, 1, [1]), (3, 1, [3]), (2, 3, [2, 3, 4]), (4, None, [4, 5, 6, 7]), (1, None, [1, 2, 3, 4, 5, 6, 7])],
)
async def test_nth_and_times_choose_the_calls_hit(serve: Serve, nth: int, times: int | None, hit: list[int]) -> None:
    """A rule hits the nth matching request from now on, then `times` in a row (None: every one after)."""
    server = tools(serve(), "create")
    rule = server.inject(faults.ErrorResult("hit"), tool="create", nth=nth, times=times)
    outcomes = await _calls(server, ["create"] * 7)
    assert [n for n, outcome in enumerate(outcomes, 1) if outcome == "hit"] == hit
    assert server.executions("create") == 7 - len(hit)
    assert server.pending_faults() == ([rule] if times is None else [])


async def test_nth_counts_matching_requests_whatever_earlier_rules_did(serve: Serve) -> None:
    """A rule's nth counts every request it matches since it was added, also those an earlier rule hit."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.ErrorResult("A"), tool="create")
    server.inject(faults.ErrorResult("B"), tool="create", nth=3)
    assert await _calls(server, ["create"] * 4) == ["A", "ok", "B", "ok"]


async def test_a_due_rule_that_lost_to_an_earlier_one_fires_on_the_next_match(serve: Serve) -> None:
    """Two rules due on one request: the first added fires, the other fires on the next matching request."""
    server = tools(serve(), "create")
    server.inject(faults.ErrorResult("A"), tool="create", nth=2)
    server.inject(faults.ErrorResult("B"), tool="create", nth=2)
    assert await _calls(server, ["create"] * 4) == ["ok", "A", "B", "ok"]


async def test_a_rule_counts_only_requests_it_matches(serve: Serve) -> None:
    """Calls of other tools, and other methods, do not count towards a tool rule's nth."""
    server = tools(serve(), "create", "read")
    server.inject(faults.ErrorResult("hit"), tool="create", nth=2)
    assert await _calls(server, ["read", "create", "read", "read", "create", "create"]) == [
        "ok", "ok", "ok", "ok", "hit", "ok"
    ]  # fmt: skip
    assert [r.fault for r in server.journal.requests("tools/list")] == []


async def test_a_rule_for_one_session_leaves_the_others_alone(serve: Serve) -> None:
    """inject(..., session_id=...) hits only requests of that session."""
    server = tools(serve(), "create")
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            first, second = Wire(client), Wire(client)
            await first.initialize()
            await second.initialize()
            server.inject(faults.ErrorResult("yours"), tool="create", session_id=second.session_id)
            mine = await first.result(call("create"))
            yours = await second.result(call("create"))
    assert (mine.get("isError"), yours["isError"]) == (None, True)
    assert [r.session_id for r in server.calls("create") if r.fault] == [second.session_id]


async def test_a_rule_with_no_method_hits_the_next_message_of_any_kind(serve: Serve) -> None:
    """method=None matches any JSON-RPC message: a notification is hit (202 becomes the fault's answer)."""
    server = serve()
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            server.inject(faults.HttpStatus(500), method=None)
            note = await wire.post({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
            ping = await wire.post(rpc("ping"))
    assert (note.status_code, ping.status_code) == (500, 200)


# -- concurrency ---------------------------------------------------------------------------------------


CLIENTS = 16


async def _concurrent_calls(server: TestMcpServer, running: int) -> list[httpx2.Response]:
    """16 clients, each on its own connection and session, call 'work' at once; `running` handlers must
    all be in at the same time before any of them answers, so the calls really overlap."""
    arrived = 0
    everyone_in: anyio.Event | None = None

    async def work(arguments: dict[str, Any]) -> str:
        nonlocal arrived, everyone_in
        if everyone_in is None:
            everyone_in = anyio.Event()
        arrived += 1
        if arrived == running:
            everyone_in.set()
        with anyio.fail_after(LIMIT_S):
            await everyone_in.wait()
        return f"ran {arguments['n']}"

    server.tool("work")(work)
    responses: list[httpx2.Response] = []
    with anyio.fail_after(LIMIT_S):
        clients = [socket_client(server) for _ in range(CLIENTS)]
        wires = [Wire(client) for client in clients]
        try:
            async with anyio.create_task_group() as group:
                for wire in wires:
                    group.start_soon(wire.initialize)

            async def one(wire: Wire, n: int) -> None:
                responses.append(await wire.post(call("work", {"n": n})))

            async with anyio.create_task_group() as group:
                for n, wire in enumerate(wires):
                    group.start_soon(one, wire, n)
        finally:
            for client in clients:
                await client.aclose()
    return responses


@pytest.mark.parametrize(("nth", "times", "faulted"), [(3, 5, 5), (10, None, 7), (1, 1, 1), (16, 1, 1)])
async def test_nth_and_times_count_exactly_under_16_concurrent_clients(
    serve: Serve, nth: int, times: int | None, faulted: int
) -> None:
    """16 clients calling at once: the rule hits exactly the nth..nth+times-1 calls in arrival order, no more."""
    server = serve()
    rule = server.inject(faults.ErrorResult("hit"), tool="work", nth=nth, times=times)
    responses = await _concurrent_calls(server, running=CLIENTS - faulted)
    assert len(responses) == CLIENTS
    assert sum(r.json()["result"].get("isError", False) for r in responses) == faulted
    in_arrival_order = sorted(server.calls("work"), key=lambda r: r.seq)
    assert [n for n, r in enumerate(in_arrival_order, 1) if r.fault is not None] == list(range(nth, nth + faulted))
    assert [r.executed for r in in_arrival_order].count(False) == faulted
    assert server.executions("work") == CLIENTS - faulted
    assert len(server.sessions) == CLIENTS
    assert server.pending_faults() == ([rule] if times is None else [])


# -- pending_faults, check ------------------------------------------------------------------------------


async def test_pending_faults_lists_the_rules_that_can_still_fire(serve: Serve) -> None:
    """pending_faults() lists rules not used up, in order; a times=None rule stays pending for good."""
    server = tools(serve(), "create")
    once = server.fail_next_call(faults.ErrorResult("once"), tool="create")
    twice = server.inject(faults.ErrorResult("twice"), tool="create", times=2)
    always = server.inject(faults.PageError(3), times=None)
    assert server.pending_faults() == [once, twice, always]
    await _calls(server, ["create", "create"])
    assert server.pending_faults() == [twice, always]
    await _calls(server, ["create"])
    assert server.pending_faults() == [always]


async def test_check_unused_faults_fails_naming_the_fault_that_never_fired(serve: Serve) -> None:
    """check(unused_faults=True) fails listing each fault that never fired; check() alone does not look."""
    server = tools(serve(), "create")
    server.fail_next_call(faults.ErrorResult("fired"), tool="create")
    server.inject(faults.PageError(2))
    await _calls(server, ["create"])
    server.check()
    with pytest.raises(AssertionError, match=r"1 scripted fault\(s\) never fired") as caught:
        server.check(unused_faults=True)
    assert "PageError(page=2" in str(caught.value)
    assert "method=tools/list" in str(caught.value)
    assert "ErrorResult" not in str(caught.value)


async def test_check_unused_faults_passes_once_every_fault_fired(serve: Serve) -> None:
    """A rule that fired at least once is used, even when it could fire again (times=None or times left)."""
    server = tools(serve(), "create", "other")
    server.inject(faults.ErrorResult("x"), tool="create", times=None)
    server.inject(faults.ProtocolError(), tool="other", times=3)
    assert await _calls(server, ["create", "other"]) == ["x", -32603]
    assert len(server.pending_faults()) == 2
    server.check(unused_faults=True)


# -- defaults and refusals of inject ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "method", "page", "times"),
    [
        (faults.ErrorResult(), "tools/call", None, 1),
        (faults.ProtocolError(), "tools/call", None, 1),
        (faults.Drop(), "*", None, 1),
        (faults.HttpStatus(503), "*", None, 1),
        (faults.LoseSession(), "*", None, 1),
        (faults.PageError(3), "tools/list", 3, 1),
        (faults.RepeatCursor(2), "tools/list", 2, 1),
        (faults.EndlessPages(), "tools/list", None, None),
        (faults.DiscoverError(), "server/discover", None, 1),
        (faults.MissingCapability(), "tools/call", None, 1),
        (faults.HeaderMismatch(), "*", None, 1),
    ],
)
def test_inject_fills_in_the_faults_own_defaults(
    fault: faults.Fault, method: str, page: int | None, times: int | None
) -> None:
    """inject() takes the fault's method (tools/call, tools/list or any), its page, nth=1 and its times."""
    rule = TestMcpServer().inject(fault)
    assert rule == faults.Rule(fault, method=method, page=page, nth=1, times=times)


def test_era_downgrade_hits_every_stateless_request_by_default() -> None:
    """EraDowngrade's rule hits stateless requests only (never server/discover), every time, unless told."""
    rule = TestMcpServer().inject(faults.EraDowngrade())
    assert rule == faults.Rule(faults.EraDowngrade(), method="*", nth=1, times=None, era="stateless")
    assert not rule.matches("server/discover", None, None, None, "stateless")
    assert rule.matches("tools/list", None, 1, None, "stateless")
    assert not rule.matches("tools/list", None, 1, None, "handshake")


def test_fail_next_call_is_a_one_shot_rule_on_one_tool() -> None:
    """fail_next_call(fault, tool=tool) is inject(fault, method='tools/call', tool=tool), once."""
    rule = TestMcpServer().fail_next_call(faults.Drop(), tool="create")
    assert rule == faults.Rule(faults.Drop(), method="tools/call", tool="create", nth=1, times=1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"fault": "Drop"}, "needs a fault from mcp_testkit.faults"),
        ({"fault": faults.Drop, "method": None}, "needs a fault from mcp_testkit.faults"),
        ({"fault": faults.Drop(), "nth": 0}, "nth must be an int >= 1"),
        ({"fault": faults.Drop(), "times": 0}, "times must be an int >= 1 or None"),
        ({"fault": faults.PageError(), "tool": "create"}, "matches only requests that name something"),
    ],
    ids=["string", "class", "nth-0", "times-0", "tool-on-listing"],
)
def test_inject_refuses_bad_arguments_naming_them(arguments: dict[str, Any], message: str) -> None:
    """inject() refuses what is not a fault, nth < 1, times < 1, and a tool on a non-tools/call rule."""
    fault = arguments.pop("fault")
    with pytest.raises(ValueError, match=message):
        TestMcpServer().inject(fault, **arguments)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: faults.HttpStatus(700), "between 100 and 599"),
        (lambda: faults.Delay(-1), "Delay seconds must be a number >= 0"),
        (lambda: faults.LateAnswer(-1), "LateAnswer seconds must be a number >= 0"),
        (lambda: faults.SlowPage(2, seconds="slow"), "SlowPage seconds must be a number >= 0"),
        (lambda: faults.RepeatCursor(1), "RepeatCursor page must be >= 2"),
        (lambda: faults.PageError(0), "page must be an int >= 1"),
        (lambda: faults.Restart(500), "404 or 400"),
        (lambda: faults.ExpireSession(-1), "after_requests must be an int >= 0"),
        (lambda: faults.CatalogueChange(2, add="n1"), "must be a list of tool names"),
        (lambda: faults.ProtocolError(code="x"), "code must be an int"),
        (lambda: faults.HttpStatus(500, {"$bytes": "not base64!"}), "must hold base64 text"),
    ],
    ids=[
        "status",
        "delay",
        "late",
        "slow-page",
        "repeat-page-1",
        "page-0",
        "restart",
        "expire",
        "add-str",
        "code",
        "bytes",
    ],
)
def test_faults_refuse_bad_values_naming_them(make: Any, message: str) -> None:
    """Each fault checks its fields when made and says which one is wrong and what it must be."""
    with pytest.raises(ValueError, match=message):
        make()


# -- JSON ------------------------------------------------------------------------------------------------

EXAMPLES: list[faults.Fault] = [
    faults.ErrorResult("disk full"),
    faults.ProtocolError(-32000, "busy", {"retry_after": [1, 2]}),
    faults.Delay(0.25),
    faults.LateAnswer(0.5),
    faults.HttpStatus(429, "slow down", {"Retry-After": "7"}),
    faults.HttpStatus(503, {"error": "busy"}),
    faults.HttpStatus(502, b"\xff\x00<html>"),
    faults.Accepted(),
    faults.WrongContentType("text/plain"),
    faults.Drop(after_execution=True),
    faults.TruncateBody(),
    faults.EndStream(),
    faults.MalformedSse(),
    faults.BreakStream(after_events=2, retry_s=0.5),
    faults.LoseSession(),
    faults.Restart(unknown_session_status=400),
    faults.ExpireSession(after_requests=3),
    faults.RepeatCursor(3),
    faults.StuckCursor(2),
    faults.EmptyCursor(2),
    faults.DuplicateTool(2, name="t1"),
    faults.PageError(2, code=-32000, message="down"),
    faults.MalformedPage(4),
    faults.SlowPage(2, 0.5),
    faults.EndlessPages(),
    faults.InvalidCursor(3),
    faults.CatalogueChange(2, add=["n1", "n2"], remove=["t1"]),
    faults.ListChanged(2),
    faults.MalformedLine(),
    faults.Exit(code=3, after_execution=True),
    faults.Crash(after_execution=True),
    faults.DiscoverError(404, None),
    faults.HeaderMismatch("Mcp-Name"),
    faults.UnsupportedVersion(["2025-11-25"]),
    faults.MissingCapability(["elicitation", "sampling"]),
    faults.EraDowngrade(),
    faults.NeverAnswer(),
    faults.Dribble(bytes_per_s=12.5),
    faults.ProgressOnly(interval_s=0.25),
    faults.HugeResult(size=1024),
    faults.StopReading(),
    faults.Latency(0.2, jitter_s=0.05, distribution="normal", seed=7),
    faults.Bandwidth(bytes_per_s=512),
    faults.Slice(seed=3, pieces=5, gap_s=0.001),
    faults.LimitData(bytes=40),
    faults.ResetPeer(after_execution=False),
    faults.SlowClose(delay_s=0.5),
    faults.StdoutNoise(lines=("starting", "ready")),
    faults.ExpireToken(),
    faults.RevokeToken(),
    faults.InsufficientScope(scope="tickets:write admin"),
    faults.RejectRefresh(),
    faults.AuthServerError(status=502),
    faults.SlowAuthServer(delay_s=1.5),
    faults.WrongIssuer(iss=None),
]
FAULT_CLASSES = {
    cls for name in faults.__all__ if isinstance(cls := getattr(faults, name), type) and issubclass(cls, faults.Fault)
} - {faults.Fault}


def test_the_examples_cover_every_fault_class() -> None:
    """Every public fault class has an example below (with and without its defaults)."""
    assert {type(fault) for fault in EXAMPLES} == FAULT_CLASSES


DEFAULTS = [cls() for cls in sorted(FAULT_CLASSES, key=lambda cls: cls.__name__)]


@pytest.mark.parametrize("fault", EXAMPLES + DEFAULTS, ids=repr)
def test_every_fault_survives_json(fault: faults.Fault) -> None:
    """from_json(fault.to_json()) == fault, also through json.dumps/loads; the type names the class."""
    data = json.loads(json.dumps(fault.to_json()))
    assert data["type"] == type(fault).__name__
    assert faults.from_json(data) == fault
    assert repr(faults.from_json(data)) == repr(fault)


def test_a_rule_survives_json() -> None:
    """Rule.from_json(rule.to_json()) == rule, with its fault, method, tool, page, session, nth, times and era."""
    rule = faults.Rule(
        faults.PageError(2), method="tools/list", page=2, session_id="abc", nth=2, times=None, era="stateless"
    )
    assert faults.Rule.from_json(json.loads(json.dumps(rule.to_json()))) == rule


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("Drop", "must be an object with a 'type'"),
        ({"after_execution": True}, "must be an object with a 'type'"),
        ({"type": "Explode"}, "unknown fault type 'Explode'; known: Accepted, AuthServerError, Bandwidth, BreakStream"),
        ({"type": "Fault"}, "unknown fault type 'Fault'"),
        ({"type": "Drop", "after": True}, "fault Drop: unknown field 'after'; fields: after_execution"),
        ({"type": "PageError", "page": 0}, "page must be an int >= 1"),
        ({"type": "HttpStatus", "status": "500"}, "between 100 and 599"),
    ],
    ids=["string", "no-type", "unknown-type", "base-class", "unknown-field", "bad-page", "bad-status"],
)
def test_from_json_refuses_bad_data_naming_what_is_wrong(data: Any, message: str) -> None:
    """from_json raises ValueError naming the unknown type or field, or the field's own complaint."""
    with pytest.raises(ValueError, match=message):
        faults.from_json(data)


def test_rule_from_json_refuses_bad_data() -> None:
    """Rule.from_json needs a 'fault' and refuses unknown fields and bad counts."""
    with pytest.raises(ValueError, match="must be an object with a 'fault'"):
        faults.Rule.from_json({"method": "tools/call"})
    with pytest.raises(ValueError, match="rule: unknown field 'nht'"):
        faults.Rule.from_json({"fault": {"type": "Drop"}, "nht": 2})
    with pytest.raises(ValueError, match="nth must be an int >= 1"):
        faults.Rule.from_json({"fault": {"type": "Drop"}, "nth": 0})
