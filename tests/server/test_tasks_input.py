"""Tasks and input compose (2026-07-28, io.modelcontextprotocol/tasks): an `@asks_first` tool asks in
InputRequiredResult rounds on tools/call and only then becomes a task; a tool's ctx input requests inside a task make
it input_required until tasks/update answers; each runs ONE execution in the ledger. Status changes go out as
`notifications/tasks` on the subscriptions/listen streams that asked for the task's id."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types

from mcp_testkit import TestMcpServer, ToolContext
from mcp_testkit._wire.eras import stateless_headers, stateless_params
from mcp_testkit.server import asks_first, start_task

from ._support import ACCEPT, CLIENT_INFO, LIMIT_S, Wire, messages, rpc, sdk_transport, serving

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"extensions": {TASKS: {}}, "elicitation": {}}
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def _server() -> TestMcpServer:
    server = TestMcpServer("tasks-input")

    @asks_first
    async def greet_later(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="user_name")
        await start_task()
        await anyio.sleep(0.01)
        return f"Hello, {answer['content']['name']}!"

    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Which date?", {"type": "object", "properties": {"date": {"type": "string"}}})
        again = await ctx.elicit("Sure?", {"type": "object", "properties": {"sure": {"type": "boolean"}}})
        return f"booked {answer['content']['date']} ({again['action']})"

    server.tool("greet_later", task="required")(greet_later)
    server.tool("greet_maybe_later", task="optional")(greet_later)
    server.tool("book", task="optional")(book)
    return server


async def _post(wire: Wire, method: str, params: dict[str, Any], capabilities: Any = WITH_TASKS) -> httpx2.Response:
    full = stateless_params(params, client_info=CLIENT_INFO, capabilities=capabilities)
    headers = {k.lower(): v for k, v in stateless_headers(method, full).items()}
    return await wire.post(rpc(method, full, 1), headers={"accept": ACCEPT, **headers})


async def _result(wire: Wire, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = await _post(wire, method, params)
    assert response.status_code == 200, response.text
    answer = messages(response)[-1]
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


async def _until(wire: Wire, task_id: str, statuses: tuple[str, ...]) -> dict[str, Any]:
    """tasks/get until the task's status is one of `statuses` (polling, as a client without a listen stream does)."""
    with anyio.fail_after(LIMIT_S):
        while True:
            got = await _result(wire, "tasks/get", {"taskId": task_id})
            if got["status"] in statuses:
                return got
            await anyio.sleep(0.01)


async def test_an_asks_first_tool_asks_in_rounds_then_becomes_a_task_that_runs_once(via: str) -> None:
    """Round 1 is an InputRequiredResult without a taskId; the retry with the answer and requestState is a
    CreateTaskResult without requestState or inputRequests; the task completes with the answer; one execution."""
    server = _server()
    async with serving(server, via) as wire:
        first = await _result(wire, "tools/call", {"name": "greet_later", "arguments": {}})
        assert first["resultType"] == "input_required"
        assert "taskId" not in first
        assert list(first["inputRequests"]) == ["user_name"]
        assert server.executions("greet_later") == 0
        answer = {"user_name": {"action": "accept", "content": {"name": "Alice"}}}
        state = first["requestState"]
        retry = {"name": "greet_later", "arguments": {}, "inputResponses": answer, "requestState": state}
        created = await _result(wire, "tools/call", retry)
        assert created["resultType"] == "task"
        assert not {"requestState", "inputRequests"} & set(created)
        done = await _until(wire, created["taskId"], ("completed", "failed", "cancelled"))
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "Hello, Alice!"}]
    assert server.executions("greet_later") == 1
    server.journal.assert_input("greet_later", kind="elicit", answer={"action": "accept", "content": {"name": "Alice"}})


async def test_a_tampered_request_state_before_the_task_is_a_clear_error_and_makes_no_task(via: str) -> None:
    """A changed requestState on the round that would start the task is -32602; no task exists, nothing ran."""
    server = _server()
    async with serving(server, via) as wire:
        first = await _result(wire, "tools/call", {"name": "greet_later", "arguments": {}})
        answer = {"user_name": {"action": "accept", "content": {"name": "Mallory"}}}
        state = "x" + first["requestState"]
        tampered = {"name": "greet_later", "arguments": {}, "inputResponses": answer, "requestState": state}
        refused = messages(await _post(wire, "tools/call", tampered))[-1]
        assert refused["error"]["code"] == -32602
        assert "requestState" in refused["error"]["message"]
    assert server.executions("greet_later") == 0
    assert [record.executed for record in server.journal.requests("tools/call")] == [False, False]


