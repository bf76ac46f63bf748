"""The stateless era (2026-07-28) on the wire: server/discover, `_meta`, the mirrored headers, every status and code."""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types
import pytest

from mcp_testkit import TestMcpServer, ToolError

from ._support import ACCEPT, CLIENT_INFO, Stateless, events, messages, modern, rpc, serving

pytestmark = pytest.mark.anyio

V = "2026-07-28"
SERVER_INFO = {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "0.1.0"}}
ALL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]


def _server(**options: Any) -> TestMcpServer:
    server = TestMcpServer("modern", **options)
    server.tool("echo", returns=lambda arguments: arguments.get("text", ""))
    server.tool("t2", returns="two")
    server.tool("t3", returns="three")
    return server


def _error(response: Any, status: int, code: int, request_id: Any = 1) -> dict[str, Any]:
    """Assert the answer is JSON with this status and a JSON-RPC error of this code; return the error."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", request_id, code), body
    return body["error"]  # type: ignore[no-any-return]


# -- server/discover, and what every result carries -------------------------------------------------------


async def test_discover_names_versions_capabilities_cache_fields_and_server(via: str) -> None:
    """server/discover answers the versions spoken (newest first), capabilities, resultType, cache hints, serverInfo."""
    server = _server()
    async with serving(server, via) as wire:
        result = await Stateless(wire).result("server/discover", request_id="d1")
    assert result == {
        "resultType": "complete",
        "supportedVersions": ALL_VERSIONS,
        "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        "serverInfo": {"name": "modern", "version": "0.1.0"},
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": SERVER_INFO,
    }
    assert mcp_types.DiscoverResult.model_validate(result).supported_versions == ALL_VERSIONS
    assert len(server.sessions) == 0


async def test_discover_of_a_stateless_only_server_offers_only_its_version(via: str) -> None:
    """eras=("stateless",) speaks 2026-07-28 only; cache_ttl_s and cache_scope set the hints."""
    server = _server(eras=("stateless",), cache_ttl_s=60, cache_scope="private")
    async with serving(server, via) as wire:
        result = await Stateless(wire).result("server/discover")
    assert (result["supportedVersions"], result["ttlMs"], result["cacheScope"]) == ([V], 60_000, "private")


async def test_every_page_carries_result_type_and_one_cache_scope(via: str) -> None:
    """Each tools/list page has resultType, ttlMs and the same cacheScope; nextCursor only where more exist."""
    server = _server(page_size=2)
    async with serving(server, via) as wire:
        modern_wire = Stateless(wire)
        first = await modern_wire.result("tools/list")
        last = await modern_wire.result("tools/list", {"cursor": first["nextCursor"]}, request_id=2)
    assert [tool["name"] for tool in first["tools"]] == ["echo", "t2"]
    assert [tool["name"] for tool in last["tools"]] == ["t3"]
    assert "nextCursor" not in last
    for page in (first, last):
        assert (page["resultType"], page["ttlMs"], page["cacheScope"], page["_meta"]) == (
            "complete",
            0,
            "public",
            SERVER_INFO,
        )


async def test_a_call_runs_once_and_its_record_says_stateless(via: str) -> None:
    """tools/call answers with resultType; the record has era, version, _meta, headers and no session."""
    server = _server()
    async with serving(server, via) as wire:
        result = await Stateless(wire).result("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    assert result == {"resultType": "complete", "content": [{"type": "text", "text": "hi"}], "_meta": SERVER_INFO}
    record = server.calls("echo")[0]
    assert (record.era, record.protocol_version, record.session_id, record.status) == ("stateless", V, None, 200)
    assert record.client_info == CLIENT_INFO
    assert record.client_capabilities == {}
    assert (record.headers["mcp-method"], record.headers["mcp-name"]) == ("tools/call", "echo")
    assert record.meta is not None
    assert record.meta["io.modelcontextprotocol/protocolVersion"] == V
    assert server.executions("echo") == 1
    server.journal.assert_called("echo", times=1, arguments={"text": "hi"})
    assert server.journal.requests(era="stateless") == [record]
    assert server.journal.requests(era="handshake") == []


async def test_a_tool_error_and_a_scripted_result_get_result_type(via: str) -> None:
    """An isError result and a whole CallToolResult scripted by the test carry resultType and serverInfo."""
    server = _server()
    server.tool("fails", returns=ToolError("nope"))
    server.tool("whole", returns=mcp_types.CallToolResult(content=[], meta={"k": 1}))
    async with serving(server, via) as wire:
        failed = await Stateless(wire).result("tools/call", {"name": "fails"})
        whole = await Stateless(wire).result("tools/call", {"name": "whole"})
    assert (failed["isError"], failed["resultType"]) == (True, "complete")
    assert whole["_meta"] == {"k": 1, **SERVER_INFO}


async def test_sse_answers_have_no_event_ids(via: str) -> None:
    """Over SSE the stateless era's events carry no `id:` (its streams are not resumable); X-Accel-Buffering: no."""
    server = _server(response_mode="sse")
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("tools/call", {"name": "t2"})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-accel-buffering"] == "no"
    assert [sorted(event) for event in events(response)] == [["data", "event"]]
    assert messages(response)[0]["result"]["content"] == [{"type": "text", "text": "two"}]


