"""A stdio upstream that dies at once, or never answers, is refused before the proxy serves (the real `record` and
`proxy` commands, and the Python API), and the upstream's stderr is drained into a bounded tail that errors quote
instead of reaching the user's terminal."""

from __future__ import annotations

import io
import os
import select
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx2
import pytest

from mcp_testkit.cassettes import Cassette, StdioUpstream, UpstreamError, record
from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.upstream import UpstreamSession

from ._support import LIMIT_S
from .test_record import _start_record, _stop
from .upstream import stdio_command

pytestmark = pytest.mark.anyio

BANNER = "Starting default (STDIO) server..."
DIES = [sys.executable, "-c", "import sys; print('boom', file=sys.stderr); sys.exit(3)"]
RAW_SERVER = """
import json, sys
if sys.argv[1:] == ["spew"]:
    for i in range(20000):
        print(f"line {i} of what a chatty server logs", file=sys.stderr)
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "raw", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/call":
        print("Traceback (most recent call last):", file=sys.stderr)
        print("RuntimeError: the database is gone", file=sys.stderr)
        print("(exiting)", file=sys.stderr, flush=True)
        sys.exit(4)
"""
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
HEADERS = {"accept": "application/json, text/event-stream"}


def _cli(tool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", tool, *args],
        capture_output=True, text=True, timeout=LIMIT_S, cwd=cwd, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("sh -c 'echo starting >&2; echo boom >&2; exit 1'", "exited with status 1 before answering initialize: boom"),
        (shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"]),
         "exited with status 3 before answering initialize (it wrote nothing on stderr)"),
        ("node missing.js", "exited with status 1 before answering initialize: Error: Cannot find module"),
    ],
    ids=["stderr", "silent", "node"],
)  # fmt: skip
def test_record_command_refuses_an_upstream_that_dies_at_once_in_one_line(
    command: str, said: str, tmp_path: Path
) -> None:
    """`record --upstream-command` that exits before answering initialize: exit 2, one line naming the command as
    typed, its status and its stderr's telling line; nothing served, nothing written, no traceback."""
    done = _cli("record", "--upstream-command", command, "--out", "x.json", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"mcp-testkit record: the upstream command `{command}` {said}")
    assert not (tmp_path / "x.json").exists()


def test_proxy_command_refuses_an_upstream_that_dies_at_once_in_one_line(tmp_path: Path) -> None:
    """`proxy --upstream-command` that exits at once: exit 2 before its URL line, one line with the stderr's end."""
    command = "sh -c 'echo boom >&2; exit 1'"
    done = _cli("proxy", "--upstream-command", command, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        f"mcp-testkit proxy: the upstream command `{command}` exited with status 1 before answering initialize: boom"
    ]


def test_a_silent_upstream_is_refused_after_the_start_timeout(tmp_path: Path) -> None:
    """`--start-timeout` bounds the probe: a command that reads stdin and never answers is exit 2, saying so."""
    command = shlex.join([sys.executable, "-c", "import sys; sys.stdin.read()"])
    done = _cli("record", "--upstream-command", command, "--out", "x.json", "--start-timeout", "1", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"mcp-testkit record: the upstream command `{command}` did not answer initialize within 1 s (it wrote "
        "nothing on stderr)"
    ]


async def test_chaos_proxy_and_record_raise_upstream_error_at_start_with_the_stderr_tail(tmp_path: Path) -> None:
    """From Python, `ChaosProxy.start()` and `record()` raise `UpstreamError` with the CLI's text and the kept
    stderr lines; the proxy does not serve and no cassette is written."""
    proxy = ChaosProxy(upstream_command=DIES)
    with pytest.raises(UpstreamError) as raised:
        await anyio.to_thread.run_sync(proxy.start)
    assert str(raised.value) == (
        f"the upstream command `{shlex.join(DIES)}` exited with status 3 before answering initialize: boom"
    )
    assert raised.value.stderr == ["boom"]
    assert not proxy.started
    with pytest.raises(UpstreamError, match="exited with status 3 before answering initialize: boom"):
        async with record(command=DIES, out=tmp_path / "dies.json"):
            pytest.fail("record served an upstream that died at once")
    assert not (tmp_path / "dies.json").exists()


async def test_a_probe_that_meets_garbage_on_stdout_names_it(tmp_path: Path) -> None:
    """An upstream that writes a line that is not JSON-RPC and exits is refused with that line quoted."""
    command = [sys.executable, "-c", "import sys; sys.stdin.readline(); print('hello, not json', flush=True)"]
    with pytest.raises(UpstreamError) as raised:
        async with ChaosProxy(upstream_command=command, start_timeout_s=LIMIT_S):
            pytest.fail("the proxy served an upstream that answered garbage")
    assert "exited with status 0 before answering initialize" in str(raised.value)
    assert "on stdout it wrote 'hello, not json', which is not JSON-RPC" in str(raised.value)


def test_start_timeout_must_be_positive() -> None:
    """A start timeout of 0 or less is a ValueError naming it, at construction."""
    with pytest.raises(ValueError, match="start_timeout_s"):
        ChaosProxy(upstream_command=stdio_command(), start_timeout_s=0)


# -- the upstream's stderr ----------------------------------------------------------------------------------------


