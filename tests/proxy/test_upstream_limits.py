"""What comes from the upstream is bounded as what comes from clients is: an answer's head and header lines, a JSON
answer's body, each SSE event, a stdio server's stdout line. Past a bound the client gets a 502 naming it (an SSE
stream already begun ends with an error event naming it), the upstream's connection or process is closed, and the
proxy's memory grows by little.

The memory tests run `mcp-testkit proxy` as a process of its own, under a cap on its address space (so that a
proxy without the bounds fails them without hurting the machine), against upstreams written here that flood it;
they read the proxy's peak resident size from /proc.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_testkit.proxy import ChaosProxy

from ._raw_upstream import RawUpstream, json_answer, read_request, serving
from ._wire import ACCEPT, INIT

LIMIT_S = 60.0
MiB = 1024 * 1024
FLOOD = 300 * MiB
"""What a flooding upstream sends at most: a proxy without bounds meets its end, not the machine's."""
GROWTH = 64 * MiB
"""The most the proxy's peak resident size may grow by under one flood."""
ADDRESS_SPACE_KIB = 4 * 1024 * 1024
"""The cap on the proxy process's address space (`ulimit -v`): a proxy holding a flood fails, the machine does not."""
HEADERS = {**ACCEPT, "mcp-protocol-version": "2025-06-18"}
URL_LINE = re.compile(r" at (http://\S+);")
CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "big", "arguments": {}}}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


# -- upstreams that flood ------------------------------------------------------------------------------------------


async def _pings_then(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> Any:
    """Answer pings on the connection; the first other request, read and returned (None at the connection's end)."""
    while True:
        message = await read_request(reader)
        if message is None or message.get("method") != "ping":
            if message is not None:
                up.saw(message)
            return message
        writer.write(json_answer(message))
        await writer.drain()


async def _flood(writer: asyncio.StreamWriter, head: bytes, piece: bytes) -> None:
    """Write `head`, then `piece` again and again until `FLOOD` bytes went or the proxy closed the connection."""
    writer.write(head)
    sent = len(head)
    with contextlib.suppress(ConnectionError):
        while sent < FLOOD and not writer.is_closing():
            writer.write(piece)
            sent += len(piece)
            await writer.drain()


async def endless_headers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
    """An answer whose head never ends: header lines of 1 kB each, without end."""
    if await _pings_then(reader, writer, up) is not None:
        line = b"x-flood: " + b"f" * 1014 + b"\r\n"
        await _flood(writer, b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n", line * 64)


def huge_json(declared: bool) -> Any:
    """A 200 MB JSON answer, streamed as it is made (never held by the upstream): with its Content-Length, or ending
    with the connection."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
        message = await _pings_then(reader, writer, up)
        if message is not None:
            length = b"content-length: %d" % (200 * 1000 * 1000) if declared else b"connection: close"
            head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n%s\r\n\r\n" % length
            start = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % message["id"]
            await _flood(writer, head + start, b"j" * MiB)

    return handler


async def endless_event(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
    """An SSE answer whose one event never ends: a data line without end."""
    if await _pings_then(reader, writer, up) is not None:
        head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        opening = b"event: message\ndata: " + b"e" * (MiB - 21)
        await _flood(writer, head + b"%x\r\n%s\r\n" % (len(opening), opening), b"%x\r\n%s\r\n" % (MiB, b"e" * MiB))


STDIO_FLOOD = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "flood", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/call":
        out = sys.stdout.buffer
        out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % message["id"])
        for _ in range(100):
            out.write(b"s" * (1024 * 1024))
        out.write(b'"}]}}\\n')
        out.flush()
"""
"""A stdio server that answers `tools/call` with one stdout line of 100 MiB."""


# -- the proxy as a process of its own -----------------------------------------------------------------------------


def _resident(pid: int) -> int:
    """The proxy's resident size now, in KiB, its peak (VmHWM) reset to it where Linux lets (so that a peak of its
    start cannot hide one of the flood)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    return _kib(pid, "VmRSS")


def _kib(pid: int, field: str) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(rf"^{field}:\s+(\d+) kB", status, re.MULTILINE)
    assert found, status
    return int(found[1])


@contextlib.contextmanager
def _proxy_process(*args: str) -> Iterator[tuple[str, int]]:
    """`mcp-testkit proxy ARGS` under `ADDRESS_SPACE_KIB`; its URL and process id. Stopped on the way out."""
    command = shlex.join([sys.executable, "-m", "mcp_testkit", "proxy", *args])
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    process = subprocess.Popen(
        ["sh", "-c", f"ulimit -v {ADDRESS_SPACE_KIB} && exec {command}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = URL_LINE.search(line)
        assert found, (line, process.stderr.read() if process.stderr is not None else "")
        yield found[1], process.pid
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=LIMIT_S)
        assert "Traceback" not in stderr, stderr


def _check_bounded(answered: httpx2.Response, option: str, before_kib: int, pid: int) -> None:
    """A 502 whose JSON-RPC error names `option`, and the proxy's peak grew by less than `GROWTH`."""
    grown = (_kib(pid, "VmHWM") - before_kib) * 1024
    assert answered.status_code == 502, (answered.status_code, answered.text[:300])
    error = answered.json()["error"]
    assert (error["code"], answered.json()["id"]) == (-32603, CALL["id"])
    assert option in error["message"], error["message"]
    assert grown < GROWTH, f"the proxy grew by {grown / MiB:.0f} MiB"


def _attacked(url: str, pid: int, session: str | None = None) -> tuple[httpx2.Response, int]:
    """A ping through the proxy (its code warmed up), then the call the upstream floods; the answer, and the proxy's
    resident size before the call."""
    headers = HEADERS if session is None else {**HEADERS, "mcp-session-id": session}
    with httpx2.Client(timeout=LIMIT_S) as client:
        assert client.post(url, json=PING, headers=headers).status_code == 200
        before = _resident(pid)
        return client.post(url, json=CALL, headers=headers), before


def test_an_answer_head_without_end_is_a_502_naming_max_upstream_head() -> None:
    """Header lines without end: 502 naming max_upstream_head, and the proxy grows by under 64 MB (it took 1 GB
    within `--timeout 3` before, never given back)."""
    with serving(endless_headers) as (upstream, _), _proxy_process("--upstream", upstream) as (url, pid):
        answered, before = _attacked(url, pid)
        _check_bounded(answered, "max_upstream_head", before, pid)


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "close-delimited"])
def test_a_200_mb_json_answer_is_a_502_naming_max_upstream_body(declared: bool) -> None:
    """A 200 MB JSON answer: 502 naming max_upstream_body (as soon as its Content-Length says so, or once 16 MiB of
    it came), the proxy holding at most that (it held it whole before, at a peak of 1.6 GB)."""
    with serving(huge_json(declared)) as (upstream, _), _proxy_process("--upstream", upstream) as (url, pid):
        answered, before = _attacked(url, pid)
        _check_bounded(answered, "max_upstream_body", before, pid)


