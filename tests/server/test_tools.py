"""Scripted tools: every answer kind on the wire, handlers, errors and `check()`, schemas and annotations."""

from __future__ import annotations

import json
from typing import Any

import anyio
import mcp_types
import pytest

from mcp_testkit import TestMcpServer, ToolContext, ToolError
from mcp_testkit.server._presets import PNG_1X1

from ._support import serving

pytestmark = pytest.mark.anyio

TITLE_SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}


async def _call(server: TestMcpServer, via: str, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    async with serving(server, via) as wire:
        await wire.initialize()
        return await wire.call(tool, arguments)


async def test_a_str_is_one_text_block(via: str) -> None:
    """returns="text" answers one text block and no isError."""
    server = TestMcpServer()
    server.tool("t", returns="hello")
    assert await _call(server, via, "t") == {"content": [{"type": "text", "text": "hello"}]}


async def test_a_dict_is_structured_content_plus_its_json(via: str) -> None:
    """A dict answer is structuredContent, and the same JSON as a text block for older clients."""
    server = TestMcpServer()
    server.tool("t", returns={"count": 2, "items": ["a", "b"]})
    result = await _call(server, via, "t")
    assert result["structuredContent"] == {"count": 2, "items": ["a", "b"]}
    assert json.loads(result["content"][0]["text"]) == {"count": 2, "items": ["a", "b"]}


async def test_content_blocks_as_models_and_dicts(via: str) -> None:
    """A list of content blocks (mcp_types models or dicts) is sent as the result's content, in order."""
    server = TestMcpServer()
    server.tool(
        "t",
        returns=[
            mcp_types.TextContent(type="text", text="a"),
            mcp_types.ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
            {"type": "resource_link", "uri": "file:///x", "name": "x"},
        ],
    )
    assert (await _call(server, via, "t"))["content"] == [
        {"type": "text", "text": "a"},
        {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
        {"type": "resource_link", "uri": "file:///x", "name": "x"},
    ]


async def test_a_whole_call_tool_result_is_sent_as_is(via: str) -> None:
    """A CallToolResult answer is sent whole, aliases and all."""
    server = TestMcpServer()
    result = mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text="x")], structured_content={"k": 1}, is_error=True
    )
    server.tool("t", returns=result)
    assert await _call(server, via, "t") == {
        "content": [{"type": "text", "text": "x"}],
        "structuredContent": {"k": 1},
        "isError": True,
    }


async def test_no_answer_is_empty_content(via: str) -> None:
    """A tool scripted with no answer answers an empty content list."""
    server = TestMcpServer()
    server.tool("t")
    assert await _call(server, via, "t") == {"content": []}


async def test_a_sync_handler_gets_the_arguments(via: str) -> None:
    """A function used as the decorator's handler gets the call's arguments and its answer is sent."""
    server = TestMcpServer()

    @server.tool("create", input_schema=TITLE_SCHEMA)
    def create(arguments: dict[str, Any]) -> str:
        return f"opened {arguments['title']!r}"

    assert create({"title": "x"}) == "opened 'x'"  # the decorator hands the function back
    assert (await _call(server, via, "create", {"title": "bug"}))["content"][0]["text"] == "opened 'bug'"


async def test_an_async_handler_is_awaited(via: str) -> None:
    """An async handler is awaited and may answer any kind, here a dict."""
    server = TestMcpServer()

    async def handler(arguments: dict[str, Any]) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        return {"echo": arguments}

    server.tool("t", returns=handler)
    assert (await _call(server, via, "t", {"a": 1}))["structuredContent"] == {"echo": {"a": 1}}


async def test_a_handler_can_take_a_context(via: str) -> None:
    """A handler with a second parameter gets a ToolContext naming the tool and the request id."""
    server = TestMcpServer()
    seen: list[ToolContext] = []

    def handler(arguments: dict[str, Any], context: ToolContext) -> str:
        seen.append(context)
        return "ok"

    server.tool("t", returns=handler)
    await _call(server, via, "t")
    assert (seen[0].tool, seen[0].request_id, seen[0].progress_token) == ("t", 1, None)


