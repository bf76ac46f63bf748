"""Faults at the level of bytes over a real socket: Latency, Bandwidth, Slice, LimitData, ResetPeer, SlowClose.

What a client observes is read on a raw socket where it matters (an SSE answer is sent chunked, so each write of
the server is one HTTP chunk), with httpx2 and with the SDK client; the journal notes and the ledger are checked.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx2
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer, faults
from mcp_testkit._wire.eras import stateless_headers, stateless_params

from ._support import (
    ACCEPT,
    FRAMINGS,
    LIMIT_S,
    Serve,
    Wire,
    asgi_client,
    call,
    messages,
    socket_client,
    tools,
)

pytestmark = pytest.mark.anyio

CONTENT = [{"type": "text", "text": "t ran"}]
ERAS = ("handshake", "stateless")


@dataclass
class Exchange:
    """One HTTP/1.1 exchange as a raw socket saw it."""

    head: bytes
    body: bytes
    chunks: list[int] | None
    """The sizes of the HTTP chunks of a chunked body (without the last, empty one), or None."""
    ended: bool
    """Whether the body ended as its framing says (the last chunk, or Content-Length bytes)."""
    error: BaseException | None
    elapsed_s: float

    def header(self, name: str) -> str | None:
        for line in self.head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == name.encode():
                return value.strip().decode()
        return None


def _read_all(sock: socket.socket) -> tuple[bytes, BaseException | None]:
    data = b""
    try:
        while piece := sock.recv(65536):
            data += piece
    except OSError as exc:
        return data, exc
    return data, None


def _parse(raw: bytes, error: BaseException | None, elapsed_s: float) -> Exchange:
    head, _, rest = raw.partition(b"\r\n\r\n")
    exchange = Exchange(head, b"", None, False, error, elapsed_s)
    if exchange.header("transfer-encoding") == "chunked":
        exchange.chunks = []
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                exchange.ended = True
                break
            exchange.body += rest[:size]
            exchange.chunks.append(min(size, len(rest)))
            rest = rest[size + 2 :]
    else:
        exchange.body = rest
        length = exchange.header("content-length")
        exchange.ended = length is not None and len(rest) == int(length)
    return exchange


def _raw_post(url: str, message: Any, headers: dict[str, str]) -> Exchange:
    """POST `message` on a fresh connection, read until the server closes it (Connection: close), and parse."""
    parts = urlsplit(url)
    body = json.dumps(message).encode()
    lines = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.hostname}:{parts.port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in {**headers, "content-length": str(len(body))}.items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + body
    started = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=LIMIT_S) as sock:
        sock.sendall(request)
        raw, error = _read_all(sock)
    return _parse(raw, error, time.monotonic() - started)


async def raw_call(server: TestMcpServer, tool: str = "t") -> Exchange:
    """A stateless `tools/call` of `tool` on a raw socket (no session to open first)."""
    params = stateless_params({"name": tool, "arguments": {}}, client_info={"name": "raw", "version": "1"})
    headers = {"accept": ACCEPT, "content-type": "application/json", **stateless_headers("tools/call", params)}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    with anyio.fail_after(LIMIT_S * 2):
        return await anyio.to_thread.run_sync(_raw_post, server.url, message, headers)


Outcome = tuple[httpx2.Response | None, Exception | None]


async def httpx_call(server: TestMcpServer, era: str, tool: str = "t") -> Outcome:
    """A `tools/call` with httpx2 in `era` (a session opened first in the handshake era): the response or the error."""
    async with socket_client(server) as client:
        try:
            if era == "handshake":
                wire = Wire(client)
                await wire.initialize()
                return await wire.post(call(tool)), None
            params = stateless_params({"name": tool, "arguments": {}}, client_info={"name": "x", "version": "1"})
            headers = {"accept": ACCEPT, **stateless_headers("tools/call", params)}
            message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            with anyio.fail_after(LIMIT_S):
                return await client.post("/mcp", json=message, headers=headers), None
        except httpx2.TransportError as exc:
            return None, exc


def _the_answer(response: httpx2.Response | None) -> Any:
    assert response is not None
    return messages(response)[-1]


# -- Latency ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("framing", FRAMINGS)
async def test_latency_holds_the_answer_and_the_call_runs_once(serve: Serve, framing: str, era: str) -> None:
    """Latency: the whole answer arrives, no sooner than the delay drawn; the call ran once; the journal notes it."""
    server = tools(serve(response_mode=framing), "t")
    server.fail_next_call(faults.Latency(0.2, seed=1), tool="t")
    started = time.monotonic()
    response, error = await httpx_call(server, era)
    elapsed_s = time.monotonic() - started
    assert error is None
    assert _the_answer(response)["result"]["content"] == CONTENT
    assert elapsed_s >= 0.2
    (record,) = server.calls("t")
    assert record.error == "answered after a latency of 0.2 s by a fault (Latency, seed 1)"
    assert (record.fault, record.executed, server.executions("t")) == (faults.Latency(0.2, seed=1), True, 1)


@pytest.mark.parametrize("distribution", ["uniform", "normal", "exponential"])
async def test_latency_draws_the_same_delays_from_the_same_seed(serve: Serve, distribution: str) -> None:
    """Two runs of the same requests with one seed draw the same delays; another seed draws others."""
    jitter_s = 0.0 if distribution == "exponential" else 0.02

    async def run(seed: int) -> list[str | None]:
        server = tools(serve(), "t")
        server.inject(faults.Latency(0.03, jitter_s=jitter_s, distribution=distribution, seed=seed), tool="t", times=3)
        for _ in range(3):
            assert (await raw_call(server)).ended
        return [record.error for record in server.calls("t")]

    first, again, other = await run(7), await run(7), await run(8)
    assert first == again
    assert first != other
    assert all(note is not None and note.startswith("answered after a latency of") for note in first)


# -- Slice ------------------------------------------------------------------------------------------------------------


async def test_slice_splits_an_sse_answer_into_the_chunks_its_seed_draws(serve: Serve) -> None:
    """Slice over SSE: each piece is one HTTP chunk on the wire; the same seed gives the same boundaries, another
    seed others, and the joined bytes are the normal event."""

    async def run(seed: int) -> Exchange:
        server = tools(serve(response_mode="sse"), "t")
        server.fail_next_call(faults.Slice(seed=seed, pieces=5, gap_s=0.005), tool="t")
        exchange = await raw_call(server)
        (record,) = server.calls("t")
        assert exchange.chunks is not None
        sizes = ", ".join(str(size) for size in exchange.chunks)
        assert record.error == f"answered in writes of {sizes} bytes by a fault (Slice, seed {seed})"
        return exchange

    first, again, other = await run(3), await run(3), await run(4)
    assert first.chunks == again.chunks
    assert first.chunks != other.chunks
    assert first.chunks is not None
    assert len(first.chunks) == 5
    assert first.ended
    assert first.body.startswith(b"event: message\n")
    assert json.loads(first.body.split(b"data: ", 1)[1])["result"]["content"] == CONTENT


async def test_slice_of_a_json_answer_delivers_every_byte(serve: Serve) -> None:
    """Slice of a JSON body: the pieces add up to the Content-Length, and the body is the normal answer."""
    server = tools(serve(), "t")
    server.fail_next_call(faults.Slice(seed=9), tool="t")
    exchange = await raw_call(server)
    assert exchange.ended
    assert json.loads(exchange.body)["result"]["content"] == CONTENT
    note = server.calls("t")[0].error
    assert note is not None
    sizes = [int(size) for size in note.split("writes of ")[1].split(" bytes")[0].split(", ")]
    assert sum(sizes) == len(exchange.body)
    assert len(sizes) == 4


# -- Bandwidth --------------------------------------------------------------------------------------------------------


async def test_bandwidth_paces_the_answer_in_small_writes(serve: Serve) -> None:
    """Bandwidth over SSE: every chunk is at most the rate's step, they join to the normal event, and the whole
    takes at least the rate's time."""
    server = tools(serve(response_mode="sse"), "t")
    server.fail_next_call(faults.Bandwidth(bytes_per_s=400), tool="t")
    exchange = await raw_call(server)
    assert exchange.chunks is not None
    assert exchange.ended
    assert max(exchange.chunks) <= 20  # 400 bytes/s in writes every 50 ms
    assert json.loads(exchange.body.split(b"data: ", 1)[1])["result"]["content"] == CONTENT
    assert exchange.elapsed_s >= (len(exchange.chunks) - 1) * 0.05
    assert server.calls("t")[0].error == "answered at 400 bytes/s by a fault (Bandwidth)"