async def test_ctx_input_inside_a_task_makes_it_input_required_until_tasks_update(via: str) -> None:
    """A task tool's ctx.elicit makes the task input_required with that request; tasks/update resumes it; a second
    ask reusing a key goes out under a fresh key; the task completes; the ledger counts one execution."""
    server = _server()
    async with serving(server, via) as wire:
        created = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
        task_id = created["taskId"]
        asked = await _until(wire, task_id, ("input_required",))
        (key,) = asked["inputRequests"]
        assert asked["inputRequests"][key]["method"] == "elicitation/create"
        assert asked["inputRequests"][key]["params"]["message"] == "Which date?"
        update = {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"date": "5 May"}}}}
        ack = await _result(wire, "tasks/update", update)
        assert ack["resultType"] == "complete"
        assert not {"taskId", "status", "inputRequests"} & set(ack)
        again = await _until(wire, task_id, ("input_required", "completed", "failed"))
        while again["status"] == "input_required" and key in again["inputRequests"]:
            again = await _until(wire, task_id, ("input_required", "completed", "failed"))
        assert again["status"] == "input_required"
        (second,) = again["inputRequests"]
        assert second != key
        update = {"taskId": task_id, "inputResponses": {second: {"action": "decline"}}}
        await _result(wire, "tasks/update", update)
        done = await _until(wire, task_id, ("completed", "failed", "cancelled"))
    assert done["result"]["content"] == [{"type": "text", "text": "booked 5 May (decline)"}]
    assert server.executions("book") == 1
    assert [exchange.answer for exchange in server.journal.inputs] == [
        {"action": "accept", "content": {"date": "5 May"}},
        {"action": "decline"},
    ]
    (exchange,) = server.journal.assert_input("book", kind="elicit", answer={"action": "decline"})
    updates = [record.seq for record in server.journal.requests("tasks/update")]
    assert exchange.answered_seq == updates[-1]


async def test_an_answer_inside_a_task_that_breaks_its_schema_fails_the_task(via: str) -> None:
    """An elicitation answer whose content does not match the schema fails the task with -32602, journaled."""
    server = _server()
    async with serving(server, via) as wire:
        created = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
        asked = await _until(wire, created["taskId"], ("input_required",))
        (key,) = asked["inputRequests"]
        bad = {key: {"action": "accept", "content": {"date": 5}}}
        await _result(wire, "tasks/update", {"taskId": created["taskId"], "inputResponses": bad})
        failed = await _until(wire, created["taskId"], ("completed", "failed", "cancelled"))
        still = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
    assert failed["status"] == "failed"
    assert failed["error"]["code"] == -32602
    assert server.journal.inputs[0].error is not None
    assert still["resultType"] == "task"


class Stream:
    """The data lines of an open listen stream, one message at a time."""

    def __init__(self, response: httpx2.Response) -> None:
        self._lines = response.aiter_lines()

    async def next(self) -> dict[str, Any]:
        with anyio.fail_after(LIMIT_S):
            async for line in self._lines:
                if line.startswith("data: "):
                    return json.loads(line[6:])  # type: ignore[no-any-return]
        raise AssertionError("the listen stream ended")


@asynccontextmanager
async def _listening(wire: Wire, task_ids: list[str], request_id: str = "tasks-listen") -> AsyncIterator[Stream]:
    full = stateless_params({"notifications": {"taskIds": task_ids}}, client_info=CLIENT_INFO, capabilities=WITH_TASKS)
    headers = {k.lower(): v for k, v in stateless_headers("subscriptions/listen", full).items()}
    body = json.dumps(rpc("subscriptions/listen", full, request_id))
    async with wire.client.stream(
        "POST", wire.path, content=body, headers={"accept": ACCEPT, "content-type": "application/json", **headers}
    ) as response:
        assert response.status_code == 200
        yield Stream(response)


