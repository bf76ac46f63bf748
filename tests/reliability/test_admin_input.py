"""Issue 22 items 5 and 6 for what the project reads besides MCP messages: admin bodies and scenario files are
decoded strictly (no NaN or Infinity, bounded nesting), refused naming the field, and a large admin scenario is
read off the event loop, so that another session is served meanwhile."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from ._support import ACCEPT, LATEST, LIMIT_S, serve_command, serve_process


def _deep_list(depth: int) -> list[Any]:
    root: list[Any] = []
    inner = root
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return root


_STALL_S = 0.5
"""The longest another session's ping may wait while the admin API works: a liveness bound, not a benchmark."""


async def _session(client: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """Open a session on `url`; the headers of a request on it."""
    params = {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    headers = {"accept": ACCEPT}
    response = await client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params},
                                 headers=headers)  # fmt: skip
    assert response.status_code == 200, response.text
    headers = {**headers, "mcp-session-id": response.headers["mcp-session-id"], "mcp-protocol-version": LATEST}
    note = await client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert note.status_code == 202
    return headers


@pytest.mark.anyio
async def test_a_scenario_of_30000_tools_is_applied_while_another_session_is_served() -> None:
    """A 4 MB admin scenario of 30,000 tools (it blocked all MCP traffic for 32 s) is read in a worker thread and
    put in the catalogue at once; another session's pings are each answered within 0.5 s meanwhile."""
    tools = [{"name": f"tool_{i:05d}", "description": "a tool of a large scenario " * 3, "returns": "ok"}
             for i in range(30_000)]  # fmt: skip
    scenario = json.dumps({"tools": tools}).encode()
    assert len(scenario) > 4_000_000
    with serve_process("--admin", "--max-body", str(8 << 20)) as (url, admin, token):
        async with httpx2.AsyncClient(timeout=LIMIT_S * 6) as client:
            headers = await _session(client, url)
            pings = 0
            applied: list[httpx2.Response] = []

            async def apply() -> None:
                bearer = {"authorization": f"Bearer {token}", "content-type": "application/json"}
                applied.append(await client.post(f"{admin}/scenario", content=scenario, headers=bearer))

            with anyio.fail_after(LIMIT_S * 6):
                async with anyio.create_task_group() as group:
                    group.start_soon(apply)
                    while not applied:
                        with anyio.fail_after(_STALL_S):
                            answer = await client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                                       headers=headers)  # fmt: skip
                        assert answer.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
                        pings += 1
            listed = await client.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers)
    assert applied[0].status_code == 200, applied[0].text
    assert len(applied[0].json()["tools"]) == 30_000
    assert len(listed.json()["result"]["tools"]) == 30_000
    assert pings > 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("endpoint", "body", "field"),
    [
        ("tools", b'{"name": "t", "inputSchema": {"type": "object", "properties": {"n": {"maximum": Infinity}}}}',
         "inputSchema/properties/n/maximum"),
        ("scenario", b'{"tools": [{"name": "t", "returns": {"structured": {"x": NaN}}}]}',
         "tools/0/returns/structured/x"),
        ("faults", b'{"fault": {"type": "Delay", "seconds": 1e999}}', "fault/seconds"),
    ],
)  # fmt: skip
async def test_nan_and_infinity_in_an_admin_body_are_a_400_naming_the_field(
    endpoint: str, body: bytes, field: str
) -> None:
    """`"maximum": Infinity` was accepted and then sent in tools/list: now each is 400 naming where, nothing added."""
    with serve_process("--admin") as (_, admin, token):
        async with httpx2.AsyncClient(timeout=LIMIT_S) as client:
            bearer = {"authorization": f"Bearer {token}"}
            with anyio.fail_after(LIMIT_S):
                response = await client.post(f"{admin}/{endpoint}", content=body, headers=bearer)
                health = (await client.get(f"{admin}/health", headers=bearer)).json()
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith(f"the body is not JSON this server reads at {field}: "), message
    assert "not JSON" in message
    assert (health["tools"], health["pending_faults"]) == ([], 0)


@pytest.mark.parametrize(
    ("text", "field", "why"),
    [
        ('{"tools": [{"name": "t", "returns": {"structured": {"x": NaN}}}]}', "tools/0/returns/structured/x", "NaN"),
        ('{"page_size": 1e999}', "page_size", "out of range"),
        ('{"tools": ' + "[" * 200 + "]" * 200 + "}", "tools/0/0/0/0", "nested too deeply"),
    ],
)
def test_an_odd_scenario_file_is_exit_2_with_one_line_naming_file_and_field(
    tmp_path: Path, text: str, field: str, why: str
) -> None:
    """NaN, a number out of range or 200 levels of nesting in a scenario file: exit 2, one line, file and field."""
    path = tmp_path / "odd.json"
    path.write_text(text)
    done = subprocess.run(serve_command("--scenario", str(path)), capture_output=True, text=True, timeout=LIMIT_S,
                          stdin=subprocess.DEVNULL)  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"scenario {path}: {field}" in lines[0]
    assert why in lines[0]
    assert "Traceback" not in done.stderr


def test_the_scenario_reader_refuses_constants_python_would_take(tmp_path: Path) -> None:
    """`load_scenario` is strict where json.loads is lenient: `-Infinity` in a file is a ScenarioError."""
    from mcp_testkit.scenario import ScenarioError, load_scenario

    path = tmp_path / "inf.json"
    path.write_text('{"retry_ms": -Infinity}')
    with pytest.raises(ScenarioError, match=r"retry_ms: not valid JSON: .*-Infinity is not JSON"):
        load_scenario(path)
    parsed: Any = json.loads(path.read_text())
    assert parsed["retry_ms"] == float("-inf")  # what it would have been


def test_client_arguments_with_nan_are_exit_2_with_one_line() -> None:
    """`mcp-testkit client --arguments '{"n": NaN}'` is refused before any request: exit 2, one line."""
    command = [*serve_command()[:-1], "client", "http://127.0.0.1:9/mcp", "--call", "x", "--arguments", '{"n": NaN}']
    done = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT_S, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "mcp-testkit client: --arguments is not JSON: the value is not JSON (NaN is not JSON (RFC 8259 has no NaN or "
        "Infinity))"
    ]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"tools": [{"name": "t", "returns": {"structured": {"x": float("inf")}}}]},
         "tools/0/returns/structured/x: Infinity is not JSON"),
        ({"faults": _deep_list(100_000)}, "faults/0/0/0/0/0/0/0/... (152 levels more): nested too deeply"),
    ],
    ids=["infinity", "nested-100k"],
)  # fmt: skip
def test_scenario_from_json_bounds_a_value_built_in_python(data: Any, problem: str) -> None:
    """`from_json` of a dict holding Infinity, or nested 100,000 deep, is one ScenarioError naming the field (not
    a RecursionError from the schema check, nor a tool that lists Infinity)."""
    from mcp_testkit.scenario import ScenarioError, from_json

    with pytest.raises(ScenarioError) as caught:
        from_json(data, source="built")
    assert str(caught.value).startswith(f"scenario built: {problem}"), str(caught.value)
    assert "\n" not in str(caught.value)