async def test_a_tool_logs_only_at_the_level_the_request_names(via: str) -> None:
    """notifications/message reach a stateless request only when its _meta names a log level."""

    async def chatty(arguments: dict[str, Any], context: Any) -> str:
        await context.log("info", "working")
        return "done"

    server = TestMcpServer("logs", response_mode="sse")
    server.tool("chatty", returns=chatty)
    async with serving(server, via) as wire:
        quiet = await Stateless(wire).post("tools/call", {"name": "chatty"})
        loud = await Stateless(wire).post(
            "tools/call", {"name": "chatty", "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}
        )
    assert [m.get("method") for m in messages(quiet)] == [None]
    assert [m.get("method") for m in messages(loud)] == ["notifications/message", None]


# -- refusals: the headers and _meta ----------------------------------------------------------------------

HEADER_CASES = {
    "no MCP-Protocol-Version": ("tools/list", {}, {"mcp-protocol-version": None}, "MCP-Protocol-Version"),
    "no Mcp-Method": ("tools/list", {}, {"mcp-method": None}, "Mcp-Method"),
    "Mcp-Method mismatch": ("tools/list", {}, {"mcp-method": "tools/call"}, "Mcp-Method header 'tools/call'"),
    "version mismatch": ("tools/list", {}, {"mcp-protocol-version": "2025-11-25"}, "MCP-Protocol-Version header"),
    "no Mcp-Name": ("tools/call", {"name": "echo"}, {"mcp-name": None}, "Mcp-Name header is missing"),
    "Mcp-Name mismatch": ("tools/call", {"name": "echo"}, {"mcp-name": "t2"}, "Mcp-Name header 't2'"),
}


@pytest.mark.parametrize("case", list(HEADER_CASES))
async def test_a_missing_or_mismatched_header_is_32020_with_400(via: str, case: str) -> None:
    """MCP-Protocol-Version, Mcp-Method or Mcp-Name missing or unlike the body: 400, -32020 naming it; nothing runs."""
    method, params, headers, named = HEADER_CASES[case]
    server = _server()
    async with serving(server, via) as wire:
        response = await Stateless(wire).post(method, params, headers=headers)
        error = _error(response, 400, -32020)
        await Stateless(wire).result("tools/list", request_id=2)
    assert named in error["message"]
    record = server.journal[0]
    assert (record.era, record.status, record.error) == ("stateless", 400, error["message"])
    assert server.executions() == 0
    assert record.executed is (False if method == "tools/call" else None)


async def test_a_base64_mcp_name_is_decoded_before_it_is_compared(via: str) -> None:
    """An Mcp-Name sent as =?base64?...?= is compared decoded: it matches, and a corrupt one does not."""
    server = _server()
    encoded = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
    async with serving(server, via) as wire:
        ok = await Stateless(wire).post("tools/call", {"name": "echo"}, headers={"mcp-name": encoded})
        bad = await Stateless(wire).post("tools/call", {"name": "echo"}, headers={"mcp-name": "=?base64?!!?="})
    assert ok.status_code == 200, ok.text
    _error(bad, 400, -32020)
    assert server.executions("echo") == 1


async def test_an_unsupported_version_is_32022_with_supported_and_requested(via: str) -> None:
    """A version the server does not speak, in header and _meta alike: 400, -32022, data.supported and .requested."""
    server = _server()
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("tools/list", version="2099-01-01")
    error = _error(response, 400, -32022)
    assert error["data"] == {"supported": ALL_VERSIONS, "requested": "2099-01-01"}
    assert "this server speaks 2026-07-28, 2025-11-25" in error["message"]
    assert mcp_types.UnsupportedProtocolVersionErrorData.model_validate(error["data"]).requested == "2099-01-01"


async def test_a_request_without_meta_is_32602(via: str) -> None:
    """The 2026-07-28 headers but no _meta (or one without capabilities): 400 and -32602 naming the keys."""
    server = _server()
    async with serving(server, via) as wire:
        headers = {"accept": ACCEPT, "mcp-protocol-version": V, "mcp-method": "tools/list"}
        bare = await wire.post(rpc("tools/list", {}), headers=headers)
        meta_only = {"_meta": {"io.modelcontextprotocol/protocolVersion": V}}
        partial = await wire.post(rpc("tools/list", meta_only), headers=headers)
    assert "clientCapabilities" in _error(bare, 400, -32602)["message"]
    message = _error(partial, 400, -32602)["message"]
    assert "clientCapabilities" in message
    assert "protocolVersion" not in message


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/teleport"])
async def test_a_method_the_era_lacks_is_404_with_32601(via: str, method: str) -> None:
    """An unknown method, or one 2026-07-28 removed (ping, logging/setLevel): 404 with -32601, also over SSE."""
    server = _server(response_mode="sse")
    async with serving(server, via) as wire:
        response = await Stateless(wire).post(method, {"level": "info"})
    assert method in _error(response, 404, -32601)["message"]


async def test_a_json_rpc_error_of_a_handler_takes_the_eras_status(via: str) -> None:
    """An invalid cursor (-32602) is 400 and an unknown tool -32602 400 too, as the SDK's status table says."""
    server = _server(page_size=1)
    async with serving(server, via) as wire:
        cursor = await Stateless(wire).post("tools/list", {"cursor": "garbage"})
        tool = await Stateless(wire).post("tools/call", {"name": "nope"})
    _error(cursor, 400, -32602)
    _error(tool, 400, -32602)


async def test_an_empty_cursor_is_a_legal_page_in_this_era(via: str) -> None:
    """"" handed out by the server leads to the next page; "" never handed out is an invalid cursor."""
    from mcp_testkit import faults

    server = _server(page_size=1)
    async with serving(server, via) as wire:
        unissued = await Stateless(wire).post("tools/list", {"cursor": ""})
        server.inject(faults.EmptyCursor(1))
        first = await Stateless(wire).result("tools/list", request_id=2)
        second = await Stateless(wire).result("tools/list", {"cursor": ""}, request_id=3)
    _error(unissued, 400, -32602)
    assert first["nextCursor"] == ""
    assert [tool["name"] for tool in second["tools"]] == ["t2"]
    assert second["nextCursor"]


# -- refusals: the body, other eras' messages, older clients ------------------------------------------------


async def test_a_batch_or_a_response_is_400_invalid_request(via: str) -> None:
    """A batch or a posted response under the 2026-07-28 headers: 400 with -32600 and id null."""
    server = _server()
    message, headers = modern("tools/list")
    async with serving(server, via) as wire:
        batch = await wire.post([message], headers={"accept": ACCEPT, **headers})
        posted = await wire.post({"jsonrpc": "2.0", "id": 7, "result": {}}, headers={"accept": ACCEPT, **headers})
    _error(batch, 400, -32600, None)
    _error(posted, 400, -32600, None)


async def test_a_notification_is_accepted_unless_its_version_is_not_spoken(via: str) -> None:
    """A notification POST is 202 without a body at 2026-07-28, and 400 -32022 at a version not spoken."""
    server = _server()
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
    async with serving(server, via) as wire:
        accepted = await wire.post(note, headers={"mcp-protocol-version": V})
        refused = await wire.post(note, headers={"mcp-protocol-version": "2099-01-01"})
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert _error(refused, 400, -32022, None)["data"]["requested"] == "2099-01-01"


async def test_an_older_clients_session_id_is_ignored_and_never_echoed(via: str) -> None:
    """A stateless request carrying Mcp-Session-Id is served as if it had none, and no session id comes back."""
    server = _server()
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("tools/list", headers={"mcp-session-id": "stale-session"})
    assert response.status_code == 200, response.text
    assert "mcp-session-id" not in response.headers
    assert server.journal.last.session_id is None
    assert len(server.sessions) == 0


@pytest.mark.parametrize("http_method", ["GET", "DELETE"])
async def test_get_and_delete_are_405_in_the_stateless_era(via: str, http_method: str) -> None:
    """GET or DELETE to a stateless-only server, or with a 2026-07-28 version header: 405, Allow: POST."""
    only = _server(eras=("stateless",), get_stream=True)
    both = _server(get_stream=True)
    async with serving(only, via) as wire:
        plain = await wire.send(http_method, headers={"accept": "text/event-stream", "mcp-session-id": "s"})
    async with serving(both, via) as wire:
        modern_header = await wire.send(http_method, headers={"accept": "text/event-stream", "mcp-protocol-version": V})
        legacy = await wire.send(http_method, headers={"accept": "text/event-stream"})
    for response in (plain, modern_header):
        assert (response.status_code, response.headers["allow"]) == (405, "POST")
    assert legacy.status_code == 400, "without a 2026-07-28 header a GET or DELETE is the handshake era's"
    assert [r.era for r in only.journal] == ["stateless"]
    assert [r.era for r in both.journal] == ["stateless", "handshake"]


async def test_initialize_to_a_stateless_only_server_is_400_naming_its_versions(via: str) -> None:
    """An old-style initialize to eras=("stateless",): 400, -32022, the versions it speaks in message and data."""
    server = _server(eras=("stateless",))
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT_INFO}
    async with serving(server, via) as wire:
        response = await wire.post(rpc("initialize", params, request_id=0))
    error = _error(response, 400, -32022, 0)
    assert "speaks only 2026-07-28" in error["message"]
    assert error["data"] == {"supported": [V], "requested": "2025-11-25"}
    assert "mcp-session-id" not in response.headers
    assert len(server.sessions) == 0


