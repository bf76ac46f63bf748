"""Recording: the proxy in front of the real SDK server (HTTP and stdio), what a cassette keeps of each exchange,
secrets that never reach the file, and `mcp-testkit record` as a real process stopped by a signal."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from mcp_testkit.cassettes import Cassette, CassetteError, record
from mcp_testkit.cassettes._redact import Redactor, save
from mcp_testkit.upstream import Exchange, Tape

from ._support import LIMIT_S, REDACT, SECRET_TOKEN, sdk_http_answers
from .upstream import ACCOUNT, stdio_command

pytestmark = pytest.mark.anyio

START_TIMEOUT_S = 30.0


def _http() -> httpx2.AsyncClient:
    """A client that waits as long as the test's limit: a stdio server starting under load can take seconds."""
    return httpx2.AsyncClient(timeout=LIMIT_S)


# -- what a cassette keeps -----------------------------------------------------------------------------------------


def test_http_cassette_keeps_each_exchange_at_the_json_rpc_level(http_tape: tuple[Path, Any]) -> None:
    """Method, params, result or error, status, framing, the headers that matter, events, sessions and timings."""
    cassette = Cassette.load(http_tape[0])
    methods = [exchange.method for exchange in cassette]
    assert methods[:2] == ["initialize", "notifications/initialized"]
    assert methods.count("tools/list") == 4  # every page of eight tools, two a page
    assert methods.count("tools/call") == 9
    assert cassette.upstream["transport"] == "http"
    assert cassette.eras == ["handshake"]
    assert [e.seq for e in cassette] == list(range(1, len(cassette) + 1))
    assert all(e.elapsed_ms >= 0 and e.at_ms >= 0 for e in cassette)
    assert [e.at_ms for e in cassette] == sorted(e.at_ms for e in cassette)
    init = cassette.exchanges[0]
    assert init.http is not None
    assert (init.http.method, init.http.status, init.http.framing) == ("POST", 200, "sse")
    assert init.http.response_headers["mcp-session-id"] == "s1"  # a stable placeholder, not the random id
    assert init.result is not None
    assert init.result["serverInfo"] == {"name": "upstream-demo", "version": "1.2.3"}
    assert {e.session for e in cassette if e.request is not None} == {"s1"}
    fail = next(e for e in cassette.requests("tools/call") if e.params["name"] == "fail")
    assert fail.result is not None
    assert fail.result["isError"] is True
    listed = cassette.requests("tools/list")
    assert [e.params.get("cursor") for e in listed] == [None, "2", "4", "6"]
    deleted = [e for e in cassette if e.http is not None and e.http.method == "DELETE"]
    assert len(deleted) == 1
    assert deleted[0].http is not None
    assert deleted[0].http.status == 200


def test_events_sent_during_a_call_are_kept_in_order(tape: tuple[Path, Any]) -> None:
    """The progress notifications and the log message the server sent during a call are kept, in order."""
    cassette = Cassette.load(tape[0])
    count = next(e for e in cassette.requests("tools/call") if e.params["name"] == "slow_count")
    token = count.params["_meta"]["progressToken"]
    assert [(m["method"], m["params"].get("progress")) for m in count.events] == [
        ("notifications/progress", 1),
        ("notifications/progress", 2),
        ("notifications/progress", 3),
        ("notifications/message", None),
    ]
    assert all(m["params"]["progressToken"] == token for m in count.events[:3])


def test_stdio_cassette_names_its_command_and_process_session(stdio_tape: tuple[Path, Any]) -> None:
    """A stdio recording keeps the command, the JSON-RPC exchanges with no HTTP part, one session per process."""
    cassette = Cassette.load(stdio_tape[0])
    assert cassette.upstream == {"transport": "stdio", "command": stdio_command()}
    assert all(e.transport == "stdio" and e.http is None for e in cassette)
    assert {e.session for e in cassette} == {"s1"}
    assert cassette.requests("initialize")[0].protocol_version == "2025-11-25"


