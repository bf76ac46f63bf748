"""The proxy never falls over when its upstream does: Hypothesis draws what an upstream written here answers a
well-formed `tools/call` with (malformed heads, bodies, SSE streams, a stdio server's stdout), over real sockets.

For every drawn answer the client gets a valid relayed answer or the proxy's documented own (a 502 naming the
problem, an SSE stream broken off or ended with an error event), never a 500 of the proxy's nor a hang; nothing logs
a traceback; the exchange is journaled, `executed` True only for an answer the upstream gave; the proxy then serves
a well-formed request; its journal endpoint parses with a strict JSON decoder. Raise the counts with
MCP_TESTKIT_FUZZ_UPSTREAM (examples per HTTP family, default 80) and MCP_TESTKIT_FUZZ_STDOUT (default 50).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import HealthCheck, Phase, event, given, settings

from mcp_testkit._wire.sse import SseDecoder
from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.standalone._admin import ProxyAdminApp

from ._odd_upstream import (
    CALL_ID,
    MAX_BODY,
    MAX_HEAD,
    MAX_HEADERS,
    RIGHT,
    Odd,
    Stdout,
    bodies,
    heads,
    line_of,
    packed,
    stdouts,
    streams,
)
from ._raw_upstream import RawUpstream, read_request, serving
from ._wire import ACCEPT, INIT

DEFAULTS = (80, 50)
"""Examples per HTTP family, and of stdout, unless the environment says otherwise (docs/proxy.md says these)."""
EXAMPLES = int(os.environ.get("MCP_TESTKIT_FUZZ_UPSTREAM", str(DEFAULTS[0])))
STDOUT_EXAMPLES = int(os.environ.get("MCP_TESTKIT_FUZZ_STDOUT", str(DEFAULTS[1])))
HANG_S = 30.0
"""The longest one exchange may take: a hang guard (under anyio.fail_after), not a benchmark."""
TOKEN = "fuzz-token"
VERSION = "2025-06-18"
CALL = {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": {"name": "odd", "arguments": {}}}
PING_ID = 99
PING = {"jsonrpc": "2.0", "id": PING_ID, "method": "ping"}
_SETTINGS: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "suppress_health_check": list(HealthCheck),
    # Every example is an exchange with one live proxy: shrinking would replay them against a changed one.
    "phases": [Phase.generate],
}
RAN: collections.Counter[str] = collections.Counter()
"""How many examples of each family ran, and how each ended (`family:outcome`): what the docs' counts come from."""


def _strict(text: str | bytes) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in what claims to be JSON")

    return json.loads(text, parse_constant=refuse)


def _wire_json(data: bytes) -> Any:
    """`data` decoded as MCP's wire has JSON (UTF-8, finite numbers, nested at most 128 deep), written here apart
    from the proxy's decoder; raises ValueError for what is not."""
    text = data.decode("utf-8")
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    if deepest > 128:
        raise ValueError("nested too deeply")

    def finite(number: str) -> float:
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise ValueError("out of range")
        return value

    return json.loads(text, parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)), parse_float=finite)


def _is_wire_json(data: bytes) -> bool:
    try:
        _wire_json(data)
    except (ValueError, RecursionError):
        return False
    return True


def _answers_call(message: Any) -> bool:
    return isinstance(message, dict) and "method" not in message and message.get("id") == CALL_ID


def _messages(content: bytes, sse: bool) -> list[Any]:
    """The JSON messages the client got (an SSE event's data that is not JSON is no message)."""
    if not sse:
        return [_wire_json(content)] if content and _is_wire_json(content) else []
    datas = [event.data.encode() for event in SseDecoder().feed(content + b"\n\n") if event.data]
    return [_wire_json(data) for data in datas if _is_wire_json(data)]


