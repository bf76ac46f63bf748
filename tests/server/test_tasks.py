"""The tasks extension (io.modelcontextprotocol/tasks) in 2026-07-28: a tool declared with `task=` runs as a task
for a client that declares the extension, is followed with tasks/get, answered with tasks/update, stopped with
tasks/cancel; the ledger counts one execution; wrong requests get clear errors and the server keeps serving."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, ToolError
from mcp_testkit._wire.eras import stateless_headers, stateless_params
from mcp_testkit.server import ask_client

from ._support import ACCEPT, CLIENT_INFO, LIMIT_S, Stateless, Wire, messages, rpc, serving

pytestmark = pytest.mark.anyio

TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"extensions": {TASKS: {}}}


def _server() -> TestMcpServer:
    server = TestMcpServer("tasks")
    server.tool("plain", returns="plain")

    async def slow(arguments: dict[str, Any]) -> str:
        await anyio.sleep(float(arguments.get("seconds", 0)))
        return f"slept {arguments.get('seconds', 0)}"

    async def confirm(arguments: dict[str, Any]) -> str:
        answers = await ask_client({"ok": {"method": "elicitation/create", "params": {"message": "Sure?"}}})
        return "confirmed" if answers["ok"].get("action") == "accept" else "declined"

    async def broken(arguments: dict[str, Any]) -> Any:
        raise ToolError("it broke")

    server.tool("slow", task="optional")(slow)
    server.tool("only_task", task="required", returns="ran as a task")
    server.tool("confirm", task="optional")(confirm)
    server.tool("broken", task="optional")(broken)
    return server


async def _post(
    wire: Wire, method: str, params: dict[str, Any], request_id: int = 1, capabilities: Any = WITH_TASKS
) -> httpx2.Response:
    """A 2026-07-28 request whose client declares `capabilities` (the tasks extension by default)."""
    full = stateless_params(params, client_info=CLIENT_INFO, capabilities=capabilities)
    headers = {k.lower(): v for k, v in stateless_headers(method, full).items()}
    return await wire.post(rpc(method, full, request_id), headers={"accept": ACCEPT, **headers})


async def _result(wire: Wire, method: str, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    response = await _post(wire, method, params, **options)
    assert response.status_code == 200, response.text
    answer = messages(response)[-1]
    assert "result" in answer, answer
    return answer["result"]  # type: ignore[no-any-return]


async def _settled(wire: Wire, task_id: str, until: tuple[str, ...] = ("completed", "failed", "cancelled")) -> Any:
    """tasks/get until the task's status is one of `until`."""
    with anyio.fail_after(LIMIT_S):
        while True:
            got = await _result(wire, "tasks/get", {"taskId": task_id})
            if got["status"] in until:
                return got
            await anyio.sleep(0.01)