async def test_stateless_era_exchanges_are_recorded_with_their_era(upstream_url: str, tmp_path: Path) -> None:
    """The SDK client in auto mode speaks 2026-07-28 to the SDK server: each exchange says so, and keeps _meta."""
    out = tmp_path / "stateless.json"
    async with record(upstream_url, out=out) as proxy:
        with anyio.fail_after(LIMIT_S):
            async with Client(proxy) as client:
                await client.call_tool("add", {"a": 2, "b": 3})
    cassette = Cassette.load(out)
    assert cassette.eras == ["stateless"]
    assert cassette.exchanges[0].method == "server/discover"
    assert {e.protocol_version for e in cassette} == {"2026-07-28"}
    call = cassette.requests("tools/call")[-1]
    assert call.http is not None
    assert call.http.request_headers["mcp-method"] == "tools/call"
    assert call.http.request_headers["mcp-name"] == "add"
    assert call.params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


@pytest.mark.parametrize("where", ["http", "stdio"])
async def test_server_requests_during_a_call_reach_the_client_and_are_recorded(
    where: str, upstream_url: str, tmp_path: Path
) -> None:
    """An elicitation the server sends during a call reaches the client, and the server its answer; both are kept."""
    import mcp_types

    asked: list[str] = []

    async def answer(context: Any, params: Any) -> mcp_types.ElicitResult:
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"ok": True})

    out = tmp_path / "ask.json"
    upstream = {"upstream": upstream_url} if where == "http" else {"command": stdio_command()}
    async with record(out=out, **upstream) as proxy:  # type: ignore[arg-type]
        with anyio.fail_after(LIMIT_S):
            async with Client(proxy, mode="legacy", elicitation_callback=answer) as client:
                result = await client.call_tool("confirm", {"item": "lamp"})
    assert result.content[0].text == "ordered lamp"  # type: ignore[union-attr]
    assert asked == ["Order lamp?"]
    cassette = Cassette.load(out)
    call = cassette.requests("tools/call")[0]
    (question,) = call.events
    assert question["method"] == "elicitation/create"
    replies = [
        e
        for e in cassette
        if isinstance(e.request, dict) and "method" not in e.request and e.request["id"] == question["id"]
    ]
    assert [r.request["result"] for r in replies] == [{"action": "accept", "content": {"ok": True}}]
    assert replies[0].seq > call.seq  # sent while the call waited for it
    from mcp_testkit import TestMcpServer

    (recorded,) = cassette.calls("confirm")  # linked: the replay asks it again (tests/cassettes/test_input_rounds.py)
    assert [(i["key"], i["answer"]) for i in recorded.inputs] == [
        ("elicit-1", {"action": "accept", "content": {"ok": True}})
    ]
    replay = TestMcpServer.from_cassette(out)
    assert not any("does not send them" in note for note in replay.notes)


# -- secrets -------------------------------------------------------------------------------------------------------


async def test_credentials_and_redacted_values_never_reach_the_file(upstream_url: str, tmp_path: Path) -> None:
    """A credential header, a --redact match and a known token shape in an answer are not in the file, in any form."""
    credential = "Bearer sk-live-credential-7f3a9c2e1d"
    out = tmp_path / "secret.json"
    async with record(upstream_url, out=out, redact=REDACT) as proxy:
        headers = {"Authorization": credential, "X-Api-Key": "key-4c1f8e2a9b"}
        with anyio.fail_after(LIMIT_S):
            async with httpx2.AsyncClient(headers=headers) as http:
                from mcp.client.streamable_http import streamable_http_client

                async with Client(streamable_http_client(proxy, http_client=http), mode="legacy") as client:
                    answer = await client.call_tool("account", {})
    assert ACCOUNT in answer.content[0].text  # type: ignore[union-attr]  # the client got the real answer
    text = out.read_text()
    for secret in (credential, credential.split()[1], "key-4c1f8e2a9b", ACCOUNT, SECRET_TOKEN):
        assert secret not in text
        assert json.dumps(secret)[1:-1] not in text
    cassette = Cassette.load(out)
    sent = cassette.exchanges[0].http
    assert sent is not None
    assert sent.request_headers["authorization"] == "<redacted:authorization>"  # its name stands in
    assert sent.request_headers["x-api-key"] == "<redacted:x-api-key>"
    account = cassette.requests("tools/call")[-1].result
    assert account is not None
    assert account["content"][0]["text"] == "account <redacted:1> with token <redacted:2>"
    assert cassette.redactions == {
        "headers": ["authorization", "x-api-key"],
        "patterns": REDACT,
        "known_shapes": True,
        "placeholders": 2,
    }