def test_a_stdout_line_of_100_mib_is_a_502_naming_max_upstream_body(tmp_path: Path) -> None:
    """A stdio server answering with one 100 MiB line: 502 naming max_upstream_body, the process ended, and the
    proxy grows by under 64 MB (+290 MB before)."""
    script = tmp_path / "flood.py"
    script.write_text(STDIO_FLOOD)
    command = shlex.join([sys.executable, str(script)])
    with _proxy_process("--upstream-command", command) as (url, pid), httpx2.Client(timeout=LIMIT_S) as client:
        opened = client.post(url, json=INIT, headers=ACCEPT)
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        before = _resident(pid)
        answered = client.post(url, json=CALL, headers={**HEADERS, "mcp-session-id": session})
        _check_bounded(answered, "max_upstream_body", before, pid)


def test_an_sse_event_without_end_ends_the_stream_with_an_error_naming_max_upstream_body() -> None:
    """An SSE event without end: the stream (begun, 200) ends with a JSON-RPC error event naming max_upstream_body,
    none of the event's bytes passed on, and the proxy grows by under 64 MB."""
    with serving(endless_event) as (upstream, _), _proxy_process("--upstream", upstream) as (url, pid):
        with httpx2.Client(timeout=LIMIT_S) as client:
            assert client.post(url, json=PING, headers=HEADERS).status_code == 200
            before = _resident(pid)
            answered = client.post(url, json=CALL, headers=HEADERS)
        grown = (_kib(pid, "VmHWM") - before) * 1024
        assert answered.status_code == 200
        assert b"eeee" not in answered.content
        assert answered.content.startswith(b"event: message\ndata: ")
        error = json.loads(answered.content.split(b"data: ", 1)[1])
        assert (error["id"], error["error"]["code"]) == (CALL["id"], -32603)
        assert "max_upstream_body" in error["error"]["message"]
        assert grown < GROWTH, f"the proxy grew by {grown / MiB:.0f} MiB"


# -- each bound, in-process, with the options set low ---------------------------------------------------------------


async def _answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream, raw: bytes) -> None:
    while (message := await read_request(reader)) is not None:
        up.saw(message)
        writer.write(raw)
        await writer.drain()


def _raw_upstream(raw: bytes) -> Any:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
        await _answers(reader, writer, up, raw)

    return handler


def _result(text: str) -> bytes:
    answer = {"jsonrpc": "2.0", "id": CALL["id"], "result": {"content": [{"type": "text", "text": text}]}}
    return json.dumps(answer, separators=(",", ":")).encode()


