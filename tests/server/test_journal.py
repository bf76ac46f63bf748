"""The journal: what each Record holds, queries, the ledger, near-miss assertions, JSONL export."""

from __future__ import annotations

import gc
import json
import threading

import anyio
import pytest
from cancellable import slow_server, until_running

from mcp_testkit import Headers, Journal, TestMcpServer, ToolError, faults

from ._support import LATEST, LIMIT_S, Stateless, rpc, serving

pytestmark = pytest.mark.anyio


def _server() -> TestMcpServer:
    server = TestMcpServer("j")
    server.tool("create", returns="created")
    server.tool("search", read_only=True, returns="found")
    server.tool("broken", returns=ToolError("down"))
    return server


async def test_a_call_record_holds_the_whole_exchange(via: str) -> None:
    """A tools/call record has seq, time, HTTP and JSON-RPC details, tool, arguments, session, version, answer."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("create", {"title": "t"}, request_id=4)
    record = server.calls("create")[0]
    assert record.seq == 3
    assert record.at >= server.journal[0].at
    assert (record.http_method, record.path) == ("POST", "/mcp")
    assert record.headers["MCP-Session-Id"] == record.headers["mcp-session-id"] == wire.session_id
    assert "Content-Type" in record.headers
    assert json.loads(record.body) == record.message
    assert (record.rpc_method, record.rpc_id) == ("tools/call", 4)
    assert record.params == {"name": "create", "arguments": {"title": "t"}}
    assert (record.tool, record.arguments) == ("create", {"title": "t"})
    assert (record.session_id, record.protocol_version) == (wire.session_id, LATEST)
    assert record.status == 200
    assert record.response == {"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "created"}]}}
    assert record.fault is None
    assert record.executed is True
    assert record.error is None


async def test_refused_requests_are_recorded_with_why(via: str) -> None:
    """A refused request is in the journal, in arrival order, with its status and the reason."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.post(content=b"nope")
        await wire.post(rpc("ping"))
    first, second = server.journal.records
    assert (first.seq, first.status, first.message) == (1, 400, None)
    assert first.body == b"nope"
    assert "not JSON" in (first.error or "")
    assert (second.seq, second.status, second.rpc_method) == (2, 400, "ping")
    assert "Mcp-Session-Id" in (second.error or "")


async def test_queries_filter_by_method_tool_session_http_method_and_status(via: str) -> None:
    """requests() filters on every field given; calls() keeps tools/call; sessions lists ids and liveness."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        first = wire.session_id
        await wire.call("create", {"n": 1})
        await wire.call("search", {"q": "a"}, request_id=2)
        await wire.send("DELETE")
        wire.session_id = None
        await wire.initialize()
        await wire.call("create", {"n": 2})
    journal = server.journal
    assert [r.arguments for r in journal.requests("tools/call", tool="create")] == [{"n": 1}, {"n": 2}]
    assert len(journal.requests(session_id=first)) == 5
    assert [r.rpc_method for r in journal.requests(session_id=None)] == []
    assert [r.status for r in journal.requests(http_method="delete")] == [200]
    assert len(journal.requests(status=202)) == 2
    assert [r.tool for r in server.calls()] == ["create", "search", "create"]
    assert [r.arguments for r in server.calls("create")] == [{"n": 1}, {"n": 2}]
    assert [(s.id, s.alive) for s in server.sessions] == [(first, False), (wire.session_id, True)]
    assert server.session().id == wire.session_id
    assert server.session(first).alive is False
    assert (journal.called, journal.call_count, len(journal)) == (True, 8, 8)
    assert journal.last.tool == "create"


async def test_the_ledger_counts_handler_runs_only(via: str) -> None:
    """executions() counts handler runs: tool errors count, unknown tools and invalid arguments do not."""
    server = _server()
    server.tool("strict", input_schema={"type": "object", "required": ["x"]}, returns="ok")
    async with serving(server, via) as wire:
        await wire.initialize("2025-06-18")
        await wire.call("create")
        await wire.call("broken", request_id=2)
        await wire.post(rpc("tools/call", {"name": "nope"}, 3))
        await wire.post(rpc("tools/call", {"name": "strict", "arguments": {}}, 4))
    assert (server.executions("create"), server.executions("broken"), server.executions("strict")) == (1, 1, 0)
    assert server.executions("nope") == 0
    assert server.executions() == 2
    assert [r.executed for r in server.calls()] == [True, True, None, False]


async def test_assert_called_passes_and_returns_the_matching_calls(via: str) -> None:
    """assert_called checks a tool was called, how often and with which arguments, and returns those calls."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("create", {"title": "a"})
        await wire.call("create", {"title": "b"}, request_id=2)
    journal = server.journal
    assert len(journal.assert_called("create")) == 2
    assert len(journal.assert_called("create", times=2)) == 2
    [only] = journal.assert_called("create", times=1, arguments={"title": "b"})
    assert only.rpc_id == 2
    journal.assert_called("search", times=0)
    journal.assert_not_called("search")