def test_a_file_still_holding_a_secret_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    """The scan on save refuses a cassette where a secret sits where redaction does not reach, naming no value."""
    tape = Tape()
    # A secret as a JSON-RPC id: not a string, so redaction leaves it; the scan still finds it.
    request = {"jsonrpc": "2.0", "id": 918273645, "method": "ping"}
    tape.add(Exchange(1, 0.0, 1.0, "stdio", "handshake", "2025-11-25", request, None))
    out = tmp_path / "leak.json"
    redactor = Redactor(secrets=["918273645"])
    with pytest.raises(CassetteError) as refused:
        save(Cassette.from_tape(tape, {"transport": "stdio", "command": ["x"]}), out, redactor)
    assert "refusing to write cassette" in str(refused.value)
    assert "918273645" not in str(refused.value)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file left either


def test_known_token_shapes_and_patterns_get_stable_placeholders() -> None:
    """The same value gets the same placeholder wherever it appears; a placeholder is never redacted again."""
    redactor = Redactor([r"acct-\d+"])
    first = redactor.json({"a": "acct-1 and ghp_" + "x" * 36, "b": ["acct-1", "AKIAABCDEFGHIJKLMNOP"]})
    assert first == {
        "a": "<redacted:1> and <redacted:2>",
        "b": ["<redacted:1>", "<redacted:3>"],
    }
    assert redactor.text("<redacted:1> acct-22") == "<redacted:1> <redacted:4>"