async def test_status_changes_reach_the_listen_stream_that_asked_for_the_task() -> None:
    """Over a real socket: a listen stream with the task's id gets notifications/tasks for input_required, working
    and completed, each the DetailedTask tasks/get would give and tagged with the subscription; the journal keeps
    them as the listen request's response."""
    server = _server()
    async with serving(server, "socket") as wire:
        created = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
        task_id = created["taskId"]
        asked = await _until(wire, task_id, ("input_required",))
        (key,) = asked["inputRequests"]
        async with _listening(wire, [task_id]) as stream:
            ack = await stream.next()
            assert ack["params"]["notifications"] == {"taskIds": [task_id]}
            answer = {key: {"action": "accept", "content": {"date": "6 June"}}}
            await _result(wire, "tasks/update", {"taskId": task_id, "inputResponses": answer})
            working = await stream.next()
            second = await stream.next()
            (again,) = second["params"]["inputRequests"]
            await _result(wire, "tasks/update", {"taskId": task_id, "inputResponses": {again: {"action": "accept"}}})
            resumed = await stream.next()
            completed = await stream.next()
            polled = await _result(wire, "tasks/get", {"taskId": task_id})
    assert [m["method"] for m in (working, second, resumed, completed)] == ["notifications/tasks"] * 4
    assert [m["params"]["status"] for m in (working, second, resumed, completed)] == [
        "working",
        "input_required",
        "working",
        "completed",
    ]
    assert all(m["params"]["_meta"] == {SUBSCRIPTION_ID: "tasks-listen"} for m in (working, completed))
    assert completed["params"]["result"] == polled["result"]
    assert {k: v for k, v in completed["params"].items() if k != "_meta"} == {
        k: v for k, v in polled.items() if k not in ("resultType", "_meta")
    }
    (record,) = server.journal.requests("subscriptions/listen")
    assert [m.get("method") for m in record.response][:5] == [
        "notifications/subscriptions/acknowledged",
        *["notifications/tasks"] * 4,
    ]


async def test_a_listen_stream_without_the_task_id_hears_nothing_of_the_task() -> None:
    """A stream that asked for another task's id gets no notification of this one (the filter is strict), while a
    stream that asked for it does."""
    server = _server()
    async with serving(server, "socket") as wire:
        created = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
        task_id = created["taskId"]
        asked = await _until(wire, task_id, ("input_required",))
        (key,) = asked["inputRequests"]
        async with _listening(wire, ["some-other-task"], "other") as other, _listening(wire, [task_id]) as this:
            await other.next()
            await this.next()
            answer = {key: {"action": "accept", "content": {"date": "7 July"}}}
            await _result(wire, "tasks/update", {"taskId": task_id, "inputResponses": answer})
            heard = await this.next()
    assert heard["params"]["taskId"] == task_id
    streams = {record.rpc_id: record.response for record in server.journal.requests("subscriptions/listen")}
    assert [m["method"] for m in streams["other"] if "method" in m] == ["notifications/subscriptions/acknowledged"]


async def test_asking_for_task_notifications_without_the_extension_is_refused(via: str) -> None:
    """subscriptions/listen with taskIds from a client that does not declare the tasks extension is 400 and
    -32021 naming it; a malformed taskIds is -32602; the server keeps serving."""
    server = _server()
    async with serving(server, via) as wire:
        refused = await _post(wire, "subscriptions/listen", {"notifications": {"taskIds": ["t"]}}, capabilities={})
        malformed = await _post(wire, "subscriptions/listen", {"notifications": {"taskIds": "t"}})
        still = await _result(wire, "tools/call", {"name": "book", "arguments": {}})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == -32602
    assert still["resultType"] == "task"


async def _alice(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": "Alice"})


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_without_tasks_the_same_tool_asks_as_any_tool_does(mode: str) -> None:
    """The official SDK client, which declares no tasks extension, in the handshake era ('legacy': a server-to-client
    elicitation on the call's stream) and in 2026-07-28 ('auto': InputRequiredResult rounds): the optional task tool
    runs as any tool, start_task() does nothing, the answer comes back; one execution each time."""
    server = _server()
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode=mode, elicitation_callback=_alice) as client:
                result = await client.call_tool("greet_maybe_later", {})
    assert result.content[0].text == "Hello, Alice!"  # type: ignore[union-attr]
    assert server.executions("greet_maybe_later") == 1
    alice = {"action": "accept", "content": {"name": "Alice"}}
    server.journal.assert_input("greet_maybe_later", kind="elicit", answer=alice)
    server.check()


async def test_a_cancelled_task_says_so_on_the_stream_once() -> None:
    """tasks/cancel of a task waiting for input sends one notifications/tasks with status cancelled; a second cancel
    (idempotent) sends none."""
    server = _server()
    async with serving(server, "socket") as wire:
        task_id = (await _result(wire, "tools/call", {"name": "book", "arguments": {}}))["taskId"]
        await _until(wire, task_id, ("input_required",))
        async with _listening(wire, [task_id]) as stream:
            await stream.next()
            await _result(wire, "tasks/cancel", {"taskId": task_id})
            cancelled = await stream.next()
            await _result(wire, "tasks/cancel", {"taskId": task_id})
            await anyio.to_thread.run_sync(server.stop)  # ends the stream with its result: nothing came between
            last = await stream.next()
    assert cancelled["params"]["status"] == "cancelled"
    assert "result" in last
    assert server.executions("book") == 1