# -- LimitData --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_limit_data_sends_that_many_bytes_then_closes(serve: Serve, framing: str) -> None:
    """LimitData: exactly N bytes of the body reach the client, then the connection ends (no end of the body)."""
    server = tools(serve(response_mode=framing), "t")
    server.fail_next_call(faults.LimitData(bytes=30), tool="t")
    exchange = await raw_call(server)
    assert (len(exchange.body), exchange.ended, exchange.error) == (30, False, None)
    assert exchange.header("connection") == "close"
    (record,) = server.calls("t")
    assert record.error == "sent 30 bytes of the answer, then closed the connection, by a fault (LimitData(30))"
    assert server.executions("t") == 1


@pytest.mark.parametrize("era", ERAS)
async def test_limit_data_is_a_protocol_error_for_httpx(serve: Serve, era: str) -> None:
    """httpx2 reads a JSON body cut short of its Content-Length as RemoteProtocolError; the call ran once."""
    server = tools(serve(), "t")
    server.fail_next_call(faults.LimitData(bytes=10), tool="t")
    response, error = await httpx_call(server, era)
    assert response is None
    assert isinstance(error, httpx2.RemoteProtocolError)
    assert "received 10 bytes" in str(error)
    assert server.executions("t") == 1


async def test_limit_data_larger_than_the_answer_lets_it_through(serve: Serve) -> None:
    """An answer shorter than the limit arrives whole; the connection then closes (Connection: close)."""
    server = tools(serve(), "t")
    server.fail_next_call(faults.LimitData(bytes=10_000), tool="t")
    exchange = await raw_call(server)
    assert exchange.ended
    assert json.loads(exchange.body)["result"]["content"] == CONTENT
    note = f"sent {len(exchange.body)} bytes of the answer, the whole answer, by a fault (LimitData(10000))"
    assert server.calls("t")[0].error == note


