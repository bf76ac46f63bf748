"""The journal's `executed` on a `tools/call` through the proxy is what the upstream did, never a guess: True when
the upstream answered the call (whatever a fault then did to the bytes), None when nobody can tell (the request was
sent and no answer came), False only when the upstream never received it (or refused it with a 4xx)."""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
from typing import Any

import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy

from ._raw_upstream import RawUpstream, chunk, json_answer, read_request, serving
from ._wire import ACCEPT, open_session, request

LIMIT_S = 60.0
HEADERS = {**ACCEPT, "mcp-protocol-version": "2025-06-18"}


def _call(request_id: int, tool: str = "write") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


def _notifies_then_answers(release: threading.Event) -> Any:
    """A tools/call answered as SSE: a log notification at once, the answer only once `release` is set (the test
    has seen its client cut off), then the stream's end; other requests answered as JSON."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, up: RawUpstream) -> None:
        while (message := await read_request(reader)) is not None:
            up.saw(message)
            if message.get("method") != "tools/call":
                writer.write(json_answer(message))
                continue
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            note = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"writing"}}'
            writer.write(head + chunk(b"event: message\ndata: %s\n\n" % note))
            await writer.drain()
            await asyncio.get_running_loop().run_in_executor(None, release.wait, LIMIT_S)
            done = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}' % message["id"]
            writer.write(chunk(b"event: message\ndata: %s\n\n" % done) + b"0\r\n\r\n")
            await writer.drain()

    return handle


def test_limit_data_journals_executed_for_a_call_the_upstream_ran() -> None:
    """LimitData(40) cuts the client off inside the upstream's first SSE event, before its answer: the proxy still
    reads the upstream's answer, so the journal says `executed` True (the upstream ran and answered the call)."""
    release = threading.Event()
    with serving(_notifies_then_answers(release)) as (url, up), ChaosProxy(url) as proxy:
        proxy.fail_next_call(faults.LimitData(40), tool="write")
        with httpx2.Client(timeout=LIMIT_S) as client, pytest.raises(httpx2.RemoteProtocolError):
            client.post(proxy.url, json=_call(1), headers=HEADERS).read()
        release.set()
        proxy.journal.wait_for(lambda journal: journal.calls("write")[0].executed is not None, timeout_s=LIMIT_S)
        [call] = proxy.journal.calls("write")
        assert (call.fault, call.executed) == (faults.LimitData(40), True)
        assert call.response == {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}
        assert up.runs() == 1
        proxy.check(unused_faults=True)


def test_a_call_to_an_upstream_that_is_down_never_executed() -> None:
    """Nothing listens upstream: no connection was made, so the call is journaled `executed` False (with its 502)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/mcp"
    with ChaosProxy(url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        assert client.post(proxy.url, json=_call(1), headers=HEADERS).status_code == 502
        [call] = proxy.journal.calls("write")
        assert call.executed is False


def test_a_call_the_upstream_is_slow_to_answer_is_of_unknown_outcome() -> None:
    """The upstream took the call and did not begin its answer within timeout_s: 504, `executed` None (it may run)."""
    slow = TestMcpServer("slow")
    slow.tool("write", returns="written")
    slow.inject(faults.Delay(5.0), method="tools/call")
    with slow, ChaosProxy(slow.url, timeout_s=0.5) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        assert request(client, proxy.url, session, "tools/call", {"name": "write", "arguments": {}}).status_code == 504
        [call] = proxy.journal.calls("write")
        assert call.executed is None


DIES_ON_CALL = """
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "dies", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
    elif message.get("method") == "tools/call":
        sys.exit(3)
"""


def test_a_stdio_process_that_exits_during_a_call_is_of_unknown_outcome() -> None:
    """A stdio upstream that exits once it read the call: the client gets the gateway's error, and the journal says
    `executed` None (the process took the call; whether it ran it, nobody can tell), not True."""
    command = [sys.executable, "-c", DIES_ON_CALL]
    with ChaosProxy(upstream_command=command) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        answered = request(client, proxy.url, session, "tools/call", {"name": "write", "arguments": {}})
        assert answered.json()["error"]["code"] == -32603
        [call] = proxy.journal.calls("write")
        assert call.executed is None