async def test_record_and_verify_keep_the_upstream_stderr_off_the_terminal(tmp_path: Path) -> None:
    """What a working upstream prints on stderr (a start banner) shows neither through `record` nor `verify`."""
    out = tmp_path / "quiet.json"
    command = shlex.join(["sh", "-c", f"echo '{BANNER}' >&2; exec \"$0\" \"$@\"", *stdio_command()])
    process, line = await anyio.to_thread.run_sync(
        lambda: _start_record("--upstream-command", command, "--out", str(out))
    )
    try:
        with anyio.fail_after(LIMIT_S):
            async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
                answer = await http.post(line.rsplit(" at ", 1)[1], json=INIT, headers=HEADERS)
    finally:
        status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)
    assert answer.status_code == 200
    assert status == 0, stderr
    assert BANNER not in stderr
    [only] = stderr.strip().splitlines()
    assert only.startswith("mcp-testkit record: wrote ")
    checked = await anyio.to_thread.run_sync(
        lambda: _cli("verify", str(out), "--upstream-command", command, cwd=tmp_path)
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr == ""
    assert BANNER not in checked.stdout.splitlines()  # the report names the command, which holds the text


async def test_a_server_dying_mid_session_is_recorded_with_its_stderr_line(tmp_path: Path) -> None:
    """A server that crashes on a call: the client's JSON-RPC error and the cassette's exchange name the line of
    its stderr that says why (the error line, not the last one)."""
    script = tmp_path / "raw_server.py"
    script.write_text(RAW_SERVER)
    out = tmp_path / "crash.json"
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "query", "arguments": {}}}
    async with record(command=[sys.executable, str(script)], out=out) as url:
        with anyio.fail_after(LIMIT_S):
            async with httpx2.AsyncClient(timeout=LIMIT_S) as http:
                opened = await http.post(url, json=INIT, headers=HEADERS)
                session = {**HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
                crashed = await http.post(url, json=call, headers=session)
    said = "the server process ended (exit status 4) before answering: RuntimeError: the database is gone"
    assert said in crashed.json()["error"]["message"]
    [exchange] = Cassette.load(out).requests("tools/call")
    assert exchange.error == said


def test_a_chatty_stderr_never_blocks_the_server_and_only_its_tail_is_kept(tmp_path: Path) -> None:
    """A server that writes far more than a pipe holds on stderr before serving still answers; the link keeps
    only the last lines, within the bounds."""
    script = tmp_path / "raw_server.py"
    script.write_text(RAW_SERVER)
    link = StdioUpstream([sys.executable, str(script), "spew"], timeout_s=LIMIT_S)
    try:
        opened = UpstreamSession(link).open()
    finally:
        link.close()
    assert opened["serverInfo"] == {"name": "raw", "version": "1"}
    kept = link.stderr.lines()
    assert kept[-1] == "line 19999 of what a chatty server logs"
    assert len(kept) <= link.stderr.max_lines
    assert sum(len(line) for line in kept) <= link.stderr.max_bytes


async def test_upstream_stderr_passes_the_server_stderr_through(tmp_path: Path) -> None:
    """`record --upstream-stderr` shows what the server writes on stderr; `upstream_stderr=` does from Python,
    the probe's lines included."""
    out = tmp_path / "loud.json"
    command = shlex.join(["sh", "-c", f"echo '{BANNER}' >&2; exec \"$0\" \"$@\"", *stdio_command()])
    process, _ = await anyio.to_thread.run_sync(
        lambda: _start_record("--upstream-command", command, "--out", str(out), "--upstream-stderr")
    )
    status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)
    assert status == 0, stderr
    assert BANNER in stderr.splitlines()  # the probe's process said it
    shown = io.StringIO()
    with pytest.raises(UpstreamError, match="boom"):
        async with ChaosProxy(upstream_command=DIES, upstream_stderr=shown):
            pytest.fail("the proxy served an upstream that died at once")
    assert shown.getvalue() == "boom\n"


LEAVES_A_CHILD = """
import json, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])  # inherits stdout: holds the pipe
for line in sys.stdin:  # answers initialize with its child's pid, and exits when its stdin closes
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {},
                  "serverInfo": {"name": "parent", "version": "1"}, "instructions": str(child.pid)}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
"""


@pytest.mark.skipif(
    not hasattr(os, "killpg") or not hasattr(os, "pidfd_open"),
    reason="needs process groups (os.killpg, POSIX) and os.pidfd_open (Linux) to see the child end; elsewhere a "
    "stdio server is ended alone, as before",
)
def test_closing_a_stdio_upstream_ends_what_the_server_started(tmp_path: Path) -> None:
    """A server that starts a child and exits when its stdin closes leaves the child behind, holding the pipes:
    closing the link ends the server's whole process group, so nothing it started outlives it."""
    script = tmp_path / "leaves_a_child.py"
    script.write_text(LEAVES_A_CHILD)
    link = StdioUpstream([sys.executable, str(script)], timeout_s=LIMIT_S)
    try:
        child = int(UpstreamSession(link).open()["instructions"])
        ended = os.pidfd_open(child)  # readable once the child has ended
    except BaseException:
        link.close()
        raise
    try:
        assert select.select([ended], [], [], 0)[0] == []  # the child runs
        closing = threading.Thread(target=link.close, daemon=True)  # bounded: a held pipe could block closing for good
        closing.start()
        closing.join(LIMIT_S)
        assert not closing.is_alive(), "closing the link hung while the server's child held its stdout"
        assert select.select([ended], [], [], LIMIT_S)[0] == [ended], f"the server's child {child} outlived the link"
    finally:
        os.close(ended)
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("mcp-testkit-stdio-")]