def test_credential_headers_are_known_by_name() -> None:
    """Cassettes redact by the journal's one policy: credentials by name; MCP's own headers and challenges are kept."""
    redactor = Redactor()
    secret = ("Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "X-Auth-Token", "X-Password")
    for name in secret:
        assert redactor.header(name, f"value-of-{name}") == f"<redacted:{name.lower()}>", name
    kept = ("Mcp-Session-Id", "MCP-Protocol-Version", "WWW-Authenticate", "Content-Type", "Accept")
    for name in kept:
        assert redactor.header(name, f"value-of-{name}") == f"value-of-{name}", name


def test_upstream_url_loses_user_info_and_key_parameters() -> None:
    """A URL's user:password and credential-named query values are replaced before it is written."""
    redactor = Redactor()
    written = redactor.url("https://me:pw123456@example.com/mcp?api_key=abcdef123&region=eu")
    assert written == "https://<redacted:userinfo>@example.com/mcp?api_key=<redacted:api_key>&region=eu"


def test_a_bad_redact_pattern_is_named() -> None:
    """A --redact value that is no regular expression is a CassetteError naming it."""
    with pytest.raises(CassetteError, match=r"--redact '\(unclosed' is not a regular expression"):
        Redactor(["(unclosed"])


# -- failures on the way ------------------------------------------------------------------------------------------


async def test_unreachable_upstream_is_a_502_with_a_json_rpc_error_and_is_recorded(tmp_path: Path) -> None:
    """When the upstream does not answer, the client gets 502 and a JSON-RPC error naming it; the cassette says so."""
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    out = tmp_path / "dead.json"
    message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with record(dead, out=out) as proxy, _http() as http:
        with anyio.fail_after(LIMIT_S):
            answer = await http.post(proxy, json=message, headers={"accept": "application/json, text/event-stream"})
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == -32603
    assert f"upstream {dead} did not answer" in answer.json()["error"]["message"]
    exchange = Cassette.load(out).exchanges[0]
    assert exchange.request == message
    assert exchange.error is not None
    assert exchange.error.startswith("the upstream did not answer")


async def _raw_post(url: str, head: str, body: bytes) -> bytes:
    """POST `body` with exactly the header lines `head` (no Host unless given), over a plain socket; the status line."""
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    async with await anyio.connect_tcp(host, int(port)) as stream:
        await stream.send(f"POST /mcp HTTP/1.1\r\n{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        answer = b""
        while b"\r\n" not in answer:
            answer += await stream.receive()
    return answer.split(b"\r\n", 1)[0]


async def test_a_foreign_host_origin_or_content_type_never_reaches_the_upstream(tmp_path: Path) -> None:
    """DNS rebinding and cross-site POSTs are refused before forwarding: the upstream never sees them or the token."""
    from mcp_testkit import TestMcpServer

    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
    accept = "Accept: application/json, text/event-stream\r\n"
    async with TestMcpServer(eras=("stateless",)) as upstream:
        credential = {"Authorization": "Bearer sk-live-credential-7f3a9c2e1d"}
        async with record(upstream.url, out=tmp_path / "r.json", headers=credential) as proxy:
            authority = proxy.split("//", 1)[1].split("/", 1)[0]
            json_type = "Content-Type: application/json\r\n"
            with anyio.fail_after(LIMIT_S):
                statuses = [
                    await _raw_post(proxy, f"Host: evil.example\r\n{json_type}{accept}", ping),
                    await _raw_post(proxy, f"Host: {authority}\r\nOrigin: http://evil.example\r\n{json_type}{accept}",
                                    ping),
                    await _raw_post(proxy, f"{json_type}{accept}", ping),  # no Host at all
                    await _raw_post(proxy, f"Host: {authority}\r\nContent-Type: text/plain\r\n{accept}", ping),
                ]  # fmt: skip
                assert upstream.journal.records == []
                good = await _raw_post(proxy, f"Host: {authority}\r\n{json_type}{accept}", ping)
    assert [line.split(b" ")[1] for line in statuses] == [b"421", b"403", b"400", b"415"]
    assert good.split(b" ")[1] != b"421"
    [seen] = upstream.journal.records
    assert seen.headers.get("authorization") is not None  # the credential went only with the good request


async def test_stdio_gateway_refuses_requests_without_a_session(tmp_path: Path) -> None:
    """In front of a stdio server, a request before initialize is 400, an unknown session 404, a GET 405."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"accept": "application/json, text/event-stream"}
    async with record(command=stdio_command(), out=tmp_path / "s.json") as proxy, _http() as http:
        with anyio.fail_after(LIMIT_S):
            missing = await http.post(proxy, json=ping, headers=headers)
            unknown = await http.post(proxy, json=ping, headers={**headers, "mcp-session-id": "nope"})
            stream = await http.get(proxy, headers={"accept": "text/event-stream"})
    assert (missing.status_code, unknown.status_code, stream.status_code) == (400, 404, 405)


async def test_stdio_gateway_answers_a_stateless_error_with_the_status_of_its_code(tmp_path: Path) -> None:
    """A 2026-07-28 request the stdio server refuses gets the status its era gives the code (-32601: 404), recorded."""
    from mcp_testkit._wire.eras import stateless_headers, stateless_params

    params = stateless_params({})
    message = {"jsonrpc": "2.0", "id": 7, "method": "no/such", "params": params}
    headers = {"accept": "application/json, text/event-stream", **stateless_headers("no/such", params)}
    out = tmp_path / "s.json"
    async with record(command=stdio_command(), out=out) as proxy, _http() as http:
        with anyio.fail_after(LIMIT_S):
            refused = await http.post(proxy, json=message, headers=headers)
    assert refused.status_code == 404
    assert refused.json()["error"]["code"] == -32601
    [exchange] = Cassette.load(out).exchanges
    assert (exchange.era, exchange.rpc_error) == ("stateless", refused.json()["error"])


async def test_the_stdio_gateway_runs_at_most_max_processes_and_refuses_more_with_a_503(tmp_path: Path) -> None:
    """Sessions past `max_processes` get a 503 naming the limit and start no process; ending one frees a place."""
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
    headers = {"accept": "application/json, text/event-stream"}
    out = tmp_path / "limit.json"
    async with record(command=stdio_command(), out=out, max_processes=2) as proxy, _http() as http:
        with anyio.fail_after(LIMIT_S):
            answers = [await http.post(proxy, json=init, headers=headers) for _ in range(4)]
            assert [answer.status_code for answer in answers] == [200, 200, 503, 503]
            assert len(_children()) == 2
            assert "at most 2 server processes" in answers[2].json()["error"]["message"]
            ended = await http.delete(proxy, headers={"mcp-session-id": answers[0].headers["mcp-session-id"]})
            again = await http.post(proxy, json=init, headers=headers)
    assert (ended.status_code, again.status_code) == (200, 200)


async def test_a_stopped_recording_leaves_no_thread_port_or_process_behind(tmp_path: Path) -> None:
    """A recording stopped with a session still open ends its server process, threads and port."""
    import socket

    before = set(threading.enumerate())  # threads, not idents: an ended thread's ident is reused
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
    async with record(command=stdio_command(), out=tmp_path / "gone.json") as proxy, _http() as http:
        with anyio.fail_after(LIMIT_S):
            opened = await http.post(proxy, json=init, headers={"accept": "application/json, text/event-stream"})
        assert opened.status_code == 200
        assert len(_children()) == 1  # the server process of the session, left open by the client
        ours = [t.name for t in threading.enumerate() if t not in before]
        assert any(name.startswith("mcp-testkit-server") for name in ours)  # the proxy
        assert any(name.startswith("mcp-testkit-stdio") for name in ours)  # the reader of the process
    # Ours are named mcp-testkit-*; anyio keeps its idle worker threads for the loop's next use.
    assert [t.name for t in threading.enumerate() if t not in before and t.name.startswith("mcp-testkit")] == []
    port = int(proxy.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    assert _children() == []


def _children() -> list[int]:
    """The live child processes of this process (Linux)."""
    pid = os.getpid()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def test_record_needs_exactly_one_upstream(tmp_path: Path) -> None:
    """Neither or both of a URL and a command, or a URL that is not http(s), is refused, saying why."""
    from mcp_testkit.cassettes import Recording

    with pytest.raises(ValueError, match="exactly one upstream"):
        Recording(out=tmp_path / "x.json")
    with pytest.raises(ValueError, match="exactly one upstream"):
        Recording("http://127.0.0.1:1/mcp", command=["x"], out=tmp_path / "x.json")
    with pytest.raises(ValueError, match="http:// or https://"):
        Recording("ftp://example.com/mcp", out=tmp_path / "x.json")


# -- mcp-testkit record, a real process --------------------------------------------------------------------------


def _start_record(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """`mcp-testkit record ARGS` as a process, and the proxy URL from the one line it prints."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_testkit", "record", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    assert process.stdout is not None
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(START_TIMEOUT_S)
    if reader.is_alive() or not lines or not lines[0]:
        process.kill()
        process.communicate(timeout=START_TIMEOUT_S)
        raise AssertionError("mcp-testkit record printed no line")
    return process, lines[0].decode().strip()


def _stop(process: subprocess.Popen[bytes], sig: int) -> tuple[int, str]:
    process.send_signal(sig)
    try:
        _, stderr = process.communicate(timeout=START_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate(timeout=START_TIMEOUT_S)
        raise
    return process.returncode, stderr.decode()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_record_command_prints_its_line_and_writes_the_cassette_on_a_signal(
    sig: int, upstream_url: str, tmp_path: Path
) -> None:
    """`record` prints `recording <upstream> at http://127.0.0.1:PORT/mcp`; SIGINT or SIGTERM writes the file."""
    out = tmp_path / "cli.json"
    process, line = await anyio.to_thread.run_sync(lambda: _start_record("--upstream", upstream_url, "--out", str(out)))
    try:
        prefix = f"recording {upstream_url} at http://127.0.0.1:"
        assert line.startswith(prefix)
        assert line.endswith("/mcp")
        proxy = line.rsplit(" at ", 1)[1]
        answers = await sdk_http_answers(proxy, [("add", {"a": 1, "b": 1})])
    finally:
        status, stderr = await anyio.to_thread.run_sync(_stop, process, sig)
    assert answers["0:add"]["structuredContent"] == {"result": 2}
    assert status == 0, stderr
    assert "wrote" in stderr
    cassette = Cassette.load(out)
    assert [e.method for e in cassette][:2] == ["initialize", "notifications/initialized"]
    assert cassette.requests("tools/call")[0].result == {
        "content": [{"type": "text", "text": "2"}],
        "structuredContent": {"result": 2},
        "isError": False,
    }


@pytest.fixture
def env_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UP_TOKEN", "tok-5e6f7a8b9c")


async def test_record_command_upstream_header_from_env_is_sent_and_redacted(
    upstream_url: str, tmp_path: Path, env_token: None
) -> None:
    """`--header "X-Token: env:UP_TOKEN"` reaches the upstream on every request; its value never the file."""
    out = tmp_path / "cli.json"
    process, line = await anyio.to_thread.run_sync(
        lambda: _start_record("--upstream", upstream_url, "--out", str(out), "--header", "X-Token: env:UP_TOKEN")
    )
    try:
        await sdk_http_answers(line.rsplit(" at ", 1)[1], [("add", {"a": 1, "b": 1})])
    finally:
        status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)
    assert status == 0, stderr
    assert "tok-5e6f7a8b9c" not in out.read_text()
    headers = [e.http.request_headers for e in Cassette.load(out) if e.http is not None]
    assert all(h["x-token"] == "<redacted:x-token>" for h in headers)


def test_record_command_refuses_a_bad_command_line(tmp_path: Path) -> None:
    """A missing env variable for --header, and no upstream at all, exit 2 with one line naming the problem."""
    unset = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "record", "--upstream", "http://127.0.0.1:1/mcp", "--out", "x.json",
         "--header", "Authorization: env:MCP_TESTKIT_SURELY_UNSET"],
        capture_output=True, text=True, timeout=START_TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert unset.returncode == 2
    assert unset.stderr.strip() == (
        "mcp-testkit record: --header Authorization: the environment variable MCP_TESTKIT_SURELY_UNSET is not set"
    )
    nothing = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "record", "--out", "x.json"],
        capture_output=True, text=True, timeout=START_TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert nothing.returncode == 2
    assert "--upstream" in nothing.stderr
    assert not (tmp_path / "x.json").exists()


