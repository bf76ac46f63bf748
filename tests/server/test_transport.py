"""The Streamable HTTP transport, driven by raw httpx2 requests: every status the issue names."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from mcp_testkit import TestMcpServer

from ._support import LATEST, LIMIT_S, messages, note, rpc, serving

pytestmark = pytest.mark.anyio

SESSION_NOT_FOUND = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {
        "code": -32600,
        "message": "Session not found: it has ended; re-initialize (send initialize without Mcp-Session-Id)",
    },
}


def _server(**options: Any) -> TestMcpServer:
    server = TestMcpServer("wire", **options)
    server.tool("echo", returns=lambda arguments: arguments.get("text", ""))
    return server


def _refusal(response: Any, status: int, code: int) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    # The transport refuses with id null; a 2026-07-28 refusal (-32020..-32022) answers the request's id.
    assert body["id"] == (1 if code <= -32020 and code >= -32099 else None)
    assert body["error"]["code"] == code


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_echoes_a_supported_version_and_issues_a_session(via: str, version: str) -> None:
    """initialize answers 200 with the requested version, tools.listChanged and a visible-ASCII Mcp-Session-Id."""
    server = _server()
    async with serving(server, via) as wire:
        response = await wire.initialize(version)
        result = messages(response)[0]["result"]
        assert result["protocolVersion"] == version
        assert result["capabilities"]["tools"] == {"listChanged": True}
        assert result["serverInfo"]["name"] == "wire"
        assert re.fullmatch(r"[\x21-\x7e]{16,}", wire.session_id or "")
        record = server.journal.requests("initialize")[0]
        assert (record.status, record.session_id, record.protocol_version) == (200, wire.session_id, version)
        assert [s.id for s in server.sessions] == [wire.session_id]


async def test_initialize_with_an_unknown_version_gets_the_latest(via: str) -> None:
    """A version the server does not speak is answered with the latest one it does."""
    async with serving(_server(), via) as wire:
        await wire.initialize("2024-01-01")
        assert wire.version == LATEST


async def test_each_session_id_is_new(via: str) -> None:
    """Two initializes give two different session ids, both alive."""
    server = _server()
    async with serving(server, via) as wire:
        first = (await wire.initialize()).headers["mcp-session-id"]
        wire.session_id = None
        second = (await wire.initialize()).headers["mcp-session-id"]
        assert first != second
        assert [s.alive for s in server.sessions] == [True, True]


async def test_notifications_and_responses_get_202_without_a_body(via: str) -> None:
    """A POSTed notification or client response is accepted with 202 and an empty body."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        for message in (note("notifications/roots/list_changed"), {"jsonrpc": "2.0", "id": 7, "result": {}}):
            response = await wire.post(message)
            assert (response.status_code, response.content) == (202, b"")
        assert server.session().initialized
        assert [r.status for r in server.journal][1:] == [202, 202, 202]


async def test_ping_answers_an_empty_result(via: str) -> None:
    """ping answers {} with the request's id."""
    async with serving(_server(), via) as wire:
        await wire.initialize()
        assert await wire.request("ping", request_id=5) == {"jsonrpc": "2.0", "id": 5, "result": {}}


# Each refusal: how to send it (given a Wire with a live session), the status, the JSON-RPC code.
REFUSALS: dict[str, tuple[dict[str, Any], int, int]] = {
    "body not JSON": ({"content": b"{not json"}, 400, -32700),
    "JSON that is not JSON-RPC": ({"message": {"hello": "world"}}, 400, -32600),
    "wrong jsonrpc version": ({"message": {"jsonrpc": "1.0", "id": 1, "method": "ping"}}, 400, -32600),
    "boolean id": ({"message": {"jsonrpc": "2.0", "id": True, "method": "ping"}}, 400, -32600),
    "a bare number": ({"message": 42}, 400, -32600),
    "empty batch": ({"message": []}, 400, -32600),
    "missing session id": ({"message": rpc("ping"), "headers": {"mcp-session-id": None}}, 400, -32600),
    "unknown session id": ({"message": rpc("ping"), "headers": {"mcp-session-id": "nope"}}, 404, -32600),
    "Accept without SSE": ({"message": rpc("ping"), "headers": {"accept": "application/json"}}, 406, -32600),
    "Accept without JSON": ({"message": rpc("ping"), "headers": {"accept": "text/event-stream"}}, 406, -32600),
    "empty Accept": ({"message": rpc("ping"), "headers": {"accept": ""}}, 406, -32600),
    "text/plain body": ({"message": rpc("ping"), "headers": {"content-type": "text/plain"}}, 415, -32600),
    "no Content-Type": ({"message": rpc("ping"), "headers": {"content-type": None}}, 415, -32600),
    "bad Host": ({"message": rpc("ping"), "headers": {"host": "evil.example:80"}}, 421, -32600),
    "bad Origin": ({"message": rpc("ping"), "headers": {"origin": "http://evil.example"}}, 403, -32600),
    "null Origin": ({"message": rpc("ping"), "headers": {"origin": "null"}}, 403, -32600),
    "unsupported version": ({"message": rpc("ping"), "headers": {"mcp-protocol-version": "1999-01-01"}}, 400, -32022),
}