async def test_initialize_under_2026_headers_is_not_a_method_of_the_era(via: str) -> None:
    """A dual-era server keeps initialize for the handshake era: under 2026-07-28 metadata it is 404, -32601."""
    server = _server()
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("initialize", {"protocolVersion": "2025-11-25"})
        await wire.initialize()
        await wire.ping_ok()
    _error(response, 404, -32601)
    assert [r.era for r in server.journal] == ["stateless", "handshake", "handshake", "handshake"]


async def test_a_handshake_only_server_refuses_the_era(via: str) -> None:
    """eras=("handshake",): the probe gets -32601 (200), a 2026-07-28 request 400 -32600 naming its versions."""
    server = _server(eras=("handshake",))
    async with serving(server, via) as wire:
        probe = await Stateless(wire).post("server/discover")
        request = await Stateless(wire).post("tools/list", request_id=2)
    assert probe.status_code == 200
    assert probe.json()["error"]["code"] == -32601
    assert request.status_code == 400
    assert request.json()["error"]["code"] == -32600
    assert "supported: 2025-03-26, 2025-06-18, 2025-11-25" in request.json()["error"]["message"]
    assert [r.era for r in server.journal] == ["handshake", "handshake"]


async def test_both_eras_at_once_on_one_server(via: str) -> None:
    """A session of the handshake era and stateless requests interleave on one server; each record says its era."""
    server = _server()
    async with serving(server, via) as wire:
        await wire.initialize()
        handshake = await wire.call("echo", {"text": "old"})
        stateless = await Stateless(wire).result("tools/call", {"name": "echo", "arguments": {"text": "new"}})
        await wire.ping_ok()
    assert handshake["content"][0]["text"] == "old"
    assert "resultType" not in handshake
    assert stateless["content"][0]["text"] == "new"
    calls = server.calls("echo")
    assert [(c.era, c.protocol_version) for c in calls] == [("handshake", "2025-11-25"), ("stateless", V)]
    assert calls[0].session_id == server.session().id
    assert calls[1].session_id is None