def test_record_command_refuses_an_upstream_command_that_cannot_start(tmp_path: Path) -> None:
    """`record --upstream-command` with a program that does not exist exits 2 with one line, before serving."""
    missing = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "record", "--upstream-command", str(tmp_path / "no-such-server"),
         "--out", "x.json"],
        capture_output=True, text=True, timeout=START_TIMEOUT_S, cwd=tmp_path,
    )  # fmt: skip
    assert missing.returncode == 2
    assert missing.stdout == ""
    [line] = missing.stderr.strip().splitlines()
    assert line.startswith("mcp-testkit record: upstream ")
    assert "cannot start it" in line
    assert not (tmp_path / "x.json").exists()


async def test_a_stdio_server_that_cannot_start_later_is_a_502_and_the_proxy_keeps_serving(tmp_path: Path) -> None:
    """When the server's program is gone after the proxy started, initialize gets a 502 with a JSON-RPC error."""
    program = tmp_path / "server"
    program.write_text(f"#!/bin/sh\nexec {shlex.join(stdio_command())}\n")  # serves the start's probe
    program.chmod(0o755)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
    headers = {"accept": "application/json, text/event-stream"}
    async with record(command=[str(program)], out=tmp_path / "gone.json") as proxy, _http() as http:
        program.unlink()
        with anyio.fail_after(LIMIT_S):
            first = await http.post(proxy, json=init, headers=headers)
            second = await http.post(proxy, json=init, headers=headers)
    for answer in (first, second):
        assert answer.status_code == 502
        assert answer.json()["error"]["code"] == -32603
        assert "cannot start it" in answer.json()["error"]["message"]