@pytest.mark.parametrize("case", list(REFUSALS))
async def test_bad_requests_are_refused_recorded_and_survived(via: str, case: str) -> None:
    """Each malformed or disallowed POST gets its status and a JSON-RPC error, is journaled, and the server goes on."""
    request, status, code = REFUSALS[case]
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.post(
            request.get("message"), content=request.get("content"), headers=request.get("headers")
        )
        _refusal(response, status, code)
        record = server.journal.last
        assert (record.http_method, record.status, record.response) == ("POST", status, response.json())
        assert record.error
        await wire.ping_ok()
        assert server.executions() == 0


async def test_unknown_session_body_matches_the_sdk(via: str) -> None:
    """An unknown session id gets 404 with the SDK's body, its message extended by what to do: re-initialize."""
    async with serving(_server(), via) as wire:
        wire.session_id = "0" * 32
        response = await wire.post(rpc("ping"))
        assert response.status_code == 404
        assert response.json() == SESSION_NOT_FOUND


async def test_delete_ends_the_session(via: str) -> None:
    """DELETE answers 200 and ends the session: later POSTs and DELETEs on it get 404."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        ended = await wire.send("DELETE")
        assert ended.status_code == 200
        assert [s.alive for s in server.sessions] == [False]
        after = await wire.post(rpc("ping"))
        assert (after.status_code, after.json()) == (404, SESSION_NOT_FOUND)
        again = await wire.send("DELETE")
        assert again.status_code == 404
        assert [r.status for r in server.journal.requests(session_id=wire.session_id)][-3:] == [200, 404, 404]
        wire.session_id = None
        await wire.initialize()
        await wire.ping_ok()


async def test_delete_without_a_session_id_is_400(via: str) -> None:
    """DELETE with no Mcp-Session-Id is a 400."""
    async with serving(_server(), via) as wire:
        response = await wire.send("DELETE")
        assert response.status_code == 400


async def test_delete_is_405_when_not_allowed(via: str) -> None:
    """With allow_delete=False, DELETE gets 405 and the session stays alive."""
    server = _server(allow_delete=False)
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.send("DELETE")
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, POST"
        assert server.session().alive
        await wire.ping_ok()


async def test_get_without_a_stream_is_405(via: str) -> None:
    """GET with Accept: text/event-stream gets 405 (with Allow) when the server offers no GET stream."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.send("GET", headers=wire.headers(accept="text/event-stream"))
        _refusal(response, 405, -32600)
        assert response.headers["allow"] == "POST, DELETE"
        assert "(TestMcpServer(get_stream=True) opens one)" in response.json()["error"]["message"]
        assert server.journal.last.http_method == "GET"
        await wire.ping_ok()


async def test_get_without_sse_accept_is_406(via: str) -> None:
    """GET that does not accept text/event-stream gets 406."""
    async with serving(_server(get_stream=True), via) as wire:
        await wire.initialize()
        response = await wire.send("GET", headers=wire.headers(accept="application/json"))
        _refusal(response, 406, -32600)


async def test_other_http_methods_are_405(via: str) -> None:
    """PUT on the endpoint gets 405 naming the allowed methods."""
    async with serving(_server(), via) as wire:
        response = await wire.send("PUT", content=b"{}")
        _refusal(response, 405, -32600)
        assert response.headers["allow"] == "GET, POST, DELETE"


