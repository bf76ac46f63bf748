"""The fault plan in front of a real server: each fault the proxy applies, what the client got, what the journal
says, and what the upstream itself saw (its own journal); the faults it cannot apply are refused, with the reason."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy

from ._wire import ACCEPT, answer, messages, open_session, request

LIMIT_S = 60.0
CALL = {"name": "add", "arguments": {}}


@pytest.fixture
def fake() -> TestMcpServer:
    server = TestMcpServer("upstream", page_size=2)
    for name in ("add", "echo", "shout", "bump", "count"):
        server.tool(name, returns=f"{name} ran")
    return server


def _calls(server: TestMcpServer) -> int:
    return len(server.journal.requests("tools/call"))


def test_drop_after_execution_runs_the_call_upstream_and_loses_the_answer(fake: TestMcpServer) -> None:
    """Drop(after_execution=True): the upstream ran the call once, the client's connection closed without an
    answer."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.Drop(after_execution=True), tool="add")
        with pytest.raises(httpx2.RemoteProtocolError):
            request(client, proxy.url, session, "tools/call", CALL)
        assert fake.executions("add") == 1
        record = proxy.journal.calls("add")[0]
        assert record.fault == faults.Drop(after_execution=True)
        assert record.error == "connection dropped by a fault"
        proxy.check(unused_faults=True)


def test_drop_before_never_reaches_the_upstream(fake: TestMcpServer) -> None:
    """Drop(): the connection closes and the upstream never sees the call."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.Drop(), tool="add")
        with pytest.raises(httpx2.RemoteProtocolError):
            request(client, proxy.url, session, "tools/call", CALL)
        assert _calls(fake) == 0
        assert request(client, proxy.url, session, "tools/call", CALL, 2).status_code == 200
        assert fake.executions("add") == 1


def test_lose_session_answers_404_from_then_on(fake: TestMcpServer) -> None:
    """LoseSession: this request and every later one on the session get 404 from the proxy, never forwarded."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.LoseSession(), method="tools/call")
        for request_id in (1, 2):
            response = request(client, proxy.url, session, "tools/call", CALL, request_id)
            assert response.status_code == 404
            assert response.json()["error"]["message"] == "Session not found"
        assert _calls(fake) == 0
        # The second 404 is the proxy's own refusal of a lost session: the journal says it ran nothing, as the fake's.
        assert [record.executed for record in proxy.journal.calls("add")] == [False, False]
        other = open_session(client, proxy.url)
        assert request(client, proxy.url, other, "tools/call", CALL).status_code == 200


def test_restart_loses_every_session(fake: TestMcpServer) -> None:
    """Restart(400): every session seen through the proxy gets 400 from then on."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        first, second = open_session(client, proxy.url), open_session(client, proxy.url)
        proxy.inject(faults.Restart(unknown_session_status=400), method="tools/call")
        assert request(client, proxy.url, first, "tools/call", CALL).status_code == 400
        assert request(client, proxy.url, second, "tools/call", CALL).status_code == 400


def test_expire_session_serves_n_more_requests(fake: TestMcpServer) -> None:
    """ExpireSession(after_requests=1): one more request goes through, the next gets 404."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.ExpireSession(after_requests=1), method="tools/call")
        statuses = [request(client, proxy.url, session, "tools/call", CALL, n).status_code for n in (1, 2, 3)]
        assert statuses == [200, 200, 404]
        # Journaled before the answers' last bytes went on: read at once, over a real socket.
        assert [record.executed for record in proxy.journal.calls("add")] == [True, True, False]


