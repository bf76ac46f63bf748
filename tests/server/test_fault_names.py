"""A rule's `name=`: it hits whatever request names that (a tool's call, a resource's read or subscription, a prompt's
get), in both eras, from Python, a JSON scenario and the admin API; `tool=` keeps its meaning beside it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.scenario import from_json
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import LIMIT_S, Wire, sdk_transport, serving

pytestmark = pytest.mark.anyio

HIT = faults.ProtocolError(code=-32050, message="named and hit")


def _server() -> TestMcpServer:
    """A tool and a prompt both called `doc`, and a resource `file:///doc`: one name, three kinds."""
    server = TestMcpServer("names")
    server.tool("doc", returns="called")
    server.tool("other", returns="other called")
    server.prompt("doc", messages=[{"role": "user", "content": "the doc prompt"}])
    server.resource("file:///doc", text="the doc text")
    server.resource("file:///other", text="other text")
    return server


async def _outcome(wire: Wire, method: str, params: dict[str, Any]) -> str:
    answer = await wire.request(method, params)
    return answer["error"]["message"] if "error" in answer else "ok"


async def test_name_hits_every_request_that_names_it_whatever_its_method() -> None:
    """`name="doc"` with no method hits the tool's call and the prompt's get; the resource URI and the listings,
    which name something else or nothing, pass; `tool="doc"` on any method hits only the call."""
    server = _server()
    server.inject(HIT, name="doc", times=None)
    async with serving(server, "socket") as wire:
        await wire.initialize()
        outcomes = {
            "call doc": await _outcome(wire, "tools/call", {"name": "doc", "arguments": {}}),
            "call other": await _outcome(wire, "tools/call", {"name": "other", "arguments": {}}),
            "get doc": await _outcome(wire, "prompts/get", {"name": "doc"}),
            "read file:///doc": await _outcome(wire, "resources/read", {"uri": "file:///doc"}),
            "list tools": await _outcome(wire, "tools/list", {}),
            "list prompts": await _outcome(wire, "prompts/list", {}),
        }
    assert outcomes == {
        "call doc": "named and hit",
        "call other": "ok",
        "get doc": "named and hit",
        "read file:///doc": "ok",
        "list tools": "ok",
        "list prompts": "ok",
    }
    assert [r.rpc_method for r in server.journal if r.fault == HIT] == ["tools/call", "prompts/get"]
    assert server.executions("doc") == 0


async def test_name_matches_a_uri_on_a_read_and_a_subscription_and_a_method_narrows_it() -> None:
    """`name=` a URI hits its read and its subscription; with `method=` only that method's requests count."""
    server = _server()
    server.inject(HIT, name="file:///doc", times=2)
    server.inject(faults.ProtocolError(message="read only"), method="resources/read", name="file:///other")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        subscribe = await _outcome(wire, "resources/subscribe", {"uri": "file:///doc"})
        read = await _outcome(wire, "resources/read", {"uri": "file:///doc"})
        again = await _outcome(wire, "resources/read", {"uri": "file:///doc"})
        other_subscribe = await _outcome(wire, "resources/subscribe", {"uri": "file:///other"})
        other_read = await _outcome(wire, "resources/read", {"uri": "file:///other"})
    assert (subscribe, read, again) == ("named and hit", "named and hit", "ok")
    assert (other_subscribe, other_read) == ("ok", "read only")
    assert server.pending_faults() == []
    server.journal.assert_read("file:///doc", times=2)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_meets_a_named_fault_in_both_eras(mode: str) -> None:
    """In the handshake era and in 2026-07-28 the SDK client's read and prompt of the name fail, the others pass."""
    server = _server()
    server.inject(HIT, name="file:///doc", era=None)
    server.inject(HIT, name="doc", era=None)
    async with serving(server, "socket"):
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode=mode) as client:
                with pytest.raises(MCPError, match="named and hit"):
                    await client.read_resource("file:///doc")
                other = await client.read_resource("file:///other")
                with pytest.raises(MCPError, match="named and hit"):
                    await client.get_prompt("doc")
                called = await client.call_tool("doc", {})
    assert other.contents[0].text == "other text"  # type: ignore[union-attr]
    assert called.content[0].text == "called"  # type: ignore[union-attr]
    hit = [(r.rpc_method, r.era) for r in server.journal if r.fault is not None]
    era = "handshake" if mode == "legacy" else "stateless"
    assert hit == [("resources/read", era), ("prompts/get", era)]


def test_name_is_refused_where_it_cannot_match_and_beside_tool() -> None:
    """`name=` with a method that names nothing, a listing fault, or together with `tool=`: a ValueError naming it."""
    server = TestMcpServer()
    with pytest.raises(ValueError, match=r"name='p' matches only requests that name something .*not prompts/list"):
        server.inject(faults.ProtocolError(), method="prompts/list", name="p")
    with pytest.raises(ValueError, match=r"name='p' matches only requests that name something .*not tools/list"):
        server.inject(faults.PageError(), name="p")
    with pytest.raises(ValueError, match=r"give tool='a' or name='b', not both"):
        server.inject(faults.ProtocolError(), tool="a", name="b")
    with pytest.raises(ValueError, match="name must be a string"):
        faults.Rule(faults.ProtocolError(), name=3)  # type: ignore[arg-type]
    assert server.pending_faults() == []


def test_a_rule_with_a_name_survives_json_and_one_without_writes_no_name() -> None:
    """`Rule.to_json()` writes `name` only when set, and `from_json` reads back an equal rule."""
    named = TestMcpServer().inject(faults.Delay(0.5), name="file:///doc")
    plain = faults.Rule(faults.Delay(0.5), tool="doc")
    assert named.to_json()["name"] == "file:///doc"
    assert named.method == "*"
    assert "name" not in plain.to_json()
    assert faults.Rule.from_json(named.to_json()) == named


async def test_a_json_scenario_and_the_admin_api_take_a_name() -> None:
    """A scenario rule's `"name"` and a rule POSTed to /_testkit/faults with one hit the prompt and the read they
    name, with the method left to the name; the pending rules list shows it."""
    server = _server()
    from_json({"faults": [{"fault": {"type": "ProtocolError", "message": "from the scenario"}, "name": "doc"}]}).apply(
        server
    )
    server.asgi_app = AdminApp(server, "t")  # type: ignore[assignment]
    rule = {"fault": {"type": "ProtocolError", "message": "from the admin API"}, "name": "file:///doc"}
    async with serving(server, "socket") as wire:
        with anyio.fail_after(LIMIT_S):
            headers = {"authorization": "Bearer t"}
            posted = await wire.client.post(f"{PREFIX}/faults", json=rule, headers=headers)
            pending = (await wire.client.get(f"{PREFIX}/faults", headers=headers)).json()["rules"]
        await wire.initialize()
        got = await _outcome(wire, "prompts/get", {"name": "doc"})
        read = await _outcome(wire, "resources/read", {"uri": "file:///doc"})
    assert posted.status_code == 201
    assert [(r["method"], r.get("name")) for r in pending] == [("*", "doc"), ("*", "file:///doc")]
    assert (got, read) == ("from the scenario", "from the admin API")


def test_check_names_an_unfired_rule_by_its_name() -> None:
    """`check(unused_faults=True)` lists a rule that never fired with the name it waited for."""
    server = TestMcpServer("quiet")
    server.inject(HIT, name="file:///never")
    with pytest.raises(AssertionError, match=r"never fired:\n.*method=\*, tool=None, name=file:///never\)"):
        server.check(unused_faults=True)