async def test_assert_called_lists_the_near_misses(via: str) -> None:
    """A failed assert_called lists the calls the server did receive, with their arguments and statuses."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("create", {"title": "a"})
        await wire.call("search", {"q": "x"}, request_id=2)
    with pytest.raises(AssertionError) as failure:
        server.journal.assert_called("create", times=1, arguments={"title": "b"})
    assert str(failure.value).splitlines() == [
        "expected tool 'create' with arguments {'title': 'b'} to be called 1 time, it was called 0 times",
        "calls the server received:",
        '  #3 create({"title": "a"}) -> 200',
        '  #4 search({"q": "x"}) -> 200',
    ]
    with pytest.raises(AssertionError, match="called at #3"):
        server.journal.assert_not_called("create")


async def test_assert_called_without_any_call_names_what_did_arrive(via: str) -> None:
    """With no tools/call at all, the message says so and names the requests that did arrive."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
    with pytest.raises(AssertionError, match="no tools/call at all\nrequests it did receive: initialize"):
        server.journal.assert_called("create")


async def test_to_jsonl_redacts_credentials_and_required_headers(via: str) -> None:
    """to_jsonl() writes one JSON line per record, with Authorization and required headers' values as ***."""
    server = _server()
    server.require_header("Authorization", "Bearer s3cret")
    server.require_header("X-Api-Key", "k3y")
    async with serving(server, via) as wire:
        wire.client.headers.update({"authorization": "Bearer s3cret", "x-api-key": "k3y", "x-other": "visible"})
        await wire.initialize()
        await wire.call("create")
    exported = server.journal.to_jsonl()
    assert "s3cret" not in exported
    assert "k3y" not in exported
    lines = [json.loads(line) for line in exported.splitlines()]
    assert len(lines) == len(server.journal) == 3
    assert lines[0]["headers"]["authorization"] == "***"
    assert lines[0]["headers"]["x-api-key"] == "***"
    assert lines[0]["headers"]["x-other"] == "visible"
    assert lines[2]["tool"] == "create"
    assert lines[2]["response"]["result"]["content"][0]["text"] == "created"
    raw = server.journal.to_jsonl(redact=False)
    assert "s3cret" in raw
    assert "k3y" in raw


def test_passwords_credentials_and_signatures_are_redacted_but_challenges_are_not() -> None:
    """The one redaction policy, which cassettes share, hides password, credential and signature headers."""
    from mcp_testkit import Record

    journal = Journal()
    sent = {"X-Password": "pw", "X-Credential": "cr", "X-Amz-Signature": "sig", "WWW-Authenticate": 'Bearer realm="r"'}
    journal.writer.begin(Record(1, 0.0, "POST", "/mcp", Headers(sent), b"{}"), numbered=True)
    exported = json.loads(journal.to_jsonl())["headers"]
    assert exported == {
        "x-password": "***",
        "x-credential": "***",
        "x-amz-signature": "***",
        "www-authenticate": 'Bearer realm="r"',
    }


def test_to_jsonl_of_an_unparsed_body_keeps_the_body() -> None:
    """A record whose body was not JSON exports the body text (or hex when it is not UTF-8)."""
    from mcp_testkit import Record

    journal = Journal()
    journal.writer.begin(Record(1, 0.0, "POST", "/mcp", Headers({"Cookie": "c"}), b"\xff\x00"), numbered=True)
    journal.writer.begin(Record(2, 0.0, "POST", "/mcp", Headers(), b"{oops"), numbered=True)
    first, second = (json.loads(line) for line in journal.to_jsonl().splitlines())
    assert (first["body"], first["headers"]) == ("ff00", {"cookie": "***"})
    assert second["body"] == "{oops"


