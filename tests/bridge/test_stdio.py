"""Command servers (bridge-b "MCP Format" `command:`, bridge-c "Servers" `MCPServerStdio`), run against
`mcp-testkit serve --stdio` as a real child process, with its stdio fault modes.

Each server process appends to one journal file, so a test counts what every run of the server did.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_testkit.bridge import (
    BearerToken,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    ServerConfig,
    ToolCache,
    ToolPool,
)

from .conftest import LIMIT_S

pytestmark = pytest.mark.anyio

READ_TIMEOUT_S = 5.0
"""Long enough for a cold interpreter to start and answer initialize on a busy machine: the bound covers the
handshake too, so a test of a call that misses it uses this one as well (with a shorter one a slow start missed the
handshake, the restarted server no longer held its once-only fault, and the call was answered)."""


class StdioServer:
    """`mcp-testkit serve --stdio` with a Python scenario, as a config, and the journal its runs append to."""

    def __init__(self, tmp_path: Path, body: str, name: str = "scenario") -> None:
        self.path = tmp_path / f"{name}.py"
        self.journal = tmp_path / f"{name}.jsonl"
        self.marker = tmp_path / f"{name}.fired"
        source = textwrap.dedent(body).replace("MARKER", repr(str(self.marker)))
        self.path.write_text(
            "import json, os, subprocess, sys\nfrom pathlib import Path\nfrom mcp_testkit import faults\n\n" + source
        )

    def config(self, name: str = "local", **options: Any) -> ServerConfig:
        options.setdefault("read_timeout_s", READ_TIMEOUT_S)
        options.setdefault("connect_backoff_s", 0.0)
        args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(self.path), "--journal", str(self.journal)]
        return ServerConfig(name=name, command=sys.executable, args=args, **options)

    def records(self) -> list[dict[str, Any]]:
        """Every journal line of every run of the server, in order."""
        if not self.journal.exists():
            return []
        return [json.loads(line) for line in self.journal.read_text().splitlines()]

    def methods(self) -> list[str]:
        return [record["rpc_method"] for record in self.records()]

    def runs(self, tool: str) -> int:
        """How many times ``tool``'s handler ran, over every run of the server (the ledger of the journal)."""
        return sum(1 for r in self.records() if r["rpc_method"] == "tools/call" and r["tool"] == tool and r["executed"])


TOOLS = """
def scenario(server):
    server.page_size = 1
    server.tool("search", read_only=True, returns="found")
    server.tool("create", returns="created")
"""


WITH_A_CHILD = (
    TOOLS
    + """
    # A process the server starts, in its process group; the tool "pids" names both.
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    server.tool("pids", read_only=True, returns=json.dumps({"server": os.getpid(), "child": child.pid}))
"""
)


def _once(fault: str, tool: str) -> str:
    """A scenario whose first run of the server meets ``fault`` on ``tool``; later runs (restarts) do not."""
    return (
        TOOLS
        + f"""
    if not Path(MARKER).exists():
        Path(MARKER).touch()
        server.inject({fault}, tool={tool!r})
"""
    )


