"""Scripting from other threads while traffic flows: no deadlock, no 'changed size during iteration'."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator

import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults

from ._support import LIMIT_S, exchange, http_request, initialize, post_headers


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads very often, so that a race shows up within a few thousand operations."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def test_scripting_from_a_thread_never_waits_on_a_blocked_event_loop() -> None:
    """Item 4: server.tool() from the test thread returns while a handler holds the loop and a GET stream is open."""
    server = TestMcpServer(get_stream=True)
    entered, release = threading.Event(), threading.Event()

    def blocking(arguments: dict[str, object]) -> str:
        entered.set()
        release.wait(LIMIT_S)  # a sync handler that holds the event loop, as a slow one does
        server.tool("added_by_handler")  # and scripts the server from the loop
        return "done"

    server.tool("blocking")(blocking)
    with server, httpx2.Client(base_url=server.base_url, timeout=LIMIT_S) as client:
        session_id = initialize(server.port)
        headers = {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25", "accept": "text/event-stream"}
        with client.stream("GET", "/mcp", headers=headers) as stream:
            assert stream.status_code == 200
            call = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "blocking"}})
            answers: list[int] = []
            caller = threading.Thread(
                target=lambda: answers.append(
                    exchange(
                        server.port, http_request("POST", "/mcp", post_headers(server.port, session_id), call.encode())
                    ).status
                ),
            )
            caller.start()
            assert entered.wait(LIMIT_S)
            scripted = threading.Thread(target=lambda: server.tool("added_by_test"), daemon=True)
            scripted.start()
            scripted.join(LIMIT_S)
            blocked = scripted.is_alive()
            release.set()
            assert not blocked, "server.tool() blocked on the event loop while a handler held it"
            caller.join(LIMIT_S)
            assert answers == [200]
            lines = []
            for line in stream.iter_lines():
                if line.startswith("data:"):
                    lines.append(json.loads(line[5:]))
                if len(lines) == 2:
                    break
    assert {m["method"] for m in lines} == {"notifications/tools/list_changed"}
    assert {"blocking", "added_by_test", "added_by_handler"} <= set(server.tools)


def _script(server: TestMcpServer, step: int) -> None:
    """One scripting call, a different one each step: the methods a test calls while its bridge works."""
    name = f"tool_{step % 50}"
    actions = [
        lambda: server.tool(name),
        lambda: server.remove_tool(name) if name in server.tools else server.tool(name),
        lambda: server.inject(faults.ErrorResult("never"), tool="absent"),
        lambda: server.pending_faults(),
        lambda: setattr(server, "page_size", 1 + step % 3),
        lambda: setattr(server, "response_mode", "json"),
        lambda: [session.requests for session in server.sessions],
        lambda: server.sessions.alive,
        lambda: server.journal.requests("initialize"),
        lambda: server.journal.format(limit=5),
        lambda: server.session() if len(server.sessions) else None,
        lambda: repr(server),
    ]
    actions[step % len(actions)]()


def test_scripting_is_thread_safe_while_clients_initialize(busy_switching: None) -> None:
    """Item 5: scripting from the test thread while 4 clients open 600 sessions never fails, nor does the server."""
    server = TestMcpServer()
    errors: list[BaseException] = []
    statuses: list[int] = []

    def clients() -> None:
        try:
            for _ in range(150):
                session_id = initialize(server.port)
                statuses.append(200 if session_id else 0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    with server:
        threads = [threading.Thread(target=clients) for _ in range(4)]
        for thread in threads:
            thread.start()
        calls = 0
        try:
            while any(thread.is_alive() for thread in threads) or calls < 3000:
                _script(server, calls)
                calls += 1
        finally:
            for thread in threads:
                thread.join(LIMIT_S)
    assert errors == []
    assert statuses == [200] * 600
    assert len(server.sessions) == 600
    assert [r.status for r in server.journal if r.status is not None and r.status >= 500] == []
    server.check()