async def test_other_paths_are_404(via: str) -> None:
    """A POST to a path that is not the endpoint gets 404 naming the endpoint."""
    async with serving(_server(), via) as wire:
        response = await wire.send("POST", "/other", content=b"{}")
        _refusal(response, 404, -32600)
        assert "/mcp" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("host", "origin"),
    [("localhost:1234", None), ("[::1]:8080", None), ("127.0.0.1", "http://localhost:5173"), ("tests.local", None)],
)
async def test_loopback_hosts_and_origins_are_allowed(via: str, host: str, origin: str | None) -> None:
    """Loopback names (and names passed as allowed_hosts) pass the Host and Origin checks."""
    async with serving(_server(allowed_hosts=["tests.local"]), via) as wire:
        await wire.initialize()
        headers = {"host": host} | ({"origin": origin} if origin else {})
        response = await wire.post(rpc("ping"), headers=headers)
        assert response.status_code == 200, response.text


async def test_missing_credentials_get_401_with_a_bearer_challenge(via: str) -> None:
    """A required header that is missing or wrong gets 401 with WWW-Authenticate: Bearer resource_metadata=...."""
    server = _server()
    server.require_header("Authorization", "Bearer t0k")
    async with serving(server, via) as wire:
        for sent in (None, "Bearer wrong"):
            response = await wire.post(rpc("initialize", {"protocolVersion": LATEST}), headers={"authorization": sent})
            assert response.status_code == 401
            challenge = response.headers["www-authenticate"]
            assert challenge.startswith("Bearer resource_metadata=")
            assert "/.well-known/oauth-protected-resource" in challenge
            assert response.json()["error"] == "invalid_token"
            assert "Bearer" not in response.text  # the body never echoes a credential
        assert [r.status for r in server.journal] == [401, 401]
        assert server.sessions.alive == []
        wire.client.headers["authorization"] = "Bearer t0k"
        await wire.initialize()
        await wire.ping_ok()


async def _status_without_a_body(server: TestMcpServer, headers: dict[str, str]) -> bytes:
    """The status line of a POST whose headers announce 1 MB that never comes."""
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{server.port}", "Content-Type: application/json"]
    lines += ["Accept: application/json, text/event-stream", "Content-Length: 1000000"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    with anyio.fail_after(LIMIT_S):
        async with await anyio.connect_tcp("127.0.0.1", server.port) as stream:
            await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode())
            return (await stream.receive()).split(b"\r\n", 1)[0]


@pytest.mark.parametrize("status", [401, 403])
async def test_a_missing_required_header_is_refused_before_the_body_is_read(status: int) -> None:
    """A POST without a required header gets its 401 (or 403) at once, although its announced body never comes."""
    server = _server()
    server.require_header("Authorization", "Bearer t0k", status=status)
    with server:
        line = await _status_without_a_body(server, {})
    assert line == f"HTTP/1.1 {status} ".encode() + (b"Unauthorized" if status == 401 else b"Forbidden")
    record = server.journal.last
    assert (record.status, record.body) == (status, b"")
    assert "Authorization" in (record.error or "")


async def test_a_wrong_required_header_still_journals_the_refused_call() -> None:
    """A wrong credential is a scripted condition: its (bounded) body is read, so the journal names the call."""
    server = _server()
    server.require_header("Authorization", "Bearer t0k")
    async with serving(server, "socket") as wire:
        response = await wire.post(rpc("ping"), headers={"authorization": "Bearer wrong"})
    assert response.status_code == 401
    assert (server.journal.last.rpc_method, server.journal.last.error) == ("ping", "wrong Authorization header")


async def test_insufficient_scope_gets_403(via: str) -> None:
    """require_header(status=403) refuses with 403 and error="insufficient_scope"."""
    server = _server()
    server.require_header("X-Scope", "tools:write", status=403)
    async with serving(server, via) as wire:
        response = await wire.post(rpc("initialize", {"protocolVersion": LATEST}))
        assert response.status_code == 403
        assert response.headers["www-authenticate"] == 'Bearer error="insufficient_scope"'
        assert response.json()["error"] == "insufficient_scope"
        wire.client.headers["x-scope"] = "tools:write"
        await wire.initialize()
        await wire.ping_ok()


