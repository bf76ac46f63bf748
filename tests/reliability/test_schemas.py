"""Tool input schemas never reach the network or the disk, and a pathological pattern cannot stall the server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.standalone._admin import AdminApp

from ._support import LIMIT_S, exchange, http_request, initialize, ping, post_headers, serve_command


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"const": "the content of a local file"}))
    return path


@pytest.fixture
def silent_listener() -> Iterator[socket.socket]:
    """A TCP listener that never answers: any fetch from it would hang."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        sock.setblocking(False)
        yield sock


def _schema(ref: str) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": {"$ref": ref}}}


def _call(port: int, session_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": params})
    reply = exchange(port, http_request("POST", "/mcp", post_headers(port, session_id), body.encode()))
    assert reply.status == 200, reply
    return reply.json()  # type: ignore[no-any-return]


def test_a_file_ref_is_refused_when_the_tool_is_defined(secret_file: Path) -> None:
    """Item 6: a $ref to a local file is a ValueError naming the ref at definition, never read."""
    server = TestMcpServer()
    with pytest.raises(ValueError, match=r"\$ref .*secret\.json.* cannot be resolved"):
        server.tool("leak", input_schema=_schema(secret_file.as_uri()))
    assert "leak" not in server.tools


def test_an_http_ref_is_refused_without_a_connection(silent_listener: socket.socket) -> None:
    """Item 6: a $ref to an http:// URL is refused at definition and the server never connects to it."""
    port = silent_listener.getsockname()[1]
    server = TestMcpServer()
    with pytest.raises(ValueError, match=r"\$ref"):
        server.tool("fetcher", input_schema=_schema(f"http://127.0.0.1:{port}/schema.json"))
    with pytest.raises(BlockingIOError):
        silent_listener.accept()


def test_own_defs_still_resolve_over_a_socket() -> None:
    """Item 6: a schema's own $defs (and definitions) resolve: bad arguments are refused, good ones run."""
    schema = {
        "type": "object",
        "$defs": {"count": {"type": "integer", "minimum": 1}},
        "properties": {"n": {"$ref": "#/$defs/count"}},
        "required": ["n"],
    }
    server = TestMcpServer()
    server.tool("count", input_schema=schema, returns="counted")
    with server:
        session_id = initialize(server.port)
        refused = _call(server.port, session_id, "count", {"n": 0})
        ran = _call(server.port, session_id, "count", {"n": 2})
    assert refused["result"]["isError"] is True
    assert "less than the minimum" in refused["result"]["content"][0]["text"]
    assert ran["result"]["content"][0]["text"] == "counted"
    assert server.executions("count") == 1


def test_a_json_scenario_with_a_remote_ref_is_refused_at_start(tmp_path: Path, secret_file: Path) -> None:
    """Item 6: `serve --scenario` refuses (exit 2) a tool whose schema points at a file, naming the ref."""
    import subprocess

    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"tools": [{"name": "leak", "inputSchema": _schema(secret_file.as_uri())}]}))
    done = subprocess.run(
        serve_command("--scenario", str(scenario)), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 2
    assert "$ref" in done.stderr
    assert "the content of a local file" not in done.stderr + done.stdout


def test_the_admin_api_refuses_a_remote_ref(secret_file: Path) -> None:
    """Item 6: POST /_testkit/tools with a $ref to a file is a 400 naming the ref; the file is never read."""
    server = TestMcpServer()
    server.asgi_app = AdminApp(server, "tok")  # type: ignore[assignment]
    with server, httpx2.Client(base_url=server.base_url, timeout=LIMIT_S) as client:
        tool = {"name": "leak", "inputSchema": _schema(secret_file.as_uri())}
        response = client.post("/_testkit/tools", json=tool, headers={"authorization": "Bearer tok"})
    assert response.status_code == 400
    assert "$ref" in response.json()["message"]
    assert "the content of a local file" not in response.text


@pytest.mark.parametrize("pattern", ["^(a|a)+$", "^(a+)+$", "^(\\w+\\s?)*$"])
def test_a_pathological_pattern_cannot_stall_the_server(pattern: str) -> None:
    """Item 6: a catastrophic-backtracking pattern gets an answer (a validation error) and the server serves on."""
    schema = {"type": "object", "properties": {"s": {"type": "string", "pattern": pattern}}}
    server = TestMcpServer()
    server.tool("match", input_schema=schema, returns="matched")
    with server:
        session_id = initialize(server.port)
        answer = _call(server.port, session_id, "match", {"s": "a" * 40 + "!"})
        assert ping(server.port, initialize(server.port))["result"] == {}
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert "pattern" in text or "does not match" in text
    assert server.executions("match") == 0


def test_a_pathological_pattern_property_is_bounded_too() -> None:
    """Item 6: patternProperties and additionalProperties match names under the same bound."""
    schema = {"type": "object", "patternProperties": {"^(a|a)+$": {"type": "string"}}, "additionalProperties": False}
    server = TestMcpServer()
    server.tool("names", input_schema=schema, returns="ok")
    with server:
        session_id = initialize(server.port)
        answer = _call(server.port, session_id, "names", {"a" * 40 + "!": "x"})
    assert answer["result"]["isError"] is True
    assert server.executions("names") == 0


def _answered_while_others_ping(server: TestMcpServer, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Send one call and, while it is out, ping from another session again and again, each ping within 0.5 s."""

    async def run() -> dict[str, Any]:
        caller = await anyio.to_thread.run_sync(initialize, server.port)
        other = await anyio.to_thread.run_sync(initialize, server.port)
        answers: list[dict[str, Any]] = []
        done = anyio.Event()

        async def call() -> None:
            answers.append(await anyio.to_thread.run_sync(_call, server.port, caller, tool, arguments))
            done.set()

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                while not done.is_set():
                    with anyio.fail_after(0.5):
                        assert (await anyio.to_thread.run_sync(ping, server.port, other))["result"] == {}
        return answers[0]

    with server:
        return anyio.run(run)


def test_a_long_unique_items_array_is_answered_without_stalling_other_sessions() -> None:
    """Item 1: a 64 kB array of objects (which jsonschema compares pairwise) under `uniqueItems` is answered in
    linear time, and another session's pings meanwhile."""
    schema = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    server = TestMcpServer()
    server.tool("uniq", input_schema=schema, returns="ok")
    items: list[Any] = [{"n": i} for i in range(6000)]
    assert len(json.dumps(items)) > 64_000
    answer = _answered_while_others_ping(server, "uniq", {"xs": items})
    assert answer["result"]["content"][0]["text"] == "ok"
    repeated = _answered_while_others_ping(server, "uniq", {"xs": [*items, {"n": 7.0}]})
    assert repeated["result"]["isError"] is True
    assert "non-unique" in repeated["result"]["content"][0]["text"]


def _any_of_chain(levels: int) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"l{i}": {"anyOf": [{"$ref": f"#/$defs/l{i + 1}"}, {"$ref": f"#/$defs/l{i + 1}"}]} for i in range(levels)
    }
    defs[f"l{levels}"] = {"type": "object", "required": ["never"]}
    return {"type": "object", "$defs": defs, "properties": {"v": {"$ref": "#/$defs/l0"}}}


def test_an_exponential_any_of_chain_is_cut_off_by_the_budget() -> None:
    """Item 2: 20 levels of `anyOf` through `$defs` get a validation error naming `anyOf`; other sessions are served."""
    schema = _any_of_chain(20)
    assert len(json.dumps(schema)) < 1600
    server = TestMcpServer()
    server.tool("chain", input_schema=schema, returns="ok")
    answer = _answered_while_others_ping(server, "chain", {"v": {"a": 1}})
    assert answer["result"]["isError"] is True
    text = answer["result"]["content"][0]["text"]
    assert "'anyOf'" in text
    assert "took longer than" in text
    assert server.executions("chain") == 0


def test_the_budget_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    """`VALIDATION_BUDGET_S` is read at each call: a larger budget lets a short chain validate to its real answer."""
    from mcp_testkit._wire import validation as _validation

    monkeypatch.setattr(_validation, "VALIDATION_BUDGET_S", 30.0)
    validator = _validation.build_validator("chain", _any_of_chain(6))
    problem = _validation.argument_problem("chain", validator, {"v": {"a": 1}})
    assert problem is not None
    assert "'never' is a required property" in problem or "is not valid under any" in problem
    monkeypatch.setattr(_validation, "VALIDATION_BUDGET_S", 0.0)
    problem = _validation.argument_problem("chain", validator, {"v": {"a": 1}})
    assert problem is not None
    assert "took longer than 0.0 s" in problem


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),
        ([1, True], True),
        ([0, False], True),
        ([{"a": [1], "b": 2}, {"b": 2, "a": [1.0]}], False),
        ([[1, 2], [2, 1]], True),
        ([None, "null", 0], True),
        (["a", "a"], False),
    ],
)
def test_unique_items_keeps_json_equality(items: list[Any], unique: bool) -> None:
    """The linear `uniqueItems` compares as JSON does: 1 equals 1.0, true is not 1, object keys in any order."""
    from mcp_testkit._wire import validation as _validation

    schema = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    validator = _validation.build_validator("uniq", schema)
    assert (_validation.argument_problem("uniq", validator, {"xs": items}) is None) is unique


def test_a_schema_that_refers_to_itself_endlessly_is_an_answer() -> None:
    """A `$ref` cycle that consumes nothing is answered with a validation error, not a RecursionError."""
    from mcp_testkit._wire import validation as _validation

    validator = _validation.build_validator("loop", {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})
    problem = _validation.argument_problem("loop", validator, {})
    assert problem is not None
    assert "refers to itself" in problem or "took longer than" in problem  # whichever bound a busy machine meets first
