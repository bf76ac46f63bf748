"""The reference bridge mirrors `x-mcp-header` parameters into `Mcp-Param-{name}` headers in the 2026-07-28 era,
leaves out tools whose marks break the spec's rules, and answers a -32020 to a call by listing again and sending
once more; every case is checked by the server's own validation, over a socket and in-process."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import pytest

from mcp_testkit import Record, TestMcpServer, faults
from mcp_testkit.bridge import MCPConnectionError, MCPToolError, ServerConfig, ToolPool

from .conftest import LIMIT_S, config_for

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["socket", "asgi"])
def via(request: pytest.FixtureRequest) -> str:
    """How the bridge reaches the server: 'socket' (uvicorn on 127.0.0.1:0) or 'asgi' (in-process)."""
    return str(request.param)


@asynccontextmanager
async def pool_for(server: TestMcpServer, via: str, **options: Any) -> AsyncIterator[ToolPool]:
    """A pool of one server named 't', reached over a real socket or through the server's ASGI app."""
    options.setdefault("connect_backoff_s", 0.0)
    if via == "socket":
        async with server, ToolPool([config_for(server, **options)], cache=False) as pool:
            yield pool
        return
    transport = httpx2.ASGITransport(app=server.asgi_app)
    config = ServerConfig(name="t", url="http://127.0.0.1:9/mcp", **options)
    async with transport, ToolPool([config], transport=transport, cache=False) as pool:
        yield pool


def _param_headers(record: Record) -> dict[str, str]:
    return {name: value for name, value in record.headers.items() if name.startswith("mcp-param-")}


_MARKED = {
    "type": "object",
    "properties": {
        "region": {"type": ["string", "null"], "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry"},
        "where": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        "query": {"type": "string"},
    },
}


async def test_the_preset_tool_is_called_with_its_mcp_param_region_header(via: str, era: str) -> None:
    """The conformance preset's test_mirrored_header runs through the bridge; in the stateless era the request
    carries Mcp-Param-Region (the server checks it), in the handshake era no Mcp-Param header at all."""
    server = TestMcpServer(preset="conformance")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era=era) as pool:
            text = await pool.call("t.test_mirrored_header", {"region": "us-west1", "query": "SELECT 1"})
    assert text == "ran in us-west1"
    [call] = server.calls("test_mirrored_header")
    assert (call.era, call.status, call.executed) == (era, 200, True)
    assert _param_headers(call) == ({"mcp-param-region": "us-west1"} if era == "stateless" else {})


@pytest.mark.parametrize(
    ("arguments", "sent"),
    [
        ({"region": "us-west1"}, {"mcp-param-region": "us-west1"}),
        ({"region": "Hello, 世界"}, {"mcp-param-region": "=?base64?SGVsbG8sIOS4lueVjA==?="}),
        ({"region": " padded "}, {"mcp-param-region": "=?base64?IHBhZGRlZCA=?="}),
        ({"region": "line1\nline2"}, {"mcp-param-region": "=?base64?bGluZTEKbGluZTI=?="}),
        ({"region": "=?base64?literal?="}, {"mcp-param-region": "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="}),
        ({"region": "=?base64?half"}, {"mcp-param-region": "=?base64?half"}),
        ({"region": ""}, {"mcp-param-region": ""}),
        ({"limit": 42, "dry": True}, {"mcp-param-limit": "42", "mcp-param-dry": "true"}),
        ({"limit": -7, "dry": False}, {"mcp-param-limit": "-7", "mcp-param-dry": "false"}),
        ({"limit": 42.0}, {"mcp-param-limit": "42"}),
        ({"limit": 2**53 - 1}, {"mcp-param-limit": "9007199254740991"}),
        ({"where": {"zone": "z1"}, "query": "q"}, {"mcp-param-zone": "z1"}),
        ({"region": None, "where": {}}, {}),
        ({}, {}),
    ],
    ids=[
        "plain",
        "non-ascii",
        "padded",
        "newline",
        "sentinel-looking",
        "half-a-sentinel",
        "empty-string",
        "integer-and-true",
        "negative-and-false",
        "integral-float",
        "largest-safe-integer",
        "nested-path",
        "null-and-absent-nested",
        "absent",
    ],
)
async def test_the_spec_encoding_table_passes_the_server_validation(
    via: str, arguments: dict[str, Any], sent: dict[str, str]
) -> None:
    """Each value is sent as the spec's encoding table writes it (plain, or =?base64?...?= for non-ASCII,
    padding, newlines and sentinel look-alikes; integers in decimal, booleans as true/false; null and absent
    omitted), and the server's own -32020 check accepts it: the call runs once."""
    server = TestMcpServer()
    server.tool("sql", input_schema=_MARKED, returns=lambda given: f"got {sorted(given)}")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            assert await pool.call("t.sql", arguments) == f"got {sorted(arguments)}"
    [call] = server.calls("sql")
    assert (call.status, call.executed) == (200, True)
    assert _param_headers(call) == sent
    assert call.arguments == arguments