def _gone(pid: int) -> bool:
    """Whether ``pid`` is no child of this process any more: exited and reaped, so no zombie is left of it."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test saw started; any still alive at the end is killed, so a failing test leaks nothing."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


async def test_bridge_b_mcp_format_command_server_lists_every_page_and_calls(tmp_path: Path) -> None:
    """A command server is started at entry, listed page by page over stdio, called, and stopped at exit."""
    server = StdioServer(tmp_path, TOOLS)
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            assert [tool.name for tool in pool.tools()] == ["local.search", "local.create"]
            assert pool.era("local") == "handshake"
            assert pool.session_id("local") is None  # no HTTP session: the process is the session
            assert await pool.call("local.create", {"title": "x"}) == "created"
    assert server.methods() == ["initialize", "notifications/initialized", "tools/list", "tools/list", "tools/call"]
    assert server.records()[-1]["executed"] is True


@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan"), True, "30"])
def test_bridge_b_mcp_format_read_timeout_must_be_positive_and_finite(value: Any) -> None:
    """A read_timeout_s that is not a positive, finite number fails when the config is built, naming the server."""
    with pytest.raises(ValueError, match=r"server 'local': read_timeout_s must be a positive, finite number"):
        ServerConfig(name="local", command="mcp-server-files", read_timeout_s=value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "give url= .* or command= .*, one of them"),
        ({"url": "http://127.0.0.1/mcp", "command": "srv"}, "not both"),
        ({"url": "http://127.0.0.1/mcp", "args": ["--root"]}, "args= and env= belong to a command server"),
        ({"command": "srv", "auth": BearerToken(env="TOKEN")}, "give its credentials in env="),
        ({"command": "srv", "era": "stateless"}, "handshake era only"),
        ({"command": ""}, "command must be the executable to run"),
        ({"url": "localhost:3001/mcp"}, r"url must be an http:// or https:// URL with a host .*'localhost:3001/mcp'"),
        ({"url": "ftp://127.0.0.1/mcp"}, "url must be an http:// or https:// URL"),
        ({"url": "http:///mcp"}, "url must be an http:// or https:// URL with a host"),
        ({"url": "https://user:pw@example.test/mcp?token=t"}, None),
    ],
)
def test_bridge_b_mcp_format_a_server_is_a_url_or_a_command(options: dict[str, Any], message: str | None) -> None:
    """A server uses either an HTTP url (with a scheme and a host) or a local stdio command, and only a command
    takes args and env; a URL's credentials never reach the message."""
    if message is None:
        assert ServerConfig(name="local", **options).url == options["url"]
        return
    with pytest.raises(ValueError, match=message) as raised:
        ServerConfig(name="local", **options)
    assert "pw" not in str(raised.value)


def test_bridge_b_mcp_format_repr_shows_the_names_of_env_never_its_values() -> None:
    """A config's repr names the command, its arguments and its variables, never a variable's value."""
    config = ServerConfig(name="files", command="mcp-server-files", args=["--root", "/tmp"], env={"TOKEN": "s3cret"})
    shown = repr(config)
    assert "command='mcp-server-files', args=['--root', '/tmp'], env={'TOKEN': '…'}" in shown
    assert "s3cret" not in shown


async def test_bridge_b_mcp_format_read_timeout_stops_a_server_that_misses_it(
    tmp_path: Path, leftovers: list[int]
) -> None:
    """A call unanswered within read_timeout_s, its server busy sending notifications, stops the server's group.

    The notifications do not extend the bound; the write's outcome is unknown (never resent); the server and
    the process it started are gone, reaped; the next call starts the server again.
    """
    server = StdioServer(
        tmp_path,
        WITH_A_CHILD
        + """
    @server.tool("chatty")
    async def chatty(arguments, context):
        import anyio
        for step in range(10_000):
            await context.log("info", f"still working ({step})")
            await anyio.sleep(0.05)
        return "never"
""",
    )
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            pids = json.loads(await pool.call("local.pids"))
            leftovers.extend(pids.values())
            child = os.pidfd_open(pids["child"])
            try:
                with pytest.raises(MCPCallOutcomeUnknown) as raised:
                    await pool.call("local.chatty")
                message = str(raised.value)
                assert message.startswith("server 'local': call to 'local.chatty' was sent but the server did not ")
                bound = f"answer tools/call within read_timeout_s={READ_TIMEOUT_S}s"
                assert f"{bound}, so it was stopped; it may have run" in message
                assert _gone(pids["server"])
                await anyio.wait_readable(child)  # the process the server started is gone with it
                assert await pool.call("local.search") == "found"  # a new run of the server
            finally:
                os.close(child)
    assert server.methods().count("initialize") == 2
    assert server.runs("chatty") == 1


