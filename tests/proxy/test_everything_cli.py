"""`mcp-testkit record`, `serve --cassette` and `verify` against server-everything over stdio, as a new user runs
them: the server's command typed relative to the current folder, its `get-env` dump scrubbed by a `--scrub` hook,
the cassette replayed to the SDK client, and the live server verified against it (with the same hook, and without).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from node_trees import NPM_CI_TIMEOUT_S, EverythingServer, everything_server

LIMIT_S = 60.0
SERVER = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
MARK = "everything-env-mark-5f2e"
"""A value in the recording's environment that `get-env` would dump, and the cassette must not hold."""
SCRUBBING = '''
def scrub(message):
    """Write an environment dump as a placeholder; every other message as it is."""
    result = message.get("result")
    if isinstance(result, dict) and "PATH" in str(result.get("content")):
        return {**message, "result": {**result, "content": [{"type": "text", "text": "<environment>"}]}}
    return message
'''
URL = re.compile(r"(http://127\.0\.0\.1:\d+/mcp)")

pytestmark = pytest.mark.timeout(NPM_CI_TIMEOUT_S + 4 * LIMIT_S)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A user's folder: server-everything installed under node_modules, and a scrubbing.py beside it."""
    tree: EverythingServer = everything_server()
    (tmp_path / "node_modules").symlink_to(tree.tree / "node_modules", target_is_directory=True)
    (tmp_path / "scrubbing.py").write_text(SCRUBBING)
    return tmp_path


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_testkit", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), "EVERYTHING_MARK": MARK}


@contextlib.contextmanager
def _running(folder: Path, *args: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """`mcp-testkit ARGS` run in `folder` until the block ends (SIGINT then); its URL, and a dict that then gets
    its exit status (`returncode`) and what it said on stderr (`stderr`)."""
    ended: dict[str, Any] = {}
    process = subprocess.Popen(_cli(*args), cwd=folder, env=_env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = URL.search(line)
        assert found, line + (process.stderr.read() if process.stderr and process.poll() is not None else "")
        yield found[1], ended
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            _, ended["stderr"] = process.communicate(timeout=LIMIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            _, ended["stderr"] = process.communicate(timeout=LIMIT_S)
        ended["returncode"] = process.returncode


async def _drive(url: str) -> dict[str, Any]:
    """What a user's SDK client sees: the tools, a sum, the environment tool's text, an echo."""
    with anyio.fail_after(LIMIT_S):
        async with Client(url, mode="legacy") as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            summed = (await client.call_tool("get-sum", {"a": 4, "b": 5})).content[0]
            env = (await client.call_tool("get-env", {})).content[0]
            echoed = (await client.call_tool("echo", {"message": "taped"})).content[0]
            return {"tools": tools, "sum": summed.text, "env": env.text, "echo": echoed.text}  # type: ignore[union-attr]


def test_record_serve_and_verify_server_everything(folder: Path) -> None:
    """record with --scrub: the client saw the live answers, the cassette keeps the command as typed and no
    environment; serve --cassette answers as recorded; verify finds no change with the same hook, and without it
    shows where the environment answer differs."""
    command = f"node {SERVER} stdio"
    with _running(folder, "record", "--upstream-command", command, "--out", "ev.json",
                  "--scrub", "scrubbing:scrub") as (url, recorder):  # fmt: skip
        live = anyio.run(_drive, url)
    assert recorder["returncode"] == 0, recorder["stderr"]
    assert MARK in live["env"]
    assert re.search(r"mcp-testkit record: wrote \d+ exchanges to ev.json", recorder["stderr"])
    text = (folder / "ev.json").read_text()
    cassette = json.loads(text)
    assert cassette["upstream"]["command"] == ["node", SERVER, "stdio"]
    assert MARK not in text
    assert str(folder) not in text

    with _running(folder, "serve", "--cassette", "ev.json") as (url, _):
        replayed = anyio.run(_drive, url)
    assert replayed == {**live, "env": "<environment>"}

    scrubbed = subprocess.run(_cli("verify", "ev.json", "--upstream-command", command, "--scrub", "scrubbing:scrub"),
                              cwd=folder, env=_env(), capture_output=True, text=True, timeout=LIMIT_S)  # fmt: skip
    assert scrubbed.returncode == 0, scrubbed.stderr
    assert "get-env" not in scrubbed.stdout, scrubbed.stdout
    assert "3 read-only calls sent" in scrubbed.stdout, scrubbed.stdout
    unscrubbed = subprocess.run(_cli("verify", "ev.json", "--upstream-command", command),
                                cwd=folder, env=_env(), capture_output=True, text=True, timeout=LIMIT_S)  # fmt: skip
    assert unscrubbed.returncode == 0, unscrubbed.stderr
    changed = [line for line in unscrubbed.stdout.splitlines() if "get-env" in line]
    assert len(changed) == 1, unscrubbed.stdout
    assert re.search(r"answer changed in content block 1 at character \d+: \"<environment>\" -> ", changed[0])
