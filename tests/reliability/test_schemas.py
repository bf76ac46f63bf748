"""Tool input schemas never reach the network or the disk, and a pathological pattern cannot stall the server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.server._admin import AdminApp

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