class _Proxied:
    """The proxy under fuzz, with its admin API, and the log records it wrote (uvicorn's and everyone's)."""

    def __init__(
        self, proxy: ChaosProxy, caplog: pytest.LogCaptureFixture, upstream: RawUpstream | None = None
    ) -> None:
        self.proxy, self.caplog, self.upstream = proxy, caplog, upstream
        self.journal_url = f"{proxy.base_url}/_testkit/journal"

    def upstream_pings(self) -> int:
        assert self.upstream is not None
        return self.upstream.runs("ping")

    def tracebacks(self) -> list[str]:
        said = [(record.getMessage(), record.exc_info) for record in self.caplog.records]
        return [text for text, info in said if info or "Traceback" in text or "Exception in" in text]

    async def post(self, client: httpx2.AsyncClient, message: Any, session: str | None = None) -> Any:
        """The proxy's answer to `message`, or the name of the exception that broke it off."""
        headers = {**ACCEPT, "mcp-protocol-version": VERSION}
        if session is not None:
            headers["mcp-session-id"] = session
        try:
            with anyio.fail_after(HANG_S):
                return await client.post(self.proxy.url, json=message, headers=headers)
        except (httpx2.RemoteProtocolError, httpx2.ReadError) as exc:
            return type(exc).__name__

    async def strict_journal(self, client: httpx2.AsyncClient) -> list[Any]:
        """The admin API's journal, decoded strictly (a NaN or Infinity in it fails the test)."""
        with anyio.fail_after(HANG_S):
            answered = await client.get(self.journal_url, headers={"authorization": f"Bearer {TOKEN}"})
        assert answered.status_code == 200, answered.text[:300]
        records: list[Any] = _strict(answered.text)["records"]
        return records


@pytest.fixture
def proxied(caplog: pytest.LogCaptureFixture) -> Iterator[tuple[_Proxied, dict[str, bytes]]]:
    """A proxy (bounds set low) in front of a raw upstream that answers pings rightly and the call with `box["raw"]`,
    then closes the connection."""
    box: dict[str, bytes] = {}

    async def upstream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
        while (message := await read_request(reader)) is not None:
            up.saw(message)
            if message.get("method") != "ping":
                writer.write(box["raw"])
                await writer.drain()
                return
            body = packed({"jsonrpc": "2.0", "id": message.get("id"), "result": {}})
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                         % (len(body), body))  # fmt: skip
            await writer.drain()

    caplog.set_level(logging.WARNING)
    with serving(upstream) as (url, seen):
        proxy = ChaosProxy(
            url, max_upstream_head=MAX_HEAD, max_upstream_headers=MAX_HEADERS, max_upstream_body=MAX_BODY
        )
        proxy.start(ProxyAdminApp(proxy, TOKEN))
        uvicorn_log = logging.getLogger("uvicorn.error")  # uvicorn's own logging config keeps it from the root's
        uvicorn_log.addHandler(caplog.handler)
        try:
            yield _Proxied(proxy, caplog, seen), box
        finally:
            uvicorn_log.removeHandler(caplog.handler)
            proxy.stop()


def _own_error(response: httpx2.Response) -> str | None:
    """The message of the proxy's own JSON-RPC error (a 502 or 504 it made), else None."""
    if response.status_code not in (502, 504) or not response.headers.get("content-type", "").startswith(
        "application/json"
    ):
        return None
    try:
        error = _strict(response.content)
    except ValueError:
        return None
    message = error.get("error", {}).get("message", "") if isinstance(error, dict) else ""
    if not message.startswith("chaos proxy: upstream"):
        return None
    assert (error["id"], error["error"]["code"]) == (CALL_ID, -32603), error
    return str(message)


_REASONS = {"over a limit": "over a bound", "not HTTP": "not HTTP", "not JSON-RPC": "not JSON-RPC",
            "broke off": "broken off", "did not answer": "no answer"}  # fmt: skip


def _reason(message: str) -> str:
    """What a 502 of the proxy's names, in short (for the counts)."""
    return next((short for said, short in _REASONS.items() if said in message), "other")


def _lost_on_closing(pinged: Any) -> bool:
    """Whether the proxy answered a request with the 502 of a connection the upstream closed before answering."""
    if isinstance(pinged, str) or pinged.status_code != 502:
        return False
    return "closed the connection before its answer ended" in pinged.json()["error"]["message"]


