"""Bounded memory for long runs: journal_limit drops the oldest records, sessions are evicted, serve has flags."""

from __future__ import annotations

import json

import httpx2
import pytest

from mcp_testkit import TestMcpServer

from ._support import INNER_INI, LIMIT_S, exchange, http_request, initialize, ping, post_headers, serve_process


def test_journal_limit_keeps_the_newest_records_and_counts_the_dropped() -> None:
    """Item 11: journal_limit=5 keeps the 5 newest records, seq goes on, and dropped, repr and format say so."""
    server = TestMcpServer(journal_limit=5)
    with server:
        session_id = initialize(server.port)
        for request_id in range(10):
            ping(server.port, session_id, request_id)
    journal = server.journal
    assert len(journal) == 5
    assert journal.dropped == 7
    assert [record.seq for record in journal] == [8, 9, 10, 11, 12]
    assert "7 dropped" in repr(journal)
    assert "7 older requests dropped" in journal.format()
    assert "journal_limit=5" in journal.format()
    journal.clear()
    assert (len(journal), journal.dropped) == (0, 0)


def test_journal_limit_is_named_in_a_failure_report(pytester: pytest.Pytester) -> None:
    """Item 11: a failing test's journal section says how many older requests were dropped."""
    pytester.makeini(INNER_INI)
    pytester.makepyfile(
        """
        import httpx2
        import pytest

        @pytest.mark.mcp_server(journal_limit=2)
        def test_many(mcp_server):
            with httpx2.Client() as client:
                for _ in range(5):
                    client.post(mcp_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert False
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*3 older requests dropped (journal_limit=2)*"])


def test_session_limit_evicts_ended_then_least_recent_sessions() -> None:
    """Item 11: with session_limit=3 the table never holds more than 3 sessions; evicted ids get 404."""
    server = TestMcpServer(session_limit=3)
    with server:
        ids = [initialize(server.port) for _ in range(5)]
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        first = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, ids[0]), body))
        last = ping(server.port, ids[-1])
    assert len(server.sessions) == 3
    assert first.status == 404
    assert last["result"] == {}


def test_idle_sessions_are_ended_and_evicted() -> None:
    """Item 11: session_idle_timeout_s=0 ends every idle session when the next one opens (their ids get 404)."""
    server = TestMcpServer(session_idle_timeout_s=0)
    with server:
        older = initialize(server.port)
        newer = initialize(server.port)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}).encode()
        reply = exchange(server.port, http_request("POST", "/mcp", post_headers(server.port, older), body))
    assert reply.status == 404
    assert [s.id for s in server.sessions] == [newer]


def test_serve_journal_limit_bounds_the_admin_journal() -> None:
    """Item 11: `serve --journal-limit 3` keeps three records; /health says how many were dropped."""
    with serve_process("--admin", "--journal-limit", "3") as (url, admin, token):
        with httpx2.Client(timeout=LIMIT_S) as client:
            for _ in range(7):
                client.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            health = client.get(f"{admin}/health", headers={"authorization": f"Bearer {token}"}).json()
            journal = client.get(f"{admin}/journal", headers={"authorization": f"Bearer {token}"}).json()
    assert (health["requests"], health["dropped"]) == (3, 4)
    assert journal["count"] == 3