@pytest.mark.parametrize(
    ("arguments", "why"),
    [
        ({"limit": 2**53}, r"arguments\.limit is mirrored into the Mcp-Param-Limit header, so it must be"),
        ({"limit": 1.5}, r"arguments\.limit .* not a float"),
        ({"where": {"zone": ["a"]}}, r"arguments\.where\.zone is mirrored into the Mcp-Param-Zone header.* not a list"),
    ],
    ids=["beyond-2**53", "fraction", "list"],
)
async def test_a_value_no_header_can_carry_is_not_sent(via: str, arguments: dict[str, Any], why: str) -> None:
    """An integer beyond JavaScript's safe range, a fraction or a list for a mirrored parameter: MCPToolError naming
    the parameter and its header, and nothing is sent (the server would have refused it, or compared it wrongly)."""
    server = TestMcpServer()
    server.tool("sql", input_schema=_MARKED, returns="ran")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            with pytest.raises(MCPToolError, match=why) as caught:
                await pool.call("t.sql", arguments)
    assert "was not sent" in str(caught.value)
    assert server.calls("sql") == []


def _marked(name: str, mark: Any, **schema: Any) -> dict[str, Any]:
    """An inputSchema whose one property `name` has the given schema and mark."""
    return {"type": "object", "properties": {name: {**schema, "x-mcp-header": mark}}}


def _nested_under(keyword: str, wrap: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": {"type": "string"}}, keyword: wrap}


_HIDDEN = {"type": "object", "properties": {"x": {"type": "string", "x-mcp-header": "X"}}}

INVALID = {
    "empty": (_marked("a", "", type="string"), "property 'a': x-mcp-header is empty"),
    "not-a-string": (_marked("a", 7, type="string"), "x-mcp-header must be a string, not a int"),
    "space": (_marked("a", "Re gion", type="string"), "x-mcp-header 'Re gion' is not an HTTP header-name token"),
    "colon": (_marked("a", "Region:", type="string"), "is not an HTTP header-name token (RFC 9110)"),
    "crlf": (_marked("a", "A\r\nB", type="string"), "is not an HTTP header-name token"),
    "non-ascii": (_marked("a", "Régión", type="string"), "is not an HTTP header-name token"),
    "duplicate": (
        {
            "type": "object",
            "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "object", "properties": {"c": {"type": "string", "x-mcp-header": "REGION"}}},
            },
        },
        "property 'b.c': x-mcp-header 'REGION' repeats that of property 'a'",
    ),
    "number": (_marked("a", "A", type="number"), "is of type 'number'; only string, integer and boolean"),
    "object": (_marked("a", "A", type="object"), "is of type 'object'"),
    "array": (_marked("a", "A", type="array", items={"type": "string"}), "is of type 'array'"),
    "number-or-null": (_marked("a", "A", type=["number", "null"]), "is of type 'number'"),
    "only-null": (_marked("a", "A", type="null"), "is of type 'null'"),
    "no-type": (_marked("a", "A", enum=["x", "y"]), "property 'a' marked x-mcp-header 'A' declares no type"),
    "root": ({"type": "object", "x-mcp-header": "Root"}, "x-mcp-header 'Root' sits on the root schema"),
    "items": (
        {"type": "object", "properties": {"list": {"type": "array", "items": _HIDDEN}}},
        "x-mcp-header 'X' sits under 'items'",
    ),
    "prefixItems": (
        {"type": "object", "properties": {"pair": {"type": "array", "prefixItems": [_HIDDEN]}}},
        "sits under 'prefixItems'",
    ),
    "oneOf": (_nested_under("oneOf", [_HIDDEN, {"required": ["a"]}]), "sits under 'oneOf'"),
    "anyOf": (_nested_under("anyOf", [_HIDDEN]), "sits under 'anyOf'"),
    "allOf": (_nested_under("allOf", [_HIDDEN]), "sits under 'allOf'"),
    "not": (_nested_under("not", {"properties": {"x": {"type": "string", "x-mcp-header": "X"}}}), "under 'not'"),
    "if": (_nested_under("if", _HIDDEN), "sits under 'if'"),
    "then": (_nested_under("then", _HIDDEN), "sits under 'then'"),
    "else": (_nested_under("else", _HIDDEN), "sits under 'else'"),
    "additionalProperties": (_nested_under("additionalProperties", _HIDDEN), "under 'additionalProperties'"),
    "ref": (
        {
            "type": "object",
            "$defs": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
            "properties": {"zone": {"$ref": "#/$defs/zone"}},
        },
        "x-mcp-header 'Zone' sits under '$defs'",
    ),
}
"""Tool definitions whose x-mcp-header marks break the spec's rules, and the reason the bridge logs."""