def _must_relay(case: Odd) -> bool:
    """Whether a correct proxy has no reason not to pass `case` on as it came: a clean head of a final status,
    a JSON body (or a body of an error status), within the bounds."""
    if not case.clean or case.cut or case.sse or case.status is None or not 200 <= case.status < 600:
        return False
    if case.status in (204, 304) or len(case.payload) > MAX_BODY:
        return False
    type_line = next((line for line in case.raw.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]
                      if line.lower().startswith(b"content-type:")), b"")  # fmt: skip
    json_type = (
        type_line.split(b":", 1)[1].split(b";", 1)[0].strip().lower() == b"application/json" if type_line else False
    )
    if not case.payload:
        return True
    if json_type:
        return _is_wire_json(case.payload)
    return case.status >= 400


def _check_relayed(case: Odd, response: httpx2.Response) -> str:
    """A relayed answer is the upstream's: its status, and its body as it came (an SSE stream in whole events, or
    ended past the bound with an error event naming it)."""
    if case.status is not None:
        assert response.status_code == case.status, (response.status_code, response.content[:300])
    content = response.content
    if not case.sse:
        expected = b"" if case.status in (204, 304) else case.payload
        # A framing that ends before the payload does (a Content-Length too short) frames a prefix of it.
        assert content == expected or (not case.clean and expected.startswith(content)), content[:300]
        if content and 200 <= response.status_code < 300:
            assert _is_wire_json(content), content[:300]  # a 2xx body that is not JSON is a 502, never passed on
        return "relayed"
    if content == case.payload:
        return "relayed"
    head, found, tail = content.rpartition(b"event: message\ndata: ")
    assert found, content[-300:]
    assert case.payload.startswith(head), content[-300:]
    error = _strict(tail.strip())
    assert error["id"] == CALL_ID, error
    assert "max_upstream_body" in error["error"]["message"], error
    return "ended over the bound"


def _check_http(case: Odd, got: Any, record: Any) -> str:
    """What the client got for `case`, checked; the outcome's name."""
    if isinstance(got, str):  # the stream broken off: only where the upstream broke off its own
        assert case.sse, (got, case)
        assert case.cut or not case.clean, (got, case)
        assert record.status == (case.status or record.status), record  # the stream's status, as it began
        assert "broke off" in (record.error or ""), record
        outcome = "broken off"
    else:
        assert record.status == got.status_code, (record.status, got.status_code)
        own = _own_error(got)
        if own is not None:
            assert not _must_relay(case), (own, case)
            assert record.executed is None, record  # the upstream read the call: nobody can tell if it ran it
            return "502: " + _reason(own)
        assert got.status_code != 500 or case.status == 500, got.content[:300]
        outcome = _check_relayed(case, got)
    sse = case.sse if isinstance(got, str) else got.headers.get("content-type", "").startswith("text/event-stream")
    content = b"" if isinstance(got, str) else got.content
    status = 200 if isinstance(got, str) else got.status_code
    if record.executed:
        assert status < 300, record
        assert any(_answers_call(message) for message in _messages(content, sse)), (record, content[:300])
    if record.executed is False:  # the upstream read every call here: only its own 4xx says it refused
        assert not isinstance(got, str), record
        assert 400 <= status < 500, record
    return outcome


@pytest.mark.filterwarnings("ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning")
@pytest.mark.parametrize("family", ["heads", "bodies", "sse"])
def test_an_upstream_that_misbehaves_over_http_never_breaks_the_proxy(
    family: str, proxied: tuple[_Proxied, dict[str, bytes]]
) -> None:
    """Each drawn answer is relayed as it came or answered as documented, never a 500 of the proxy's, a hang or a
    traceback; journaled, `executed` true to the upstream; the proxy then serves a ping; the journal is strict JSON."""
    fuzzed, box = proxied
    proxy = fuzzed.proxy
    strategy = {"heads": heads(), "bodies": bodies(), "sse": streams()}[family]

    @settings(max_examples=EXAMPLES, **_SETTINGS)
    @given(case=strategy)
    def one(case: Odd) -> None:
        box["raw"] = case.raw
        before = len(proxy.journal)

        async def exchange() -> None:
            async with httpx2.AsyncClient(timeout=HANG_S) as client:
                got = await fuzzed.post(client, CALL)
                [record] = proxy.journal.calls("odd")[-1:]
                assert record.seq == before + 1, (record, before)
                outcome = _check_http(case, got, record)
                event(outcome)
                RAN[f"{family}:{outcome}"] += 1
                pings, sent = fuzzed.upstream_pings(), 2
                pinged = await fuzzed.post(client, PING)
                if _lost_on_closing(pinged) and fuzzed.upstream_pings() == pings:
                    # The upstream framed its answer as kept alive and closed the connection: the ping went on it
                    # before its close arrived, unread, and a POST is never sent twice (a write would run twice).
                    RAN[f"{family}:ping lost on the closing connection"] += 1
                    pinged = await fuzzed.post(client, PING)
                    sent += 1
                assert not isinstance(pinged, str), (pinged, case)
                assert pinged.status_code == 200, (pinged.text, case)
                assert pinged.json() == {"jsonrpc": "2.0", "id": PING_ID, "result": {}}
                records = await fuzzed.strict_journal(client)
                assert len(records) == before + sent == len(proxy.journal)

        anyio.run(exchange)
        assert fuzzed.tracebacks() == [], case
        RAN[family] += 1

    one()
    assert RAN[family] >= EXAMPLES
    print(f"\n{family}: {RAN[family]} examples:", {k: v for k, v in RAN.items() if k.startswith(f"{family}:")})