async def test_bridge_b_mcp_format_server_pings_are_answered_meanwhile(tmp_path: Path) -> None:
    """A server that pings the bridge before answering gets `{}` for its ping, then answers the call."""
    script = tmp_path / "pinging.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, sys

            def send(message):
                sys.stdout.write(json.dumps(message) + "\\n")
                sys.stdout.flush()

            for line in sys.stdin:
                message = json.loads(line)
                method, ident = message.get("method"), message.get("id")
                if method == "initialize":
                    send({"jsonrpc": "2.0", "id": ident, "result": {"protocolVersion": "2025-06-18",
                          "capabilities": {"tools": {}}, "serverInfo": {"name": "pinging", "version": "1"}}})
                elif method == "tools/list":
                    send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [
                          {"name": "echo", "inputSchema": {"type": "object"}}]}})
                elif method == "tools/call":
                    send({"jsonrpc": "2.0", "id": "ping-1", "method": "ping"})
                    pong = json.loads(sys.stdin.readline())
                    text = "pong " + json.dumps(pong, sort_keys=True)
                    send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
            """
        )
    )
    config = ServerConfig(name="pinging", command=sys.executable, args=[str(script)], read_timeout_s=READ_TIMEOUT_S)
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([config], cache=False) as pool:
            answer = await pool.call("pinging.echo")
    assert answer == 'pong {"id": "ping-1", "jsonrpc": "2.0", "result": {}}'


async def test_bridge_b_mcp_format_malformed_line_fails_a_write_as_outcome_unknown(tmp_path: Path) -> None:
    """MalformedLine: a write answered by a line that is not JSON ran, may have run for the bridge, is not resent."""
    server = StdioServer(tmp_path, TOOLS + '\n    server.inject(faults.MalformedLine(), tool="create")\n')
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            with pytest.raises(MCPCallOutcomeUnknown, match="wrote a line that is not JSON while tools/call waited"):
                await pool.call("local.create")
            assert await pool.call("local.search") == "found"  # the same run of the server answers on
    assert server.runs("create") == 1
    assert server.methods().count("initialize") == 1


async def test_bridge_b_mcp_format_malformed_line_resends_a_read(tmp_path: Path) -> None:
    """MalformedLine: a read answered by a line that is not JSON is sent again, within its budget, and answered."""
    server = StdioServer(tmp_path, TOOLS + '\n    server.inject(faults.MalformedLine(), tool="search")\n')
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            assert await pool.call("local.search") == "found"
    assert server.runs("search") == 2


@pytest.mark.parametrize("fault", ["faults.Exit(code=3)", "faults.Crash()"])
async def test_bridge_b_mcp_format_server_that_dies_is_started_again_for_a_read(tmp_path: Path, fault: str) -> None:
    """Exit and Crash: a read whose server died before answering starts the server again and is answered."""
    server = StdioServer(tmp_path, _once(fault, "search"))
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            assert await pool.call("local.search") == "found"
    assert server.methods().count("initialize") == 2
    assert server.runs("search") == 1


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("faults.Exit(code=3, after_execution=True)", "exited with status 3 before answering tools/call"),
        ("faults.Crash(after_execution=True)", "was killed by SIGKILL before answering tools/call"),
    ],
)
async def test_bridge_b_mcp_format_write_whose_server_died_is_outcome_unknown(
    tmp_path: Path, fault: str, said: str
) -> None:
    """Exit and Crash after the write ran: it may have run, so it is outcome-unknown and never resent."""
    server = StdioServer(tmp_path, _once(fault, "create") + '\n    server.tool("pid", returns=str(os.getpid()))\n')
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            pid = int(await pool.call("local.pid"))
            with pytest.raises(MCPCallOutcomeUnknown, match=said):
                await pool.call("local.create")
            assert _gone(pid), "the dead server was reaped"
            assert await pool.call("local.search") == "found"
    assert server.runs("create") == 1


async def test_bridge_a_resilience_write_whose_server_exited_between_calls_starts_it_then_sends(
    tmp_path: Path,
) -> None:
    """A call that finds its command server gone (it exited while idle) starts it again first, then sends once."""
    server = StdioServer(
        tmp_path,
        TOOLS
        + """
    import threading
    server.tool("pid", returns=str(os.getpid()))
    server.tool("quit", returns=lambda arguments: (threading.Timer(0.1, os._exit, [0]).start(), "bye")[1])
""",
    )
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            pidfd = os.pidfd_open(int(await pool.call("local.pid")))
            try:
                assert await pool.call("local.quit") == "bye"
                await anyio.wait_readable(pidfd)  # the server has exited by itself
            finally:
                os.close(pidfd)
            assert await pool.call("local.create") == "created"
    assert server.methods().count("initialize") == 2
    assert server.runs("create") == 1


async def test_bridge_b_mcp_format_pool_exit_stops_the_process_group(tmp_path: Path, leftovers: list[int]) -> None:
    """At exit the server gets EOF and exits; what it started in its group is stopped too, and nothing is a zombie."""
    server = StdioServer(
        tmp_path,
        WITH_A_CHILD,
    )
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            pids = json.loads(await pool.call("local.pids"))
            leftovers.extend(pids.values())
            child = os.pidfd_open(pids["child"])
        try:
            assert _gone(pids["server"])
            await anyio.wait_readable(child)
        finally:
            os.close(child)


async def test_bridge_b_mcp_format_command_that_cannot_start_fails_at_connect_without_retries(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A command that does not exist fails start-up at once with MCPConnectionError naming it; nothing is retried."""
    config = ServerConfig(name="local", command=str(tmp_path / "no-such-server"), connect_backoff_s=30.0)
    caplog.set_level(logging.INFO, logger="mcp_testkit.bridge")
    with anyio.fail_after(LIMIT_S), pytest.raises(MCPConnectionError) as raised:
        async with ToolPool([config], cache=False):
            pass
    assert str(raised.value).startswith("server 'local': handshake failed: the server could not be started (")
    assert "no-such-server" in str(raised.value)
    assert not [record for record in caplog.records if "retrying" in record.getMessage()]