async def test_format_prints_one_line_per_request(via: str) -> None:
    """format() is one summary line per request, and says when there are more than its limit."""
    server = _server()
    assert server.journal.format() == "(no requests)"
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("create")
    lines = server.journal.format().splitlines()
    assert lines[0].startswith("#1 POST session=")
    assert lines[0].endswith("initialize -> 200")
    assert lines[2].endswith("tools/call create -> 200")
    assert server.journal.format(limit=1).splitlines()[1] == "... and 2 more requests"


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_summary_marks_an_error_result_and_a_json_rpc_error(via: str, response_mode: str) -> None:
    """Summary and near-miss lines mark a tool's error result `-> 200 isError`, an RPC error `-> 200 error -32602`."""
    server = TestMcpServer("j", response_mode=response_mode)
    server.tool("create", returns="created")
    server.tool("broken", returns=ToolError("down"))
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("broken")
        refused = await wire.request("tools/call", {"name": "no_such_tool", "arguments": {}}, request_id=7)
        await wire.call("create")
    assert refused["error"]["code"] == -32602
    summaries = [record.summary() for record in server.journal.requests("tools/call")]
    assert [line.split(" -> ")[1] for line in summaries] == ["200 isError", "200 error -32602", "200"]
    assert summaries[0].endswith("tools/call broken -> 200 isError")
    with pytest.raises(AssertionError) as near_miss:
        server.journal.assert_called("create", arguments={"title": "t"})
    assert "  #3 broken({}) -> 200 isError\n" in str(near_miss.value)
    assert "no_such_tool({}) -> 200 error -32602\n" in str(near_miss.value)


def test_an_empty_journal() -> None:
    """An empty journal has no last record, no calls, and waiting on it times out."""
    journal = TestMcpServer().journal
    assert (journal.called, journal.call_count, journal.calls()) == (False, 0, [])
    with pytest.raises(IndexError, match="no request"):
        _ = journal.last
    with pytest.raises(TimeoutError):
        journal.wait_for(lambda j: j.called, timeout_s=0.01)


def test_headers_are_case_insensitive() -> None:
    """Headers look names up in any case and join repeated headers with commas."""
    headers = Headers([(b"X-Thing", b"a"), (b"x-thing", b"b"), (b"Accept", b"*/*")])
    assert headers["X-THING"] == "a,b"
    assert headers.get("accept") == "*/*"
    assert "ACCEPT" in headers
    assert headers.get("missing", "-") == "-"


@pytest.mark.parametrize("response_mode", ["json", "sse"])
async def test_finished_records_cost_the_garbage_collector_nothing(via: str, response_mode: str) -> None:
    """Once answered, every record (faulted, refused, stateless ones too) is a tuple the collector does not track."""
    server = TestMcpServer("j", response_mode=response_mode)
    server.tool("create", returns="created")
    fault = faults.ErrorResult("scripted")
    server.inject(fault, method="tools/call", tool="create", nth=3, times=5)
    async with serving(server, via) as wire:
        await wire.initialize()
        for n in range(40):
            await wire.call("create", {"n": n})
        await wire.post(content=b"nope")
        await Stateless(wire).result("tools/call", {"name": "create", "arguments": {"n": 40}})
    gc.collect()
    stored = list(server.journal._records)
    assert len(stored) == 44
    assert all(type(row) is tuple for row in stored)
    assert [row for row in stored if gc.is_tracked(row)] == []
    calls = server.calls("create")
    assert [call.arguments for call in calls] == [{"n": n} for n in range(41)]
    assert [call.fault for call in calls].count(fault) == 5
    assert calls[2].fault is fault
    assert calls[2].response["result"] == {"content": [{"type": "text", "text": "scripted"}], "isError": True}
    assert calls[-1].era == "stateless"
    assert server.journal.last == server.journal[-1] == calls[-1]
    assert [row for row in server.journal._records if gc.is_tracked(row)] == [], "reading re-tracked a row"


async def test_a_large_journal_adds_almost_no_tracked_objects() -> None:
    """A hundred more calls over a socket leave the collector with about as many tracked objects as before."""
    server = _server()
    # Over a socket: in-process, the ASGI transport leaves timer handles of its own on the loop.
    async with serving(server, "socket") as wire:
        await wire.initialize()
        await wire.call("create")
        gc.collect()
        before = len(gc.get_objects())
        for n in range(100):
            await wire.call("create", {"n": n})
        gc.collect()
        after = len(gc.get_objects())
    assert len(server.calls("create")) == 101
    assert after - before < 50, f"{after - before} more tracked objects after 100 calls"


