"""`mcp-testkit proxy` as a real process: its one line, faults from a scenario file and from the admin API (the
admin routes of `serve`), the journal read back, and a command line that cannot be served refused in one line."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from mcp_testkit import TestMcpServer

from ._wire import answer, open_session, request
from .upstream import stdio_command

LIMIT_S = 60.0
LINE = re.compile(r" at (http://\S+); admin at (http://\S+) with token (\S+);")
CALL = {"name": "add", "arguments": {}}


def _start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    return subprocess.Popen(
        [sys.executable, "-m", "mcp_testkit", "proxy", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.fixture
def fake() -> Iterator[TestMcpServer]:
    server = TestMcpServer("upstream")
    server.tool("add", returns="added")
    with server:
        yield server


@contextlib.contextmanager
def _running(*args: str) -> Iterator[tuple[str, str, dict[str, str]]]:
    process = _start(*args, "--admin")
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = LINE.search(line)
        assert found, line
        yield found[1], found[2], {"authorization": f"Bearer {found[3]}"}
    finally:
        process.terminate()
        process.communicate(timeout=LIMIT_S)


def test_faults_from_a_scenario_file_and_the_admin_api(fake: TestMcpServer, tmp_path: Path) -> None:
    """A scenario's fault hits the first call; one POSTed to /_testkit/faults hits the next; the journal says so."""
    scenario = tmp_path / "faults.json"
    rule = {"fault": {"type": "ErrorResult", "text": "from the scenario"}, "method": "tools/call"}
    scenario.write_text(json.dumps({"faults": [rule]}))
    with _running("--upstream", fake.url, "--scenario", str(scenario)) as (url, admin, token):
        with httpx2.Client(timeout=LIMIT_S) as client:
            session = open_session(client, url)
            first = answer(request(client, url, session, "tools/call", CALL))["result"]
            assert first["content"][0]["text"] == "from the scenario"
            rule = {"fault": {"type": "HttpStatus", "status": 503}, "method": "tools/call"}
            posted = client.post(f"{admin}/faults", headers=token, json=rule)
            assert posted.status_code == 201
            assert request(client, url, session, "tools/call", CALL, 2).status_code == 503
            third = answer(request(client, url, session, "tools/call", CALL, 3), 3)
            assert third["result"]["content"][0]["text"] == "added"
            journal = client.get(f"{admin}/journal", headers=token, params={"method": "tools/call"}).json()
            assert [r["status"] for r in journal["records"]] == [200, 503, 200]
            assert journal["records"][1]["fault"]["type"] == "HttpStatus"
            assert client.get(f"{admin}/faults", headers=token).json() == {"rules": []}
            health = client.get(f"{admin}/health", headers=token).json()
            assert health["upstream"] == fake.url
            assert health["requests"] >= 5
            assert client.get(f"{admin}/journal").status_code == 401
        assert fake.executions("add") == 1


def test_the_admin_api_refuses_a_fault_the_proxy_cannot_apply(fake: TestMcpServer) -> None:
    """POST /_testkit/faults with a stdio-only or catalogue fault: 400 naming it and why, nothing added."""
    with _running("--upstream", fake.url) as (_, admin, token):
        with httpx2.Client(timeout=LIMIT_S) as client:
            refused = client.post(f"{admin}/faults", headers=token,
                                  json={"fault": {"type": "CatalogueChange", "add": ["x"]}})  # fmt: skip
            assert refused.status_code == 400
            assert "cannot apply CatalogueChange" in refused.json()["message"]
            assert client.get(f"{admin}/faults", headers=token).json() == {"rules": []}


def test_stdio_upstream_command(tmp_path: Path) -> None:
    """--upstream-command runs the SDK server over stdio behind the proxy; a call goes through."""
    with _running("--upstream-command", shlex.join(stdio_command())) as (url, _, _):
        with httpx2.Client(timeout=LIMIT_S) as client:
            session = open_session(client, url)
            added = request(client, url, session, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 2}})
            assert answer(added)["result"]["structuredContent"] == {"result": 4}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--upstream-command", "/nonexistent/server"], "cannot start it"),
        (["--upstream", "ftp://example.com/mcp"], "http:// or https://"),
        (["--upstream", "http://127.0.0.1:9/mcp", "--scenario", "/nonexistent.json"], "no such file"),
    ],
)
def test_a_command_line_that_cannot_be_served_is_one_line_and_exit_2(args: list[str], said: str) -> None:
    """A command that cannot start, a URL of another scheme, a missing scenario: exit 2, one line, nothing served."""
    process = _start(*args)
    out, err = process.communicate(timeout=LIMIT_S)
    assert process.returncode == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert said in err