# -- ResetPeer --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("after_execution", [True, False])
async def test_reset_peer_resets_the_connection(serve: Serve, framing: str, after_execution: bool) -> None:
    """ResetPeer: the client's read fails with ConnectionResetError and no byte of an answer; the tool ran once
    after execution, never before."""
    server = tools(serve(response_mode=framing), "t")
    server.fail_next_call(faults.ResetPeer(after_execution=after_execution), tool="t")
    exchange = await raw_call(server)
    assert isinstance(exchange.error, ConnectionResetError)
    assert exchange.head == b""
    (record,) = server.calls("t")
    when = "after" if after_execution else "before"
    assert record.error == f"connection reset (RST) {when} the request ran by a fault (ResetPeer)"
    assert (record.executed, server.executions("t")) == (after_execution, int(after_execution))
    assert record.status is None  # no status line reached the client


@pytest.mark.parametrize("era", ERAS)
async def test_reset_peer_is_a_read_error_for_httpx_and_the_next_call_works(serve: Serve, era: str) -> None:
    """httpx2 sees the reset as a transport error; the server goes on answering."""
    server = tools(serve(), "t")
    server.fail_next_call(faults.ResetPeer(), tool="t")
    response, error = await httpx_call(server, era)
    assert response is None
    assert isinstance(error, (httpx2.ReadError, httpx2.RemoteProtocolError))
    again, error = await httpx_call(server, era)
    assert error is None
    assert _the_answer(again)["result"]["content"] == CONTENT
    assert server.executions("t") == 2


async def test_reset_peer_in_process_raises_what_httpx_raises_for_a_reset() -> None:
    """In-process (ASGI) there is no socket: the client's request fails with httpx2's ReadError."""
    server = tools(TestMcpServer(), "t")
    server.fail_next_call(faults.ResetPeer(), tool="t")
    async with asgi_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        with pytest.raises(httpx2.ReadError, match="reset by peer"):
            await wire.post(call("t"))
    assert server.executions("t") == 1


async def test_limit_data_in_process_raises_what_httpx_raises_for_a_cut_body() -> None:
    """In-process (ASGI), LimitData fails the client's request with httpx2's RemoteProtocolError."""
    server = tools(TestMcpServer(), "t")
    server.fail_next_call(faults.LimitData(bytes=5), tool="t")
    async with asgi_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        with pytest.raises(httpx2.RemoteProtocolError):
            await wire.post(call("t"))
    assert server.executions("t") == 1


# -- SlowClose --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
async def test_slow_close_sends_the_answer_and_ends_late(serve: Serve, framing: str) -> None:
    """SlowClose: the whole answer, Connection: close, and the connection's end no sooner than `delay_s`."""
    server = tools(serve(response_mode=framing), "t")
    server.fail_next_call(faults.SlowClose(delay_s=0.3), tool="t")
    exchange = await raw_call(server)
    assert exchange.ended
    assert exchange.error is None
    data = exchange.body if framing == "json" else exchange.body.split(b"data: ", 1)[1]
    assert json.loads(data)["result"]["content"] == CONTENT
    assert exchange.header("connection") == "close"
    assert exchange.elapsed_s >= 0.3
    assert server.calls("t")[0].error == "ended the response 0.3 s after its last byte by a fault (SlowClose)"