def test_rows_replace_their_own_records_whatever_order_requests_finish_in() -> None:
    """A finished record becomes a row in its own place, out of order too; one the limit dropped stays out."""
    from mcp_testkit import Record

    journal = Journal(limit=3)
    records = [Record(n, float(n), "POST", "/mcp", Headers({"X-N": str(n)}), b"{}") for n in range(1, 5)]
    for record in records:
        journal.writer.begin(record, numbered=True)  # the fourth drops the first (journal_limit=3)
    for record in (records[3], records[1], records[0]):
        journal.writer.finish(record)
    assert [type(item).__name__ for item in journal._records] == ["tuple", "Record", "tuple"]
    assert [record.headers["X-N"] for record in journal] == ["2", "3", "4"]
    journal.writer.finish(records[2])
    assert all(type(item) is tuple for item in journal._records)
    assert journal.records == records[1:]
    assert journal.dropped == 1


def _slow_server() -> tuple[TestMcpServer, threading.Event]:
    """A server whose 'slow' tool waits until cancelled, and the event it sets once it runs."""
    return slow_server(LIMIT_S, name="j")


async def _until(running: threading.Event) -> None:
    await until_running(running, LIMIT_S)


async def test_a_cancel_notification_names_the_call_it_cancels(via: str) -> None:
    """Handshake era: `Record.cancels` is the id a notifications/cancelled names; `cancelled()` finds that call."""
    server, running = _slow_server()
    async with serving(server, via) as wire:
        await wire.initialize()
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(wire.post, rpc("tools/call", {"name": "slow", "arguments": {}}, 7))
                await _until(running)
                notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                assert (await wire.post(notification)).status_code == 202
            await wire.call("search", request_id=8)
    note = server.journal.requests("notifications/cancelled")[0]
    assert note.cancels == 7
    assert server.journal.requests("tools/call", tool="search")[0].cancels is None
    [call] = server.journal.assert_cancelled("slow")
    assert (call.rpc_id, call.tool, call.session_id) == (7, "slow", note.session_id)
    assert server.journal.assert_cancelled(request_id=7) == [call]
    assert server.journal.cancellations() == [(note, call)]
    with pytest.raises(AssertionError) as failure:
        server.journal.assert_cancelled("search")
    message = str(failure.value)
    assert message.startswith("expected the client to cancel a call of tool 'search', it did not")
    assert f"#{note.seq} notifications/cancelled -> #{call.seq} tools/call slow (id 7)" in message
    assert "id=8" in message  # the calls that did arrive


async def test_a_cancel_naming_no_request_cancels_nothing(via: str) -> None:
    """A notifications/cancelled naming an id never sent links to no record; assert_cancelled says so."""
    server, _running = _slow_server()
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.call("search", request_id=3)
        notification = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
        await wire.post(notification)
    [(note, target)] = server.journal.cancellations()
    assert (note.cancels, target) == (99, None)
    assert server.journal.cancelled() == []
    with pytest.raises(AssertionError, match=r"-> no request \(id 99\)"):
        server.journal.assert_cancelled(request_id=99)


async def test_closing_a_stateless_call_s_stream_is_its_cancellation(via: str) -> None:
    """2026-07-28: a call whose client closes its stream before the answer is cancelled and recorded as such."""
    server, running = _slow_server()
    async with serving(server, via) as wire:
        modern = Stateless(wire)
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(modern.post, "tools/call", {"name": "slow", "arguments": {}}, 5)
                await _until(running)
                group.cancel_scope.cancel()
            await anyio.to_thread.run_sync(
                lambda: server.journal.wait_for(lambda j: j.calls("slow")[0].error is not None, LIMIT_S)
            )
            assert await modern.result("tools/call", {"name": "search", "arguments": {}}, 6)
    [call] = server.journal.assert_cancelled("slow", request_id=5)
    assert call.cancelled_by_client
    assert call.era == "stateless"
    assert call.error == "cancelled by the client: it closed the request's stream (2026-07-28); nothing sent"
    assert server.journal.cancellations() == [(call, call)]
    assert not server.journal.calls("search")[0].cancelled_by_client