async def test_the_journal_reports_both_eras_alike(via: str) -> None:
    """format() names the era, to_jsonl() carries it, and assert_called counts calls of both eras."""
    server = _server()
    async with serving(server, via) as wire:
        await Stateless(wire).result("tools/call", {"name": "t2"})
        await wire.initialize()
        await wire.call("t2")
    lines = [json.loads(line) for line in server.journal.to_jsonl().splitlines()]
    assert [line["era"] for line in lines] == ["stateless", "handshake", "handshake", "handshake"]
    assert lines[0]["protocol_version"] == V
    assert server.journal.format().splitlines()[0] == "#1 POST stateless tools/call t2 -> 200"
    assert len(server.journal.assert_called("t2", times=2)) == 2


def test_eras_are_checked_when_the_server_is_made() -> None:
    """eras must name one or both eras; cache hints must be sane."""
    with pytest.raises(ValueError, match="eras must name one or both"):
        TestMcpServer(eras=())
    with pytest.raises(ValueError, match="not the string"):
        TestMcpServer(eras="stateless")
    with pytest.raises(ValueError, match="eras must name one or both"):
        TestMcpServer(eras=("modern",))
    with pytest.raises(ValueError, match="cache_ttl_s must be a number of seconds >= 0"):
        TestMcpServer(cache_ttl_s=-1)
    with pytest.raises(ValueError, match="cache_scope must be 'public' or 'private'"):
        TestMcpServer(cache_scope="shared")
    assert TestMcpServer(eras=("stateless", "handshake", "stateless")).eras == ("handshake", "stateless")