# -- stdout of a stdio server ----------------------------------------------------------------------------------------

STDIO_SERVER = """
import base64, json, os, sys

def write(data):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()

def answer(request_id, result):
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}, separators=(",", ":")).encode() + b"\\n")

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue
    if message["method"] == "initialize":
        answer(message["id"], {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "odd-stdout", "version": "1"}})
    elif message["method"] == "tools/call":
        odd = message["params"]["arguments"]
        for raw in odd["lines"]:
            write(base64.b64decode(raw) + b"\\n")
        if odd["answers"]:
            answer(message["id"], {"content": [{"type": "text", "text": "ok"}]})
        write(base64.b64decode(odd["partial"]))
        if odd["exit"] is not None:
            if odd["exit"] < 0:
                os.kill(os.getpid(), -odd["exit"])
            os._exit(odd["exit"])
    else:
        answer(message["id"], {})
"""
"""A stdio server that writes, for each `tools/call`, what its arguments say (`Stdout`): odd lines, the answer or
not, a partial line, an exit."""


def _arguments(out: Stdout) -> dict[str, Any]:
    encoded = [base64.b64encode(line_of(line)).decode() for line in out.lines]
    return {
        "lines": encoded,
        "answers": out.answers,
        "exit": out.exit,
        "partial": base64.b64encode(out.partial).decode(),
    }


def _first_answer(out: Stdout) -> Any:
    """The message a correct gateway answers the call with: the first line that is a JSON-RPC answer to it, when it
    comes before any line past the bound; None when the process gives none (it exits, or is ended)."""
    for line in map(line_of, out.lines):
        if len(line) + 1 > MAX_BODY:
            return None
        try:
            message = _wire_json(line.decode("utf-8", errors="replace").strip().encode())
        except (ValueError, RecursionError):
            continue
        if _answers_call(message):
            return message
    return json.loads(RIGHT) if out.answers else None


def _check_stdout(out: Stdout, got: Any, record: Any) -> str:
    assert not isinstance(got, str), (got, out)
    assert record.status == got.status_code
    sse = got.headers.get("content-type", "").startswith("text/event-stream")
    messages = _messages(got.content, sse)
    if sse:
        raw = [event.data for event in SseDecoder().feed(got.content) if event.data]
        assert len(raw) == len(messages), raw  # every event's data is JSON
    for message in messages:  # a line that is not JSON-RPC is never passed on as a message
        assert isinstance(message, dict), (message, out)
        assert message.get("jsonrpc") == "2.0", (message, out)
        assert isinstance(message.get("method"), str) or "id" in message, (message, out)
    expected = _first_answer(out)
    answered = [message for message in messages if _answers_call(message)]
    if expected is not None:
        assert got.status_code == 200, (got.content[:300], out)
        assert answered == [expected], (got.content[:300], out)
        assert record.executed is True, record
        return "answered"
    assert got.status_code in (200, 502), got.content[:300]
    [error] = answered
    assert error["error"]["code"] == -32603, error
    assert record.executed is None, record
    return "over the bound" if got.status_code == 502 else "exited unanswered"