async def test_a_context_keeps_the_progress_and_logs_it_sent(via: str) -> None:
    """ToolContext.sent keeps, in order, the progress and log notifications the call sent, and only those."""
    server = TestMcpServer()
    seen: list[ToolContext] = []

    async def handler(arguments: dict[str, Any], context: ToolContext) -> str:
        seen.append(context)
        await context.progress(1, 2, "half")
        await context.log("info", "working")
        return "ok"

    server.tool("t", returns=handler)
    async with serving(server, via) as wire:
        await wire.initialize()
        await wire.request("tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": "p"}})
    assert [(n["method"], n["params"]) for n in seen[0].sent] == [
        ("notifications/progress", {"progressToken": "p", "progress": 1, "total": 2, "message": "half"}),
        ("notifications/message", {"level": "info", "data": "working"}),
    ]


async def test_answers_are_one_per_call_and_the_last_repeats(via: str) -> None:
    """answers=[...] gives one answer per call in order; the last one answers every later call."""
    server = TestMcpServer()
    server.tool("flaky", answers=["first", ToolError("second fails"), lambda arguments: "third"])
    async with serving(server, via) as wire:
        await wire.initialize()
        results = [await wire.call("flaky", request_id=n) for n in range(5)]
    assert [r["content"][0]["text"] for r in results] == ["first", "second fails", "third", "third", "third"]
    assert [r.get("isError", False) for r in results] == [False, True, False, False, False]
    assert server.executions("flaky") == 5


async def test_tool_error_raised_by_a_handler_is_an_error_result(via: str) -> None:
    """Raising ToolError gives isError with its text; it is not a handler error for check()."""
    server = TestMcpServer()

    def handler(arguments: dict[str, Any]) -> str:
        raise ToolError("ticket store down")

    server.tool("t", returns=handler)
    result = await _call(server, via, "t")
    assert result == {"content": [{"type": "text", "text": "ticket store down"}], "isError": True}
    server.check()
    assert server.errors == []


async def test_other_exceptions_are_error_results_and_check_raises(via: str) -> None:
    """Any other exception gives an isError result naming it, is kept, and check() raises the first one."""
    server = TestMcpServer("crashy")

    def handler(arguments: dict[str, Any]) -> str:
        raise KeyError(f"missing {len(server.errors)}")

    server.tool("t", returns=handler)
    async with serving(server, via) as wire:
        await wire.initialize()
        result = await wire.call("t")
        await wire.call("t", request_id=2)
        await wire.ping_ok()
    assert result["isError"] is True
    assert "KeyError" in result["content"][0]["text"]
    assert [str(e) for e in server.errors] == ["'missing 0'", "'missing 1'"]
    expected = "server 'crashy' raised KeyError: 'missing 0' \\(2 handler errors"
    with pytest.raises(AssertionError, match=expected) as info:
        server.check()
    assert info.value.__cause__ is server.errors[0]


async def test_a_bad_answer_type_is_a_handler_error(via: str) -> None:
    """A handler returning something that is not an answer (an int) is an isError result and a kept error."""
    server = TestMcpServer()
    server.tool("t", returns=lambda arguments: 42)
    result = await _call(server, via, "t")
    assert result["isError"] is True
    with pytest.raises(AssertionError, match="TypeError"):
        server.check()


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18"])
async def test_invalid_arguments_are_32602_before_2025_11_25(via: str, version: str) -> None:
    """Arguments that break input_schema are a JSON-RPC -32602 up to 2025-06-18; the handler does not run."""
    server = TestMcpServer()
    server.tool("create", input_schema=TITLE_SCHEMA, returns="opened")
    async with serving(server, via) as wire:
        await wire.initialize(version)
        response = await wire.request("tools/call", {"name": "create", "arguments": {"title": 7}})
    assert response["error"]["code"] == -32602
    assert "title" in response["error"]["message"]
    assert server.executions("create") == 0
    assert server.calls("create")[0].executed is False