ENVIRONMENT = """
def scenario(server):
    server.tool("environment", read_only=True, returns=lambda arguments: json.dumps(sorted(os.environ)))
"""


async def test_bridge_c_servers_env_replaces_the_inherited_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without env= the server inherits this process's environment; with env= it gets that environment only."""
    monkeypatch.setenv("MCP_TESTKIT_INHERITED", "yes")
    server = StdioServer(tmp_path, ENVIRONMENT)
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config("inherits"), server.config("own", env={"ONLY": "this"})]) as pool:
            inherited = json.loads(await pool.call("inherits.environment"))
            own = json.loads(await pool.call("own.environment"))
    assert "MCP_TESTKIT_INHERITED" in inherited
    assert "PATH" in inherited
    assert "ONLY" in own
    assert not {"MCP_TESTKIT_INHERITED", "PATH", "HOME"} & set(own)


async def test_bridge_b_what_it_costs_caches_a_command_server_by_command_arguments_and_environment(
    tmp_path: Path,
) -> None:
    """A cached listing is reused for the same command, arguments and env; another env is listed anew."""
    server = StdioServer(tmp_path, TOOLS)
    first, other = server.config(env={"TOKEN": "s3cret-1"}), server.config(env={"TOKEN": "s3cret-2"})
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([first]):
            pass
        async with ToolPool([other]):
            pass
        started = server.methods().count("initialize")
        async with ToolPool([first]) as pool:
            assert [tool.name for tool in pool.tools()] == ["local.search", "local.create"]
            assert server.methods().count("initialize") == started, "a hit starts no server"
            assert await pool.call("local.search") == "found"
    assert started == 2
    assert server.methods().count("initialize") == 3
    assert len(ToolCache.keys()) == 2
    assert all("s3cret" not in repr(key) for key in ToolCache.keys())


async def test_an_abandoned_call_is_cancelled_on_stdio_and_a_late_answer_is_skipped(tmp_path: Path) -> None:
    """Stdio: the application's cancel scope ends a call; the bridge writes notifications/cancelled with its id,
    the server's late answer to it is skipped, and the next call gets its own answer."""
    server = StdioServer(
        tmp_path,
        TOOLS
        + """
    server.inject(faults.LateAnswer(seconds=0.5), tool="search", times=1)
""",
    )
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            with anyio.move_on_after(0.2):
                await pool.call("local.search", {"q": "first"})
            assert await pool.call("local.create", {"title": "x"}) == "created"
    records = server.records()
    [first] = [r for r in records if r["rpc_method"] == "tools/call" and r["tool"] == "search"]
    [note] = [r for r in records if r["rpc_method"] == "notifications/cancelled"]
    assert note["message"]["params"]["requestId"] == first["rpc_id"]


async def test_bridge_b_mcp_format_a_server_that_stops_reading_is_bounded_by_read_timeout(
    tmp_path: Path, leftovers: list[int]
) -> None:
    """A server that stops reading its input at a call (StopReading) costs the call read_timeout_s, no more: the
    write's outcome is unknown, the server is stopped, and the next call starts it again (P11 over stdio)."""
    server = StdioServer(tmp_path, _once("faults.StopReading()", "create"))
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([server.config()], cache=False) as pool:
            started = anyio.current_time()
            with pytest.raises(MCPCallOutcomeUnknown, match=rf"within read_timeout_s={READ_TIMEOUT_S}s"):
                await pool.call("local.create")
            took = anyio.current_time() - started
            assert await pool.call("local.search") == "found"
    assert took < READ_TIMEOUT_S + 5.0  # generous: the bound is the read timeout, not the end of the server
    assert server.methods().count("initialize") == 2