VALID = {
    "nested": {"type": "object", "properties": {"o": {"type": "object", "properties": _HIDDEN["properties"]}}},
    "nullable": _marked("a", "A", type=["string", "null"]),
    "tchars": _marked("a", "!#$%&'*+-.^_`|~09azAZ", type="boolean"),
    "mark-in-data": {
        "type": "object",
        "properties": {"a": {"type": "object", "const": {"x-mcp-header": ""}, "default": {"x-mcp-header": 1}}},
    },
    "property-named-like-the-mark": {"type": "object", "properties": {"x-mcp-header": {"type": "object"}}},
    "ref-without-mark": {
        "type": "object",
        "$defs": {"zone": {"type": "string"}},
        "properties": {"zone": {"$ref": "#/$defs/zone", "x-mcp-header": "Zone", "type": "string"}},
    },
}
"""Definitions that keep the rules, some of which look as if they did not: they stay in the tool list."""


def _catalogue() -> TestMcpServer:
    server = TestMcpServer(page_size=5)
    for name, (schema, _) in INVALID.items():
        server.tool(f"bad-{name}", input_schema=schema, returns="ran")
    for name, schema in VALID.items():
        server.tool(f"good-{name}", input_schema=schema, read_only=True, returns="ran")
    return server


async def test_tools_with_invalid_marks_are_left_out_with_a_warning_naming_each(
    via: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Stateless era over HTTP: every tool whose x-mcp-header marks break a rule (empty, not a token, repeated
    case-insensitively, on a number or non-primitive, off the properties chain) is left out of the tool list,
    with a warning naming the tool and why; the valid tools stay and can be called."""
    server = _catalogue()
    caplog.set_level(logging.WARNING, logger="mcp_testkit.bridge")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            offered = [tool.bare_name for tool in pool.tools()]
            for name in VALID:
                assert await pool.call(f"t.good-{name}", {}) == "ran"
            with pytest.raises(KeyError, match=r"no tool named 't\.bad-empty'"):
                await pool.call("t.bad-empty", {})
    assert offered == [f"good-{name}" for name in VALID]
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == len(INVALID)
    for (name, (_, why)), warning in zip(INVALID.items(), warnings, strict=True):
        assert f"server 't': tool 'bad-{name}' left out of the tool list" in warning
        assert why in warning, (name, warning)
    assert server.executions() == len(VALID)


async def test_the_handshake_era_keeps_tools_with_invalid_marks(caplog: pytest.LogCaptureFixture) -> None:
    """The handshake era has no Mcp-Param headers, so a mark breaks nothing there: every tool is listed and
    called, without a warning and without an Mcp-Param header."""
    server = _catalogue()
    caplog.set_level(logging.WARNING, logger="mcp_testkit.bridge")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, "socket", era="handshake") as pool:
            assert len(pool.tools()) == len(INVALID) + len(VALID)
            assert await pool.call("t.bad-number", {"a": 1.5}) == "ran"
    assert [record for record in caplog.records if record.levelno >= logging.WARNING] == []
    [call] = server.calls("bad-number")
    assert _param_headers(call) == {}


_REGION = _marked("region", "Region", type="string")
_ZONE = _marked("region", "Zone", type="string")


async def test_a_schema_changed_since_the_listing_is_listed_again_and_the_call_sent_once_more(via: str) -> None:
    """The server renames a write's mark after the bridge listed it: the call is refused with -32020 before it
    runs, the bridge lists again and sends it once more with the new header; the ledger shows one run, and the
    next call goes out with the new header at once."""
    server = TestMcpServer()
    server.tool("put", input_schema=_REGION, returns=lambda given: f"put in {given['region']}")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            server.tool("put", input_schema=_ZONE, returns=lambda given: f"put in {given['region']}")
            assert await pool.call("t.put", {"region": "eu"}) == "put in eu"
            assert server.executions("put") == 1
            assert await pool.call("t.put", {"region": "us"}) == "put in us"
    sent = [(r.rpc_method, r.status, r.executed is True) for r in server.journal if r.rpc_method != "server/discover"]
    assert sent == [
        ("tools/list", 200, False),
        ("tools/call", 400, False),
        ("tools/list", 200, False),
        ("tools/call", 200, True),
        ("tools/call", 200, True),
    ]
    refused, resent, later = server.calls("put")
    assert refused.response["error"]["code"] == -32020
    assert "Mcp-Param-Zone header is missing" in refused.response["error"]["message"]
    assert (_param_headers(refused), _param_headers(resent)) == ({"mcp-param-region": "eu"}, {"mcp-param-zone": "eu"})
    assert _param_headers(later) == {"mcp-param-zone": "us"}
    assert len({refused.rpc_id, resent.rpc_id}) == 2
    assert server.executions("put") == 2


async def test_a_second_32020_names_the_param_header_and_nothing_ran(via: str) -> None:
    """A server that refuses the resent call with -32020 too (it checks another schema than it lists): the call
    is an MCPConnectionError naming Mcp-Param-Region, sent twice, run never."""
    server = TestMcpServer()
    server.tool("put", input_schema=_REGION, returns="put")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            server.inject(faults.HeaderMismatch("Mcp-Param-Region"), method="tools/call", times=2)
            with pytest.raises(MCPConnectionError, match=r"-32020\): Mcp-Param-Region did not match") as caught:
                await pool.call("t.put", {"region": "eu"})
    message = str(caught.value)
    assert "also after listing the tools again and sending it once more" in message
    assert "checks them against another inputSchema than it lists" in message
    assert [(r.status, r.executed) for r in server.calls("put")] == [(400, False), (400, False)]
    assert server.executions("put") == 0


@pytest.mark.parametrize("change", ["removed", "invalid"])
async def test_a_tool_gone_or_invalid_at_the_new_listing_is_not_sent_again(via: str, change: str) -> None:
    """The new listing after a -32020 no longer offers the tool, or offers it with a mark that breaks the rules:
    MCPToolError, and the call is not sent again (it never ran)."""
    server = TestMcpServer()
    server.tool("put", input_schema=_REGION, returns="put")
    with anyio.fail_after(LIMIT_S):
        async with pool_for(server, via, era="stateless") as pool:
            server.inject(faults.HeaderMismatch("Mcp-Param-Region"), method="tools/call")
            if change == "removed":
                server.remove_tool("put")
                server.tool("other", returns="other")
            else:
                server.tool("put", input_schema=_marked("region", "Region", type="number"), returns="put")
            expected = "no longer offered" if change == "removed" else r"now breaks the x-mcp-header rules .*'number'"
            with pytest.raises(MCPToolError, match=expected) as caught:
                await pool.call("t.put", {"region": "eu"})
    assert "nothing" in str(caught.value)
    assert [r.rpc_method for r in server.journal][-2:] == ["tools/call", "tools/list"]
    assert server.executions() == 0