# -- what the 2026-07-28 conformance scenarios found ---------------------------------------------------------


async def test_initialize_under_2026_headers_to_a_stateless_only_server_is_not_a_method(via: str) -> None:
    """eras=("stateless",): an initialize sent with 2026-07-28 headers and _meta is 404, -32601, as any method the
    era lacks; only an old-style initialize (no such version) gets the 400 naming the versions spoken."""
    server = _server(eras=("stateless",))
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("initialize", {"protocolVersion": "2025-11-25"})
    _error(response, 404, -32601)
    assert len(server.sessions) == 0


async def test_whitespace_around_a_mirrored_header_is_no_part_of_its_value() -> None:
    """Leading and trailing spaces or tabs around Mcp-Name, Mcp-Method and MCP-Protocol-Version are not compared
    (RFC 9110: field values exclude them). In-process only: a socket client strips them itself; the conformance
    suite's http-header-validation scenario sends them over a socket."""
    server = _server()
    async with serving(server, "asgi") as wire:
        spaced = {"mcp-name": "  echo\t", "mcp-method": " tools/call ", "mcp-protocol-version": f"\t{V} "}
        call = {"name": "echo", "arguments": {"text": "hi"}}
        response = await Stateless(wire).post("tools/call", call, headers=spaced)
        wrong = await Stateless(wire).post("tools/call", {"name": "echo"}, headers={"mcp-name": "  ech o "})
    assert response.status_code == 200, response.text
    assert messages(response)[-1]["result"]["content"][0]["text"] == "hi"
    _error(wrong, 400, -32020)


async def _call_declaring(wire: Any, tool: str, capabilities: dict[str, Any]) -> Any:
    message, mirrored = modern("tools/call", {"name": tool, "arguments": {}})
    message["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = capabilities
    return await wire.post(message, headers={"accept": ACCEPT, **mirrored})


async def test_a_tool_requiring_a_client_capability_refuses_a_call_that_lacks_it(via: str) -> None:
    """tool(requires=["sampling"]): a 2026-07-28 call without sampling in its _meta capabilities is 400, -32021,
    with data.requiredCapabilities naming it, and the tool does not run; with it, the call runs."""
    server = _server()
    server.tool("summarize", requires=["sampling"], returns="summary")
    async with serving(server, via) as wire:
        lacking = await _call_declaring(wire, "summarize", {"elicitation": {}})
        declared = await _call_declaring(wire, "summarize", {"sampling": {}})
    error = _error(lacking, 400, -32021)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert "Missing required client capability: sampling" in error["message"]
    assert declared.status_code == 200, declared.text
    assert server.executions("summarize") == 1
    assert [r.status for r in server.calls("summarize")] == [400, 200]


def test_requires_takes_capability_names() -> None:
    """tool(requires=...) is a list of capability names; a bare string is refused saying so."""
    with pytest.raises(ValueError, match="requires= is a list of client capability names"):
        _server().tool("summarize", requires="sampling")


_MIRRORED = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        "query": {"type": "string"},
    },
}