async def test_a_task_is_created_at_once_runs_once_and_inlines_its_result(via: str) -> None:
    """tools/call answers a flat CreateTaskResult; tasks/get follows the task to completed with the result inlined;
    the ledger counts one execution; discover announces the extension and the listing says taskSupport."""
    server = _server()
    async with serving(server, via) as wire:
        discover = await Stateless(wire).result("server/discover")
        listed = await Stateless(wire).result("tools/list")
        created = await _result(wire, "tools/call", {"name": "slow", "arguments": {"seconds": 0.05}})
        done = await _settled(wire, created["taskId"])
    assert discover["capabilities"]["extensions"] == {TASKS: {}}
    assert {t["name"]: t.get("execution") for t in listed["tools"]}["slow"] == {"taskSupport": "optional"}
    assert (created["resultType"], created["status"]) == ("task", "working")
    assert {"createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} <= set(created)
    assert "result" not in created
    assert done["status"] == "completed"
    assert done["result"]["content"] == [{"type": "text", "text": "slept 0.05"}]
    assert server.executions("slow") == 1
    (call,) = server.journal.calls("slow")
    assert call.executed is True


async def test_without_the_extension_an_optional_tool_runs_at_once_and_a_required_one_is_refused(via: str) -> None:
    """A client that does not declare the extension gets an optional tool's plain result, and -32021 with the
    extension in data.requiredCapabilities for a required one, which does not run."""
    server = _server()
    async with serving(server, via) as wire:
        plain = await _result(wire, "tools/call", {"name": "slow", "arguments": {}}, capabilities={})
        refused = await _post(wire, "tools/call", {"name": "only_task", "arguments": {}}, capabilities={})
        gated = await _post(wire, "tasks/get", {"taskId": "x"}, capabilities={})
    assert (plain["resultType"], plain["content"][0]["text"]) == ("complete", "slept 0")
    assert refused.status_code == 400
    error = messages(refused)[0]["error"]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    assert server.executions("only_task") == 0
    assert messages(gated)[0]["error"]["code"] == -32021


async def test_cancel_stops_a_running_task_and_is_idempotent(via: str) -> None:
    """tasks/cancel answers an empty ack, the task settles as cancelled, and cancelling again answers the same."""
    server = _server()
    async with serving(server, via) as wire:
        created = await _result(wire, "tools/call", {"name": "slow", "arguments": {"seconds": 60}})
        first = await _result(wire, "tasks/cancel", {"taskId": created["taskId"]})
        settled = await _settled(wire, created["taskId"])
        again = await _result(wire, "tasks/cancel", {"taskId": created["taskId"]})
    assert first == again == {"resultType": "complete", "_meta": first["_meta"]}
    assert settled["status"] == "cancelled"
    assert "result" not in settled


async def test_a_task_asks_for_input_and_resumes_when_it_is_given(via: str) -> None:
    """ask_client parks the task as input_required with its inputRequests; tasks/update answers them and the task
    completes with what the answer decided."""
    server = _server()
    async with serving(server, via) as wire:
        created = await _result(wire, "tools/call", {"name": "confirm", "arguments": {}})
        waiting = await _settled(wire, created["taskId"], ("input_required",))
        answers = {"ok": {"action": "accept"}}
        ack = await _result(wire, "tasks/update", {"taskId": created["taskId"], "inputResponses": answers})
        done = await _settled(wire, created["taskId"])
    assert waiting["inputRequests"] == {"ok": {"method": "elicitation/create", "params": {"message": "Sure?"}}}
    assert ack["resultType"] == "complete"
    assert "status" not in ack
    assert done["result"]["content"][0]["text"] == "confirmed"


async def test_a_tool_error_completes_and_wrong_task_requests_are_clear_errors(via: str) -> None:
    """A tool error is a completed task with isError; an unknown taskId is -32602, an Mcp-Name that is not the taskId
    -32020; each is journaled and the server keeps serving."""
    server = _server()
    async with serving(server, via) as wire:
        created = await _result(wire, "tools/call", {"name": "broken", "arguments": {}})
        done = await _settled(wire, created["taskId"])
        unknown = await _post(wire, "tasks/get", {"taskId": "nope"})
        full = stateless_params({"taskId": created["taskId"]}, client_info=CLIENT_INFO, capabilities=WITH_TASKS)
        headers = {k.lower(): v for k, v in stateless_headers("tasks/get", full).items()}
        mismatched = await wire.post(
            rpc("tasks/get", full), headers={"accept": ACCEPT, **headers, "mcp-name": "other"}
        )
        still = await Stateless(wire).result("tools/list", request_id=9)
    assert (done["status"], done["result"]["isError"]) == ("completed", True)
    assert (unknown.status_code, messages(unknown)[0]["error"]["code"]) == (400, -32602)
    assert (mismatched.status_code, json.loads(mismatched.text)["error"]["code"]) == (400, -32020)
    assert still["tools"]
    assert [r.status for r in server.journal.requests("tasks/get")][-2:] == [400, 400]


def test_task_must_be_optional_or_required() -> None:
    """task= takes 'optional' or 'required'; anything else is a ValueError naming both."""
    with pytest.raises(ValueError, match="task= is 'optional' or 'required'"):
        TestMcpServer().tool("t", task="always")


async def test_a_scenario_tool_runs_as_a_task_and_a_bad_task_value_is_refused(via: str) -> None:
    """`"task"` in a JSON tool (scenario files and the admin API's tool route) declares it as `task=` does: the
    listing says so and the call becomes a task whose result tasks/get gives; a value other than optional or
    required is refused at load, naming the field."""
    from mcp_testkit.scenario import ScenarioError, add_tool, from_json

    server = TestMcpServer("scenario tasks")
    from_json({"tools": [{"name": "report", "task": "required", "returns": "the report"}]}).apply(server)
    add_tool(server, {"name": "later", "task": "optional", "returns": "later"})  # what POST /_testkit/tools runs
    async with serving(server, via) as wire:
        listed = await Stateless(wire).result("tools/list")
        created = await _result(wire, "tools/call", {"name": "report", "arguments": {}})
        done = await _settled(wire, created["taskId"])
        plain = await _result(wire, "tools/call", {"name": "later", "arguments": {}}, capabilities={})
    execution = {t["name"]: t.get("execution") for t in listed["tools"]}
    assert execution == {"report": {"taskSupport": "required"}, "later": {"taskSupport": "optional"}}
    assert (created["resultType"], done["status"]) == ("task", "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "the report"}]
    assert (plain["resultType"], plain["content"][0]["text"]) == ("complete", "later")
    assert server.executions("report") == 1
    for bad in ({"name": "x", "task": "sometimes", "returns": "x"}, {"name": "x", "task": True, "returns": "x"}):
        with pytest.raises(ScenarioError, match="task"):
            from_json({"tools": [bad]})