async def test_record_command_in_front_of_a_stdio_server(tmp_path: Path) -> None:
    """`record --upstream-command` serves HTTP in front of a stdio server and records its exchanges."""
    out = tmp_path / "stdio-cli.json"
    command = " ".join(stdio_command())
    mark = {"MCP_TESTKIT_TEST_MARK": f"stdio-cli-{os.getpid()}-{id(out)}"}  # inherited by the servers it starts
    process, line = await anyio.to_thread.run_sync(
        lambda: _start_record("--upstream-command", command, "--out", str(out), env=mark)
    )
    try:
        assert line.startswith(f"recording {command} at http://127.0.0.1:")
        url = line.rsplit(" at ", 1)[1]
        answers = await sdk_http_answers(url, [("search", {"query": "q"})])
        async with httpx2.AsyncClient(timeout=LIMIT_S) as client:  # a session left open: its server still runs
            opened = await client.post(url, json=_INIT, headers={"accept": "application/json, text/event-stream"})
        assert opened.status_code == 200
        assert len(_running_with(mark)) >= 2  # record itself, and the open session's server
    finally:
        status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)  # a Ctrl-C
    assert status == 0, stderr
    assert answers["0:search"]["structuredContent"] == {"items": ["q-0", "q-1"], "next_page": 2}
    cassette = Cassette.load(out)
    assert cassette.upstream == {"transport": "stdio", "command": stdio_command()}
    assert cassette.requests("tools/call")[0].transport == "stdio"
    # The servers ran in process groups of their own, which no terminal's Ctrl-C reaches: record ended them.
    assert _running_with(mark) == []