async def test_invalid_arguments_are_a_tool_error_from_2025_11_25(via: str) -> None:
    """Under 2025-11-25 a validation failure is an isError result the model can read; the handler does not run."""
    server = TestMcpServer()
    server.tool("create", input_schema=TITLE_SCHEMA, returns="opened")
    async with serving(server, via) as wire:
        await wire.initialize("2025-11-25")
        result = await wire.call("create", {})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("invalid arguments for tool 'create'")
    assert "'title'" in text  # the missing field, named in jsonschema's words after ours
    assert server.executions("create") == 0


async def test_valid_arguments_pass_the_schema(via: str) -> None:
    """Arguments that fit input_schema reach the handler."""
    server = TestMcpServer()
    server.tool("create", input_schema=TITLE_SCHEMA, returns="opened")
    assert (await _call(server, via, "create", {"title": "t"}))["content"][0]["text"] == "opened"
    assert server.executions("create") == 1


async def test_definitions_carry_title_schemas_and_annotations(via: str) -> None:
    """tools/list shows title, description, inputSchema (default object), outputSchema and the annotations given."""
    server = TestMcpServer()
    server.tool("plain")
    server.tool(
        "fetch",
        title="Fetch",
        description="Echoes text",
        input_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        output_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        read_only=True,
        idempotent=True,
        destructive=False,
        open_world=False,
    )
    server.tool("hinted", annotations=mcp_types.ToolAnnotations(title="H", read_only_hint=True), read_only=False)
    server.tool("mapped", annotations={"idempotentHint": True})
    async with serving(server, via) as wire:
        await wire.initialize()
        tools = (await wire.request("tools/list"))["result"]["tools"]
    assert tools[0] == {"name": "plain", "inputSchema": {"type": "object"}}
    assert tools[1]["title"] == "Fetch"
    assert tools[1]["description"] == "Echoes text"
    assert tools[1]["outputSchema"]["properties"] == {"text": {"type": "string"}}
    assert tools[1]["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert tools[2]["annotations"] == {"title": "H", "readOnlyHint": False}
    assert tools[3]["annotations"] == {"idempotentHint": True}
    assert [mcp_types.Tool.model_validate(t).name for t in tools] == ["plain", "fetch", "hinted", "mapped"]


def test_adding_a_tool_again_replaces_it() -> None:
    """tool() with a name already there replaces that tool and keeps its place."""
    server = TestMcpServer()
    server.tool("a", returns="1")
    server.tool("b")
    server.tool("a", returns="2")
    assert list(server.tools) == ["a", "b"]
    assert server.tools["a"].answers == ["2"]


def test_remove_tool() -> None:
    """remove_tool takes a tool out; an unknown name is a KeyError naming the tools there are."""
    server = TestMcpServer()
    server.tool("a")
    server.remove_tool("a")
    assert server.tools == {}
    with pytest.raises(KeyError, match="no tool 'a'"):
        server.remove_tool("a")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"name": "has space"}, "is not valid"),
        ({"name": "x" * 129}, "is not valid"),
        ({"input_schema": {"type": "array"}}, '"type": "object"'),
        ({"input_schema": {"type": "object", "properties": {"a": {"type": 5}}}}, "not a valid JSON Schema"),
        ({"returns": "a", "answers": ["b"]}, "not both"),
        ({"answers": []}, "non-empty list"),
        ({"answers": "abc"}, "non-empty list"),
    ],
)
def test_bad_tool_definitions_are_refused(options: dict[str, Any], message: str) -> None:
    """tool() refuses a bad name, a non-object or invalid schema, and conflicting answers, naming the problem."""
    name = options.pop("name", "t")
    with pytest.raises(ValueError, match=message):
        TestMcpServer().tool(name, **options)


def test_tool_error_is_a_value() -> None:
    """ToolErrors with the same text are equal, so answer lists compare and print well."""
    assert ToolError("x") == ToolError("x")
    assert ToolError("x") != ToolError("y")
    assert repr(ToolError("x")) == "ToolError('x')"
    assert len({ToolError("x"), ToolError("x")}) == 1