# -- the SDK client ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    "fault",
    [faults.Latency(0.05, seed=1), faults.Bandwidth(800), faults.Slice(seed=2, gap_s=0.002), faults.SlowClose(0.05)],
    ids=repr,
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_gets_the_answer_through_shaped_bytes(
    serve: Serve, framing: str, fault: Any, mode: str
) -> None:
    """The SDK client (legacy mode, and auto mode landing on 2026-07-28) returns the normal result through a late,
    paced, sliced or slowly closed answer."""
    server = tools(serve(response_mode=framing), "t")
    server.fail_next_call(fault, tool="t")
    with anyio.fail_after(LIMIT_S):
        async with Client(server.url, mode=mode) as client:  # type: ignore[arg-type]
            result = await client.call_tool("t", {})
    assert result.content[0].text == "t ran"  # type: ignore[union-attr]
    assert server.calls("t")[0].fault == fault
    assert server.calls("t")[0].era == ("stateless" if mode == "auto" else "handshake")
    assert server.executions("t") == 1


@pytest.mark.parametrize(
    ("fault", "error"),
    [(faults.LimitData(bytes=20), httpx2.RemoteProtocolError), (faults.ResetPeer(), httpx2.ReadError)],
    ids=["LimitData", "ResetPeer"],
)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_sdk_client_loses_the_connection_on_a_cut_or_reset_answer(
    serve: Serve, fault: Any, error: type[Exception], mode: str
) -> None:
    """As on a Drop, `async with Client` raises a group holding httpx2's error for a cut body or a reset, in either
    mode; the tool ran once."""
    server = tools(serve(), "t")
    server.fail_next_call(fault, tool="t")
    with anyio.fail_after(LIMIT_S):
        with pytest.raises(Exception) as caught:  # noqa: PT011 - the group is checked below
            async with Client(server.url, mode=mode) as client:  # type: ignore[arg-type]
                await client.call_tool("t", {})
    assert caught.group_contains(error)
    assert server.executions("t") == 1


# -- the wrapper, for another writer of answers -----------------------------------------------------------------------


class _OwnWire:
    """The connection of a writer of answers of its own (a proxy), as `Effect.wrap_send` asks for it."""

    def __init__(self, seq: int) -> None:
        from mcp_testkit.journal import Headers, Record

        self.record = Record(seq, 0.0, "POST", "/mcp", Headers({}), b"")
        self.ends: list[str] = []

    async def close(self) -> None:
        self.ends.append("close")

    async def reset(self) -> None:
        self.ends.append("reset")


async def _wrapped(fault: faults.Fault, wire: _OwnWire, body: bytes) -> list[Any]:
    from mcp_testkit.server._effects import effect_of

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    effect = effect_of(fault)
    assert effect is not None
    shaped = effect.wrap_send(send, wire)
    await shaped({"type": "http.response.start", "status": 200, "headers": []})
    await shaped({"type": "http.response.body", "body": body})
    return sent


async def test_another_writer_wrapping_its_send_gets_the_servers_pieces(serve: Serve) -> None:
    """A writer of its own that wraps its ASGI send with the fault's effect writes the pieces the server wrote for
    the same seed and request number: the bytes a proxy applying the fault would send."""
    server = tools(serve(response_mode="sse"), "t")
    server.fail_next_call(faults.Slice(seed=5, gap_s=0.0), tool="t")
    exchange = await raw_call(server)
    (record,) = server.calls("t")
    sent = await _wrapped(faults.Slice(seed=5, gap_s=0.0), _OwnWire(record.seq), exchange.body)
    pieces = [len(message["body"]) for message in sent[1:] if message["body"]]
    assert pieces == exchange.chunks
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}


async def test_another_writer_is_told_to_close_or_reset_its_connection() -> None:
    """Through the wrapper, LimitData writes its bytes then closes the writer's connection, and ResetPeer resets it
    at the head; nothing is sent after."""
    cut = _OwnWire(1)
    sent = await _wrapped(faults.LimitData(bytes=4), cut, b"0123456789")
    assert [message.get("body") for message in sent] == [None, b"0123"]
    assert cut.ends == ["close"]
    reset = _OwnWire(1)
    assert await _wrapped(faults.ResetPeer(), reset, b"0123456789") == []
    assert reset.ends == ["reset"]
