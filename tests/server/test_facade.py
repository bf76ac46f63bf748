"""`TestMcpServer` as a facade: the public interface other packages build on (tools in one swap, rules checked
against the eras, offerings read-only, the required headers, the ledger, a recording to replay), and the
keywords each verb takes from its one definition."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.server import Recording
from mcp_testkit.tools import ScriptedTool


def test_add_tools_puts_them_all_in_one_swap() -> None:
    """Tools built elsewhere land in listing order, replacing one of the same name; the catalogue changes once."""
    server = TestMcpServer()
    server.tool("b", returns="old")
    changes: list[int] = []
    original = server._state.catalogue_changed
    server._state.catalogue_changed = lambda quiet=None: (changes.append(1), original(quiet))  # type: ignore[method-assign]
    server.add_tools([ScriptedTool.build("a", returns="x"), ScriptedTool.build("b", returns="new")])
    assert list(server.tools) == ["b", "a"]
    assert server.tools["b"].answers == ["new"]
    assert changes == [1]


def test_tool_takes_the_keywords_of_scripted_tool_build() -> None:
    """`server.tool` shows `ScriptedTool.build`'s keywords (task= among them) and refuses one it does not take."""
    server = TestMcpServer()
    parameters = inspect.signature(server.tool).parameters
    assert list(parameters) == list(inspect.signature(ScriptedTool.build).parameters)
    assert "task" in parameters
    tool = server.tool("job", task="optional")
    assert tool.definition["execution"] == {"taskSupport": "optional"}
    with pytest.raises(ValueError, match="task= is 'optional' or 'required'"):
        server.tool("bad", task="sometimes")
    with pytest.raises(TypeError, match="descriptoin"):
        server.tool("typo", descriptoin="x")  # type: ignore[call-arg]


def test_inject_of_the_server_and_the_proxy_take_the_keywords_of_placed_rule() -> None:
    """Both fronts' `inject` show `faults.placed_rule`'s parameters; a keyword left out is the fault's own default."""
    from mcp_testkit.proxy import ChaosProxy

    placed = list(inspect.signature(faults.placed_rule).parameters)
    assert list(inspect.signature(TestMcpServer().inject).parameters) == placed
    assert list(inspect.signature(ChaosProxy.inject).parameters)[1:] == placed
    assert inspect.signature(faults.placed_rule).parameters["method"].default is faults.OWN_DEFAULT
    rule = TestMcpServer().inject(faults.PageError(page=2))
    assert (rule.method, rule.page) == ("tools/list", 2)


def test_add_rule_is_checked_against_the_eras_the_server_speaks() -> None:
    """A rule for an era the server does not speak, or whose fault means nothing in its eras, is refused."""
    server = TestMcpServer("files", eras=("handshake",))
    with pytest.raises(ValueError, match=r"inject: era='stateless', but server 'files' speaks only handshake"):
        server.add_rule(faults.Rule(faults.Drop(), era="stateless"))
    stateless = TestMcpServer("next", eras=("stateless",))
    with pytest.raises(ValueError, match="LoseSession"):
        stateless.check_rule(faults.Rule(faults.LoseSession()))
    rule = server.add_rule(faults.Rule(faults.Drop(), method="tools/call"))
    assert server.pending_faults() == [rule]


def test_offerings_are_read_only_and_follow_changes() -> None:
    """`server.offerings` reads what is offered now; it cannot be written, and sees later scripting."""
    server = TestMcpServer()
    offerings = server.offerings
    server.resource("file:///a.txt", text="A")
    server.prompt("p", messages=[{"role": "user", "content": "hi"}])
    assert list(offerings.resources) == ["file:///a.txt"]
    assert list(server.offerings.prompts) == ["p"]
    with pytest.raises(TypeError):
        offerings.resources["file:///b.txt"] = offerings.resources["file:///a.txt"]  # type: ignore[index]


def test_required_headers_are_named_in_the_order_added_and_never_valued() -> None:
    """`required_headers` gives the names as given, first requirement first; a rotation keeps its place."""
    server = TestMcpServer()
    server.require_header("X-Key", "k")
    server.require_header("Authorization", "Bearer t")
    server.rotate_header("x-key", "k2")
    assert server.required_headers == ("X-Key", "Authorization")
    server.reset()
    assert server.required_headers == ()


def test_the_ledger_is_a_copy_by_tool_and_the_body_bounds_are_the_settings() -> None:
    """`ledger` copies the executions by tool; `max_body` and `body_timeout_s` are what the server was built with."""
    server = TestMcpServer(max_body=1024, body_timeout_s=2)
    server._state.executions["a"] += 2
    ledger = server.ledger
    ledger["a"] = 99
    assert server.ledger == {"a": 2}
    assert server.executions("a") == 2
    assert (server.max_body, server.body_timeout_s) == (1024, 2.0)


def test_live_settings_are_checked_as_the_keywords_are_and_end_with_reset() -> None:
    """Setting `page_size`, `get_stream`, `cache_ttl_s` or `input_timeout_s` checks the value; `reset()` undoes it."""
    server = TestMcpServer(page_size=3)
    server.page_size, server.get_stream, server.cache_ttl_s, server.input_timeout_s = 1, True, 1.5, 2
    assert (server.page_size, server.get_stream, server.cache_ttl_s, server.input_timeout_s) == (1, True, 1.5, 2.0)
    assert server._state.cache_ttl_ms == 1500
    for name, value in [("page_size", 0), ("get_stream", "yes"), ("cache_ttl_s", -1), ("input_timeout_s", 0)]:
        with pytest.raises(ValueError, match=name):
            setattr(server, name, value)
    with pytest.raises(ValueError, match="response_mode must be 'json', 'sse' or a callable"):
        server.response_mode = "xml"
    server.reset()
    assert (server.page_size, server.get_stream, server.cache_ttl_s) == (3, False, 0.0)


class _Recorded(Recording):
    """A recording of a server named 'recorded' with one tool, made again for each fresh state."""

    def __init__(self) -> None:
        self.made = 0

    def initialize_result(self) -> dict[str, Any]:
        return {"capabilities": {"tools": {}}, "serverInfo": {"name": "recorded", "version": "9"}}

    def discover_result(self, eras: Sequence[str]) -> dict[str, Any] | None:
        return None

    def tools(self) -> list[ScriptedTool]:
        self.made += 1
        return [ScriptedTool.build("recorded_tool", returns="as recorded")]


def test_a_recording_is_served_in_place_of_the_scripted_answers_and_comes_back_on_reset() -> None:
    """`replaying=` serves the recording's initialize answer and tools, asked again for every fresh state."""
    recording = _Recorded()
    server = TestMcpServer(replaying=recording)
    assert server._state.server_info() == {"name": "recorded", "version": "9"}
    assert list(server.tools) == ["recorded_tool"]
    server.remove_tool("recorded_tool")
    server.reset()
    assert list(server.tools) == ["recorded_tool"]
    assert recording.made == 2


def test_a_server_that_never_started_stops_quietly_and_serves_after_a_failed_start() -> None:
    """`stop()` before `start()` does nothing; a start refused (already started) leaves the server serving."""
    server = TestMcpServer()
    server.stop()
    assert not server.started
    with server:
        with pytest.raises(RuntimeError, match="already started"):
            server.start()
        assert server.started
    assert not server.started