_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
         "capabilities": {}, "clientInfo": {"name": "left-open", "version": "1"}}}  # fmt: skip


def _running_with(env: dict[str, str]) -> list[int]:
    """The processes running (not zombies) whose environment holds `env`'s one variable, where /proc tells."""
    [(name, value)] = env.items()
    wanted = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if wanted in (entry / "environ").read_bytes().split(b"\0"):
                if (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


# -- secrets in the forms a body repeats them ----------------------------------------------------------------------

TOKEN = "tok-4f1c9a7e2b8d6c3e5a0f"
COOKIE = "c00kie-value-7d2e9b4a1f"
BASIC_PASSWORD = "hunter2-basic-password"
DPOP = "dpop-proof-9e8d7c6b5a4f3e2d"
ARGUMENT_PASSWORD = "argument-passw0rd-5512"


async def test_secrets_echoed_alone_decoded_encoded_or_as_arguments_never_reach_the_file(tmp_path: Path) -> None:
    """A cookie value alone, a decoded Basic password, a DPoP proof, a token's base64, an argument named
    `password`, the upstream's session id and a short credential: none is written, and no name is rewritten."""
    import base64

    from mcp_testkit import TestMcpServer

    upstream = TestMcpServer()
    b64 = base64.b64encode(TOKEN.encode()).decode()

    def echo(arguments: dict[str, Any]) -> str:
        session = upstream.journal.records[-1].session_id
        return f"cookie {COOKIE}; password {BASIC_PASSWORD}; proof {DPOP}; b64 {b64}; session {session}; {arguments}"

    upstream.tool("create_ticket", returns=echo)
    basic = base64.b64encode(f"ann:{BASIC_PASSWORD}".encode()).decode()
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Cookie": f"theme=dark; sid={COOKIE}",
        "Proxy-Authorization": f"Basic {basic}",
        "DPoP": DPOP,
        "X-Ticket": "ticket",  # a credential too short to replace inside other text
    }
    out = tmp_path / "secrets.json"
    async with upstream:
        async with record(upstream.url, out=out, headers={"X-Api-Key": "ticket"}) as proxy:
            with anyio.fail_after(LIMIT_S):
                async with httpx2.AsyncClient(headers=headers) as http:
                    from mcp.client.streamable_http import streamable_http_client

                    async with Client(streamable_http_client(proxy, http_client=http), mode="legacy") as client:
                        answer = await client.call_tool("create_ticket", {"password": ARGUMENT_PASSWORD, "n": 1})
        session = upstream.journal.records[-1].session_id
    assert COOKIE in answer.content[0].text  # type: ignore[union-attr]  # the client got the real answer
    text = out.read_text()
    assert session is not None
    for secret in (TOKEN, COOKIE, BASIC_PASSWORD, basic, DPOP, b64, ARGUMENT_PASSWORD, session):
        assert secret not in text, secret
    cassette = Cassette.load(out)
    assert [tool["name"] for tool in cassette.requests("tools/list")[-1].result["tools"]] == ["create_ticket"]
    assert cassette.requests("tools/call")[-1].request["params"]["name"] == "create_ticket"