async def _new_session(fuzzed: _Proxied, client: httpx2.AsyncClient) -> str:
    opened = await fuzzed.post(client, INIT)
    assert not isinstance(opened, str), opened
    assert opened.status_code == 200, opened.text  # a dead process holds no slot
    return str(opened.headers["mcp-session-id"])


@pytest.mark.filterwarnings("ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning")
def test_a_stdio_server_that_writes_odd_stdout_never_breaks_the_proxy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Each drawn stdout (odd lines, huge, binary, partial, an exit) gets the client the server's answer or the
    documented error, every message passed on JSON-RPC; no traceback; journaled, `executed` true to the server; a
    dead process frees its slot (at most 2 run) and its session answers 404; the journal is strict JSON."""
    script = tmp_path / "odd_stdout.py"
    script.write_text(STDIO_SERVER)
    command = [sys.executable, str(script)]
    caplog.set_level(logging.WARNING)
    proxy = ChaosProxy(upstream_command=command, max_processes=2, max_upstream_body=MAX_BODY)
    proxy.start(ProxyAdminApp(proxy, TOKEN))
    uvicorn_log = logging.getLogger("uvicorn.error")
    uvicorn_log.addHandler(caplog.handler)
    fuzzed = _Proxied(proxy, caplog)
    live: dict[str, str] = {}
    try:

        @settings(max_examples=STDOUT_EXAMPLES, **_SETTINGS)
        @given(out=stdouts())
        def one(out: Stdout) -> None:
            async def exchange() -> None:
                async with httpx2.AsyncClient(timeout=HANG_S) as client:
                    if "session" not in live:
                        live["session"] = await _new_session(fuzzed, client)
                    before = len(proxy.journal)
                    call = {**CALL, "params": {"name": "odd", "arguments": _arguments(out)}}
                    got = await fuzzed.post(client, call, live["session"])
                    [record] = proxy.journal.calls("odd")[-1:]
                    assert record.seq == before + 1, (record, before)
                    outcome = _check_stdout(out, got, record)
                    event(outcome)
                    RAN[f"stdout:{outcome}"] += 1
                    pinged = await fuzzed.post(client, PING, live["session"])
                    assert not isinstance(pinged, str), pinged
                    if out.exit is not None or any(len(line_of(line)) + 1 > MAX_BODY for line in out.lines):
                        # The process exited, or was ended: so did its session (404), unless the ping reached it
                        # as it was exiting (it died during the ping, which gets the error of a call it died in).
                        assert not isinstance(pinged, str), pinged
                        if pinged.status_code != 404:
                            error = pinged.json()["error"]
                            assert (pinged.status_code, error["code"]) == (200, -32603), pinged.text
                            assert error["message"].startswith("the stdio server did not answer"), error
                        live["session"] = await _new_session(fuzzed, client)
                        pinged = await fuzzed.post(client, PING, live["session"])
                    assert not isinstance(pinged, str), (pinged, out)
                    assert pinged.status_code == 200, (pinged.text, out)
                    assert pinged.json() == {"jsonrpc": "2.0", "id": PING_ID, "result": {}}
                    records = await fuzzed.strict_journal(client)
                    assert len(records) == len(proxy.journal)

            try:
                anyio.run(exchange)
            except BaseException:
                live.clear()  # Hypothesis runs a failing example again to report it: on a session of its own
                raise
            assert fuzzed.tracebacks() == [], out
            RAN["stdout"] += 1

        one()
    finally:
        uvicorn_log.removeHandler(caplog.handler)
        proxy.stop()
    assert RAN["stdout"] >= STDOUT_EXAMPLES
    print(f"\nstdout: {RAN['stdout']} examples:", {k: v for k, v in RAN.items() if k.startswith("stdout:")})


def test_the_docs_say_how_many_examples_each_family_runs() -> None:
    """docs/proxy.md gives the default counts of this fuzz: they are these."""
    page = (Path(__file__).parents[2] / "docs" / "proxy.md").read_text()
    http, stdout = DEFAULTS
    assert f"four families of {http}, {http}, {http} and {stdout} examples" in " ".join(page.split())
