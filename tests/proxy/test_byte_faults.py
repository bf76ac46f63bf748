"""Faults at the level of bytes in front of a real server: the proxy shapes the upstream's answer with the same
wrappers as the fake (`Effect.wrap_send`), so a client sees the same pieces, cut answers and resets."""

from __future__ import annotations

import re

import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy

from ._wire import ACCEPT, INIT, answer, open_session, request

LIMIT_S = 60.0
CALL = {"name": "add", "arguments": {}}


@pytest.fixture
def fake() -> TestMcpServer:
    server = TestMcpServer("upstream")
    server.tool("add", returns="add ran")
    return server


def test_slice_writes_the_upstream_s_answer_in_pieces(fake: TestMcpServer) -> None:
    """Slice(pieces=4) in the proxy: the upstream's answer goes out in four writes (the journal names their sizes,
    which add up to the body the client got), and the client reads the whole answer."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.Slice(seed=3, pieces=4, gap_s=0.01), tool="add")
        response = request(client, proxy.url, session, "tools/call", CALL)
        assert answer(response)["result"]["content"][0]["text"] == "add ran"
    assert fake.executions("add") == 1
    [record] = proxy.journal.calls("add")
    assert record.fault == faults.Slice(seed=3, pieces=4, gap_s=0.01)
    found = re.search(r"answered in writes of ([\d, ]+) bytes by a fault \(Slice", record.error or "")
    assert found, record.error
    sizes = [int(size) for size in found.group(1).split(", ")]
    assert len(sizes) == 4
    assert sum(sizes) == len(response.content)


def test_limit_data_cuts_the_answer_after_n_bytes(fake: TestMcpServer) -> None:
    """LimitData(20): the upstream ran the call, the client got 20 bytes of the answer and then the end."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.LimitData(20), tool="add")
        with pytest.raises(httpx2.RemoteProtocolError):
            request(client, proxy.url, session, "tools/call", CALL)
        assert fake.executions("add") == 1
        assert answer(request(client, proxy.url, session, "tools/call", CALL, 2), 2)["result"]
    proxy.check(unused_faults=True)


def test_reset_peer_after_execution_runs_the_call_once_and_resets(fake: TestMcpServer) -> None:
    """ResetPeer(after_execution=True): the upstream ran the call once; the client's read fails with a reset."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.ResetPeer(after_execution=True), tool="add")
        with pytest.raises((httpx2.ReadError, httpx2.RemoteProtocolError)):
            request(client, proxy.url, session, "tools/call", CALL)
        assert fake.executions("add") == 1
        assert client.post(proxy.url, json=INIT, headers=ACCEPT).status_code == 200  # the proxy keeps serving


def test_reset_peer_before_execution_never_reaches_the_upstream(fake: TestMcpServer) -> None:
    """ResetPeer(after_execution=False): the connection is reset before the call is forwarded."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.ResetPeer(after_execution=False), tool="add")
        with pytest.raises((httpx2.ReadError, httpx2.RemoteProtocolError)):
            request(client, proxy.url, session, "tools/call", CALL)
        assert fake.executions("add") == 0