@pytest.mark.parametrize("status", [500, 503])
def test_http_status_answers_instead_of_the_upstream(fake: TestMcpServer, status: int) -> None:
    """HttpStatus: the client gets the status; the upstream never sees the call."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.HttpStatus(status))
        assert request(client, proxy.url, session, "tools/call", CALL).status_code == status
        assert _calls(fake) == 0
        assert proxy.journal.calls("add")[0].executed is False


def test_error_result_and_protocol_error_replace_the_call(fake: TestMcpServer) -> None:
    """ErrorResult and ProtocolError answer for the upstream, which never runs the call."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.ErrorResult("quota exceeded"))
        result = answer(request(client, proxy.url, session, "tools/call", CALL))["result"]
        assert result["isError"] is True
        assert result["content"][0]["text"] == "quota exceeded"
        proxy.fail_next_call(faults.ProtocolError(-32000, "busy"))
        assert answer(request(client, proxy.url, session, "tools/call", CALL, 2), 2)["error"]["code"] == -32000
        assert _calls(fake) == 0


def test_delay_and_late_answer_still_answer(fake: TestMcpServer) -> None:
    """Delay holds the request and LateAnswer the answer; both answers still arrive, and the upstream ran each call."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.Delay(0.05))
        proxy.inject(faults.LateAnswer(0.05), method="tools/call", nth=2)
        for request_id in (1, 2):
            result = answer(request(client, proxy.url, session, "tools/call", CALL, request_id), request_id)
            assert result["result"]["content"][0]["text"] == "add ran"
        assert fake.executions("add") == 2
        proxy.check(unused_faults=True)


def test_break_stream_keeps_the_rest_for_a_resume(sdk_url: str) -> None:
    """BreakStream(after_events=1): the stream ends after one event with an id of the proxy's; a GET with that
    Last-Event-ID gets the rest, the upstream's answer among them. With after_events=0 nothing is resumable."""
    with ChaosProxy(sdk_url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.BreakStream(after_events=0))
        first = request(client, proxy.url, session, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
        assert first.headers["content-type"].startswith("text/event-stream")
        assert messages(first) == []
        proxy.inject(faults.BreakStream(after_events=1, retry_s=0.5), method="tools/call", tool="count")
        progress = {"name": "count", "arguments": {"to": 2}, "_meta": {"progressToken": "t"}}
        broken = request(client, proxy.url, session, "tools/call", progress, 2)
        assert b"retry: 500" in broken.content
        assert [m["method"] for m in messages(broken)] == ["notifications/progress"]
        ids = [line.split(b": ", 1)[1] for line in broken.content.splitlines() if line.startswith(b"id: ")]
        headers = {"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": ids[-1].decode()}
        resumed = client.get(proxy.url, headers=headers)
        assert messages(resumed)[0]["params"]["progress"] == 2
        assert answer(resumed, 2)["result"]["content"][0]["text"] == "counted 2"
        assert "broken by a fault after 1 event" in (proxy.journal.calls("count")[0].error or "")


def test_never_answer_holds_the_call_until_the_client_leaves(fake: TestMcpServer) -> None:
    """NeverAnswer: headers, then nothing; the upstream never runs the call."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=httpx2.Timeout(LIMIT_S, read=0.5)) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.NeverAnswer())
        with pytest.raises(httpx2.ReadTimeout):
            request(client, proxy.url, session, "tools/call", CALL)
        assert _calls(fake) == 0


def test_dribble_and_wrong_content_type_shape_the_upstreams_answer(fake: TestMcpServer) -> None:
    """Dribble sends the upstream's answer slowly but whole; WrongContentType labels it text/html."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.Dribble(bytes_per_s=20_000))
        slow = answer(request(client, proxy.url, session, "tools/call", CALL))
        assert slow["result"]["content"][0]["text"] == "add ran"
        proxy.fail_next_call(faults.WrongContentType("text/html"))
        wrong = request(client, proxy.url, session, "tools/call", CALL, 2)
        assert wrong.headers["content-type"] == "text/html"
        assert fake.executions("add") == 2


def test_listing_faults_hit_the_upstreams_pages(fake: TestMcpServer) -> None:
    """PageError on page 2 (learnt from the upstream's cursor), DuplicateTool and EmptyCursor on page 1."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.DuplicateTool(), page=1)
        first = answer(request(client, proxy.url, session, "tools/list"))["result"]
        names = [tool["name"] for tool in first["tools"]]
        assert names == ["add", "echo", "add"]
        proxy.inject(faults.PageError(page=2, code=-32603, message="page two broke"))
        second = request(client, proxy.url, session, "tools/list", {"cursor": first["nextCursor"]}, 2)
        assert answer(second, 2)["error"]["message"] == "page two broke"
        proxy.inject(faults.EmptyCursor())
        empty = answer(request(client, proxy.url, session, "tools/list", None, 3), 3)["result"]
        assert empty["nextCursor"] == ""
        assert len(fake.journal.requests("tools/list")) == 2  # the page error was the proxy's, not the upstream's
        proxy.check(unused_faults=True)


def test_list_changed_rides_on_the_pages_own_stream(fake: TestMcpServer) -> None:
    """ListChanged: the page comes as SSE with notifications/tools/list_changed before it."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.ListChanged())
        sent = messages(request(client, proxy.url, session, "tools/list"))
        assert sent[0]["method"] == "notifications/tools/list_changed"
        assert [tool["name"] for tool in sent[-1]["result"]["tools"]] == ["add", "echo"]


def test_a_fault_on_a_request_of_the_wrong_era_is_an_error(fake: TestMcpServer) -> None:
    """A session fault hitting a stateless request: a 400 naming why, and `check()` fails the test."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        proxy.inject(faults.LoseSession(), era=None)
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                   "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}  # fmt: skip
        assert client.post(proxy.url, json=message, headers=headers).status_code == 400
        with pytest.raises(AssertionError, match="LoseSession"):
            proxy.check()


def test_an_unfired_fault_fails_check(fake: TestMcpServer) -> None:
    """check(unused_faults=True) names a fault that never fired."""
    with fake, ChaosProxy(fake.url) as proxy:
        proxy.fail_next_call(faults.ErrorResult("never"), tool="nobody")
        with pytest.raises(AssertionError, match="never fired"):
            proxy.check(unused_faults=True)


@pytest.mark.parametrize(
    ("fault", "why"),
    [
        (faults.Exit(), "stdio server's own process"),
        (faults.StopReading(), "stdio server's own process"),
        (faults.CatalogueChange(add=("x",)), "cannot add or remove a real server's tools"),
        (faults.EndlessPages(), "pages past its catalogue"),
        (faults.RepeatCursor(), "lead back to its own page"),
        (faults.UnsupportedVersion(), "cannot know which versions the upstream speaks"),
    ],
)
def test_faults_that_need_a_fake_are_refused_with_the_reason(fault: faults.Fault, why: str) -> None:
    """inject refuses a fault the proxy cannot apply in front of a real server, naming it and why."""
    proxy = ChaosProxy("http://127.0.0.1:1/mcp")
    with pytest.raises(ValueError, match=f"cannot apply {type(fault).__name__}: .*{why}"):
        proxy.inject(fault)
    assert proxy.pending_faults() == []


def test_unsupported_version_with_named_versions_is_applied(fake: TestMcpServer) -> None:
    """UnsupportedVersion(supported=[...]) refuses a stateless request with -32022 naming those versions."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        proxy.inject(faults.UnsupportedVersion(supported=["2099-01-01"]), method="server/discover")
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                   "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}  # fmt: skip
        response = client.post(proxy.url, json=message, headers=headers)
        assert response.status_code == 400
        assert response.json()["error"]["data"]["supported"] == ["2099-01-01"]
        assert len(fake.journal) == 0


def test_faults_are_anyio_safe_under_a_limit(fake: TestMcpServer) -> None:
    """The async context manager starts and stops the proxy from a running loop."""

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with fake, ChaosProxy(fake.url) as proxy:
                assert proxy.started
        assert not proxy.started

    anyio.run(go)


@pytest.mark.parametrize(
    ("fault", "expect"),
    [
        (faults.TruncateBody(), "cut"),
        (faults.EndStream(), "no events"),
        (faults.MalformedSse(), "garbage event"),
        (faults.Accepted(), "202"),
        (faults.HugeResult(size=200_000), "huge"),
    ],
)
def test_answer_shaping_faults_act_on_the_upstreams_answer(
    fake: TestMcpServer, fault: faults.Fault, expect: str
) -> None:
    """Each fault that shapes an answer shapes the upstream's (which ran the call), or answers instead of it."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(fault)
        response = request(client, proxy.url, session, "tools/call", CALL)
        if expect == "cut":
            assert response.content.startswith(b'{"jsonrpc":"2.0"')
            with pytest.raises(json.JSONDecodeError):
                json.loads(response.content)
        elif expect == "no events":
            assert response.headers["content-type"].startswith("text/event-stream")
            assert messages(response) == []
        elif expect == "garbage event":
            assert b"data: {this is not json" in response.content
        elif expect == "202":
            assert response.status_code == 202
            assert _calls(fake) == 0
            return
        else:
            text = answer(response)["result"]["content"][0]["text"]
            assert len(text) == 200_000
        assert fake.executions("add") == 1


def test_progress_only_beats_until_the_client_leaves(fake: TestMcpServer) -> None:
    """ProgressOnly: progress notifications with the call's token, never an answer; the upstream never runs it."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.fail_next_call(faults.ProgressOnly(interval_s=0.01))
        params = {**CALL, "_meta": {"progressToken": "p1"}}
        headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        with client.stream("POST", proxy.url, json=message, headers=headers) as stream:
            seen = b""
            for chunk in stream.iter_raw():
                seen += chunk
                if seen.count(b"notifications/progress") >= 2:
                    break
        assert b'"progressToken":"p1"' in seen
        assert _calls(fake) == 0


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (faults.DiscoverError(), None),
        (faults.HeaderMismatch(header="Mcp-Method"), -32020),
        (faults.MissingCapability(capabilities=("sampling",)), -32021),
    ],
)
def test_stateless_refusals_answer_for_the_upstream(
    fake: TestMcpServer, fault: faults.Fault, code: int | None
) -> None:
    """The 2026-07-28 era's refusals are answered by the proxy, and the upstream never sees the request."""
    with fake, ChaosProxy(fake.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        proxy.inject(fault, method="server/discover")
        headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover"}
        message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                   "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}  # fmt: skip
        response = client.post(proxy.url, json=message, headers=headers)
        assert response.status_code >= 400
        if code is not None:
            assert response.json()["error"]["code"] == code
        assert len(fake.journal) == 0
        assert proxy.journal.last.fault == fault


def test_a_rule_by_name_hits_the_read_and_the_prompt_it_names_before_the_upstream() -> None:
    """`name=` matches the URI of a read and the name of a prompt through the proxy (as `tool=` with their method
    does); the upstream never sees the requests hit, and serves the others."""
    upstream = TestMcpServer("offering")
    upstream.resource("file:///doc", text="doc")
    upstream.resource("file:///other", text="other")
    upstream.prompt("doc", messages=[{"role": "user", "content": "the doc prompt"}])
    with upstream, ChaosProxy(upstream.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        proxy.inject(faults.ProtocolError(message="named"), name="file:///doc")
        proxy.inject(faults.ProtocolError(message="by tool="), method="prompts/get", tool="doc")

        def outcome(method: str, params: dict[str, str], request_id: int) -> Any:
            got = answer(request(client, proxy.url, session, method, params, request_id), request_id)
            return got["error"]["message"] if "error" in got else got["result"]

        hit = outcome("resources/read", {"uri": "file:///doc"}, 2)
        other = outcome("resources/read", {"uri": "file:///other"}, 3)
        prompt = outcome("prompts/get", {"name": "doc"}, 4)
        again = outcome("resources/read", {"uri": "file:///doc"}, 5)
        proxy.check(unused_faults=True)
    assert (hit, prompt) == ("named", "by tool=")
    assert other["contents"][0]["text"] == "other"
    assert again["contents"][0]["text"] == "doc"
    assert [(r.params or {}).get("uri") for r in upstream.journal.requests("resources/read")] == [
        "file:///other",
        "file:///doc",
    ]
    assert upstream.journal.requests("prompts/get") == []
    assert [r.rpc_method for r in proxy.journal if r.fault is not None] == ["resources/read", "prompts/get"]