async def test_a_scrub_hook_changes_what_is_written_and_not_what_the_client_gets(tmp_path: Path) -> None:
    """`scrub=` sees each message before it is written (here: an environment dump emptied); the client is untouched."""
    from mcp_testkit import TestMcpServer

    upstream = TestMcpServer()
    upstream.tool("get-env", returns="HOME=/home/ann\nPATH=/usr/bin\nDB_URL=postgres://ann:pw@db/prod")

    def scrub(message: dict[str, Any]) -> dict[str, Any]:
        result = message.get("result")
        if isinstance(result, dict) and "content" in result and "DB_URL=" in json.dumps(result):
            return {**message, "result": {**result, "content": [{"type": "text", "text": "<environment>"}]}}
        return message

    out = tmp_path / "env.json"
    async with upstream, record(upstream.url, out=out, scrub=scrub) as proxy:
        with anyio.fail_after(LIMIT_S):
            async with Client(proxy, mode="legacy") as client:
                answer = await client.call_tool("get-env", {})
    assert "DB_URL" in answer.content[0].text  # type: ignore[union-attr]
    assert "DB_URL" not in out.read_text()
    assert Cassette.load(out).requests("tools/call")[-1].result["content"][0]["text"] == "<environment>"


async def test_record_command_scrub_option_loads_a_function_and_applies_it(upstream_url: str, tmp_path: Path) -> None:
    """`record --scrub module:function` applies the function to what is written; an unloadable one is exit 2."""
    (tmp_path / "scrubbing.py").write_text(
        "def hide_results(message):\n"
        "    if 'result' in message and 'content' in message['result']:\n"
        "        return {**message, 'result': {**message['result'], 'content': [], 'structuredContent': {}}}\n"
        "    return message\n"
    )
    out = tmp_path / "scrubbed.json"
    env = {"PYTHONPATH": str(tmp_path)}
    args = ("--upstream", upstream_url, "--out", str(out), "--scrub", "scrubbing:hide_results")
    process, line = await anyio.to_thread.run_sync(lambda: _start_record(*args, env=env))
    try:
        answers = await sdk_http_answers(line.rsplit(" at ", 1)[1], [("add", {"a": 1, "b": 1})])
    finally:
        status, stderr = await anyio.to_thread.run_sync(_stop, process, signal.SIGINT)
    assert status == 0, stderr
    assert answers["0:add"]["structuredContent"] == {"result": 2}  # the client got the real answer
    assert Cassette.load(out).requests("tools/call")[0].result["content"] == []
    with anyio.fail_after(LIMIT_S):
        missing = await anyio.run_process(
            [sys.executable, "-m", "mcp_testkit", "record", "--upstream", upstream_url, "--out", "x.json",
             "--scrub", "scrubbing:no_such_function"],
            check=False, cwd=tmp_path,
        )  # fmt: skip
    assert missing.returncode == 2
    said = missing.stderr.decode().strip()
    assert said.startswith("mcp-testkit record: --scrub 'scrubbing:no_such_function' cannot be loaded")