def _b64(text: str) -> str:
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


@pytest.mark.parametrize(
    ("arguments", "headers", "refused"),
    [
        ({"region": "eu", "query": "q"}, {"mcp-param-region": "eu"}, None),
        ({"region": " padded "}, {"mcp-param-region": _b64(" padded ")}, None),
        ({"region": "=?base64?x"}, {"mcp-param-region": "=?base64?x"}, None),
        ({"limit": 42, "dry": True}, {"mcp-param-limit": "42.0", "mcp-param-dry": "true"}, None),
        ({"where": {"zone": "z1"}}, {"mcp-param-zone": "z1"}, None),
        ({"region": "eu"}, {}, "the Mcp-Param-Region header is missing; it must mirror params.arguments.region"),
        ({"region": "eu"}, {"mcp-param-region": "us"}, "Mcp-Param-Region header 'us' does not match"),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVsbG8?="}, "is not valid =?base64?...?="),
        ({"region": "Hello"}, {"mcp-param-region": "=?base64?SGVs!!!bG8=?="}, "is not valid =?base64?...?="),
        ({"dry": False}, {"mcp-param-dry": "False"}, "Mcp-Param-Dry header 'False' does not match"),
        ({}, {"mcp-param-region": "eu"}, "Mcp-Param-Region header is sent, but the body has no"),
        ({"where": {"zone": "z1"}}, {"mcp-param-zone": "z2"}, "does not match the body's params.arguments.where.zone"),
    ],
    ids=[
        "plain",
        "base64",
        "literal-sentinel-half",
        "integer-and-boolean",
        "nested",
        "missing",
        "mismatched",
        "bad-padding",
        "bad-characters",
        "boolean-case",
        "header-without-value",
        "nested-mismatch",
    ],
)
async def test_parameters_mirrored_into_mcp_param_headers_are_validated(
    via: str, arguments: dict[str, Any], headers: dict[str, str], refused: str | None
) -> None:
    """A parameter a tool marks with x-mcp-header must come in its Mcp-Param-{name} header too, plain or
    =?base64?...?=, and match the body (integers as numbers, booleans as true/false); else 400 and -32020, and the
    tool does not run."""
    server = _server()
    server.tool("sql", input_schema=_MIRRORED, returns="ran")
    async with serving(server, via) as wire:
        response = await Stateless(wire).post("tools/call", {"name": "sql", "arguments": arguments}, headers=headers)
    if refused is None:
        assert response.status_code == 200, response.text
        assert server.executions("sql") == 1
    else:
        error = _error(response, 400, -32020)
        assert refused in error["message"]
        assert server.executions("sql") == 0
        assert server.journal[0].executed is False  # the journal says what the ledger says: it did not run


async def test_mirrored_parameters_follow_a_tool_replaced_between_calls(via: str) -> None:
    """The mirrored parameters a tool's schema names are worked out once per schema: a tool replaced between two
    calls, or given another schema, is checked against its new schema, never the old one."""
    server = _server()
    server.tool("sql", input_schema=_MIRRORED, returns="ran")
    async with serving(server, via) as wire:
        client = Stateless(wire)
        first = await client.post("tools/call", {"name": "sql", "arguments": {"region": "eu"}})
        server.tool("sql", input_schema={"type": "object", "properties": {"region": {"type": "string"}}}, returns="ran")
        second = await client.post("tools/call", {"name": "sql", "arguments": {"region": "eu"}})
        tool = server.tool("sql", input_schema={"type": "object"}, returns="ran")
        tool.definition["inputSchema"] = _MIRRORED
        third = await client.post("tools/call", {"name": "sql", "arguments": {"region": "eu"}})
    assert "Mcp-Param-Region header is missing" in _error(first, 400, -32020)["message"]
    assert second.status_code == 200, second.text
    assert "Mcp-Param-Region header is missing" in _error(third, 400, -32020)["message"]
    assert server.executions("sql") == 1