@pytest.mark.parametrize(
    ("raw", "options", "named"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n" + b"x-many: 1\r\n" * 11
            + b"content-length: 2\r\n\r\n{}", {"max_upstream_headers": 10}, "max_upstream_headers", id="headers",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-big: " + b"b" * 2000
            + b"\r\ncontent-length: 2\r\n\r\n{}", {"max_upstream_head": 1024}, "max_upstream_head", id="head",
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            + b"%x\r\n%s\r\n0\r\n\r\n" % (len(_result("r" * 3000)), _result("r" * 3000)),
            {"max_upstream_body": 2048}, "max_upstream_body", id="chunked-body",
        ),
    ],
)  # fmt: skip
def test_an_answer_past_a_bound_is_a_502_naming_it(raw: bytes, options: dict[str, int], named: str) -> None:
    """Past each bound (set low): a 502 with a -32603 error naming the bound and how to raise it, journaled with
    `executed` unknown."""
    with serving(_raw_upstream(raw)) as (upstream, _), ChaosProxy(upstream, **options) as proxy:
        with httpx2.Client(timeout=LIMIT_S) as client:
            answered = client.post(proxy.url, json=CALL, headers=HEADERS)
        assert answered.status_code == 502
        message = answered.json()["error"]["message"]
        assert f"upstream {upstream} answered over a limit" in message
        assert f"ChaosProxy({named}=...)" in message
        assert f"--{named.replace('_', '-')}" in message
        [record] = proxy.journal.calls("big")
        assert (record.status, record.executed) == (502, None)
        assert record.response == answered.json()


def test_an_answer_within_the_bounds_passes_whole() -> None:
    """An answer of exactly `max_upstream_body` bytes, with `max_upstream_headers` header lines, passes as it came."""
    body = _result("w" * 2000)
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
    with serving(_raw_upstream(raw)) as (upstream, _), ChaosProxy(
        upstream, max_upstream_body=len(body), max_upstream_headers=2
    ) as proxy:  # fmt: skip
        with httpx2.Client(timeout=LIMIT_S) as client:
            answered = client.post(proxy.url, json=CALL, headers=HEADERS)
    assert (answered.status_code, answered.content) == (200, body)


def test_sse_events_cut_anywhere_reach_the_client_whole() -> None:
    """SSE events in pieces cut mid-line and between the two line breaks that end them (CRLF, LF and CR alike)
    reach the client as the same bytes and the same events."""
    events = [b'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}' % n
              for n in range(3)]  # fmt: skip
    stream = events[0] + b"\r\n\r\n" + events[1] + b"\n\n" + events[2] + b"\r\r" + b"data: " + _result("s") + b"\n\n"
    cuts = [5, len(events[0]) + 1, len(events[0]) + 3, len(events[0]) + 4 + len(events[1]) + 1, len(stream) - 1]
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces) + b"0\r\n\r\n"
    raw = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" + body
    with serving(_raw_upstream(raw)) as (upstream, _), ChaosProxy(upstream, max_upstream_body=1024) as proxy:
        with httpx2.Client(timeout=LIMIT_S) as client:
            answered = client.post(proxy.url, json=CALL, headers=HEADERS)
        assert (answered.status_code, answered.content) == (200, stream)
        [record] = proxy.journal.calls("big")
        assert record.response == json.loads(_result("s"))


@pytest.mark.parametrize("label", ["max_upstream_head", "max_upstream_headers", "max_upstream_body"])
def test_a_bound_under_one_is_refused(label: str) -> None:
    """A bound of 0 is a ValueError naming it."""
    with pytest.raises(ValueError, match=f"{label} must be a whole number of at least 1"):
        ChaosProxy("http://127.0.0.1:9/mcp", **{label: 0})


_SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["trio"])
@pytest.mark.parametrize(
    ("raw", "said"),
    [
        pytest.param(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n" + _result("t" * 3000),
            "its body passed 2,048 bytes (max_upstream_body)", id="json",
        ),
        pytest.param(
            _SSE_HEAD + b"data: " + b"t" * 3000, "an SSE event passed 2,048 bytes without ending (max_upstream_body)",
            id="sse",
        ),
    ],
)  # fmt: skip
async def test_on_trio_a_message_past_max_upstream_body_is_refused(anyio_backend: str, raw: bytes, said: str) -> None:
    """In-process on trio (the proxy's link an httpx2 client): a JSON body past `max_upstream_body` is the same 502,
    an SSE event past it the same error event, and no generator of the client is left unfinished."""
    import anyio

    with serving(_raw_upstream(raw)) as (upstream, _):
        proxy = ChaosProxy(upstream, max_upstream_body=2048)
        transport = httpx2.ASGITransport(app=proxy.asgi_app)
        try:
            with anyio.fail_after(LIMIT_S):
                async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                    answered = await client.post("/mcp", json=CALL, headers=HEADERS)
            if answered.headers["content-type"].startswith("text/event-stream"):
                assert answered.status_code == 200
                error = json.loads(answered.content.split(b"data: ", 1)[1])
            else:
                assert answered.status_code == 502
                error = answered.json()
            assert said in error["error"]["message"]
        finally:
            await anyio.to_thread.run_sync(proxy.stop)