def test_require_header_rejects_other_statuses() -> None:
    """require_header only knows 401 and 403."""
    with pytest.raises(ValueError, match="401 or 403"):
        TestMcpServer().require_header("Authorization", "x", status=500)


async def test_unknown_method_is_32601(via: str) -> None:
    """An unknown JSON-RPC method is answered -32601 (HTTP 200) and the session goes on."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        response = await wire.request("resources/teleport", request_id=3)
        assert response["id"] == 3
        assert response["error"]["code"] == -32601
        assert server.journal.requests("resources/teleport")[0].status == 200
        await wire.ping_ok()


async def test_server_discover_is_32601_and_opens_no_session(via: str) -> None:
    """On a handshake-only server, server/discover (the 2026-07-28 probe) gets -32601 with its id."""
    server = _server(eras=("handshake",))
    async with serving(server, via) as wire:
        response = await wire.post(rpc("server/discover", {}, request_id="d1"))
        assert response.status_code == 200
        assert response.json()["id"] == "d1"
        assert response.json()["error"]["code"] == -32601
        assert len(server.sessions) == 0
        assert server.journal.last.rpc_method == "server/discover"
        await wire.initialize()
        await wire.ping_ok()


async def test_bad_params_are_32602(via: str) -> None:
    """Params that are not an object, an unknown tool and non-object arguments are -32602."""
    async with serving(_server(), via) as wire:
        await wire.initialize()
        bad = [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]},
            rpc("tools/call", {"name": "nope", "arguments": {}}),
            rpc("tools/call", {"name": "echo", "arguments": [1]}),
            rpc("tools/call", {"arguments": {}}),
            rpc("initialize", {"protocolVersion": 20250618}),
        ]
        for message in bad:
            response = await wire.post(message)
            assert response.status_code == 200
            assert response.json()["error"]["code"] == -32602, message


async def test_batches_are_answered_under_2025_03_26(via: str) -> None:
    """Under 2025-03-26 a batch is answered with one response per request; notifications in it get none."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize("2025-03-26")
        batch = [rpc("ping", request_id=1), note("notifications/initialized"), rpc("tools/list", request_id=2)]
        response = await wire.post(batch)
        assert response.status_code == 200
        answers = response.json()
        assert [a["id"] for a in answers] == [1, 2]
        assert answers[1]["result"]["tools"][0]["name"] == "echo"
        only_notes = await wire.post([note("notifications/initialized")])
        assert (only_notes.status_code, only_notes.content) == (202, b"")
        record = server.journal.requests(http_method="POST")[-2]
        assert isinstance(record.message, list)
        assert record.protocol_version == "2025-03-26"


async def test_batches_are_sse_framed_in_sse_mode(via: str) -> None:
    """In SSE mode each response of a batch is its own event on one stream."""
    async with serving(_server(response_mode="sse"), via) as wire:
        await wire.initialize("2025-03-26")
        response = await wire.post([rpc("ping", request_id=1), rpc("ping", request_id=2)])
        assert [m["id"] for m in messages(response)] == [1, 2]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
async def test_batches_are_refused_after_2025_03_26(via: str, version: str) -> None:
    """From 2025-06-18 on, a batch gets 400 -32600 and nothing in it runs."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize(version)
        response = await wire.post([rpc("tools/call", {"name": "echo", "arguments": {}})])
        _refusal(response, 400, -32600)
        assert server.executions() == 0
        await wire.ping_ok()


async def test_initialize_in_a_batch_is_refused(via: str) -> None:
    """initialize must not be batched: 400 -32600, no session."""
    server = _server()
    async with serving(server, via) as wire:
        response = await wire.post([rpc("initialize", {"protocolVersion": "2025-03-26"})])
        _refusal(response, 400, -32600)
        assert len(server.sessions) == 0


async def test_missing_version_header_means_2025_03_26(via: str) -> None:
    """A request without MCP-Protocol-Version is taken as 2025-03-26 (batches allowed)."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize("2025-03-26")
        wire.version = None
        response = await wire.post([rpc("ping")])
        assert response.status_code == 200
        assert server.journal.last.protocol_version == "2025-03-26"
