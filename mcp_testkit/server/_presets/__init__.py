"""Built-in catalogues: `demo` for a first look, `conformance` for the official conformance suite.

A preset scripts a server through its public verbs (`ScriptedServer`); the facade applies one by name (`PRESETS`)
when it builds or resets a server, and this package imports nothing of the facade above it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit.server._dispatch._tasks import ask_client, asks_first, start_task
from mcp_testkit.server._presets._input import input_requests
from mcp_testkit.server._presets._scripted import ScriptedServer
from mcp_testkit.tools import JsonRpcError, ToolError

if TYPE_CHECKING:
    from mcp_testkit.tools import ToolContext

__all__ = ["PNG_1X1", "PRESETS", "WAV_SILENCE"]

PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
"""A 1x1 red PNG, base64."""
WAV_SILENCE = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
"""Eight samples of silence as a WAV file, base64."""

_TITLE = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
_QUERY = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


def demo(server: ScriptedServer) -> None:
    """A small ticket tracker: a read, an idempotent write, a write, a failing tool, rich content."""
    opened: list[str] = []

    def create(arguments: dict[str, Any]) -> str:
        opened.append(arguments["title"])
        return f"opened ticket #{len(opened)}: {arguments['title']}"

    server.tool("create_ticket", title="Create ticket", description="Opens a ticket", input_schema=_TITLE)(create)
    server.tool(
        "search_tickets",
        title="Search tickets",
        description="Finds tickets whose title contains q",
        input_schema=_QUERY,
        read_only=True,
        returns=lambda arguments: {"matches": [t for t in opened if arguments["q"] in t]},
    )
    server.tool(
        "close_ticket",
        description="Closes a ticket (closing twice is harmless)",
        input_schema={"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        idempotent=True,
        destructive=False,
        returns=lambda arguments: f"closed ticket #{arguments['id']}",
    )
    server.tool("broken", description="Always fails", returns=ToolError("the ticket store is unavailable"))
    server.tool(
        "snapshot",
        description="A screenshot and a link",
        read_only=True,
        returns=[
            {"type": "text", "text": "the board:"},
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///board.pdf", "name": "board.pdf"},
        ],
    )


def conformance(server: ScriptedServer) -> None:
    """The tools the official conformance suite's server scenarios call, answering as they expect."""
    server.response_mode = "sse"  # progress and log notifications travel on the call's stream
    server.tool(
        "test_simple_text",
        description="Returns a simple text block",
        returns="This is a simple text response for testing.",
    )
    server.tool(
        "test_image_content",
        description="Returns a PNG image",
        returns=[{"type": "image", "data": PNG_1X1, "mimeType": "image/png"}],
    )
    server.tool(
        "test_audio_content",
        description="Returns a WAV clip",
        returns=[{"type": "audio", "data": WAV_SILENCE, "mimeType": "audio/wav"}],
    )
    server.tool(
        "test_embedded_resource",
        description="Returns an embedded text resource",
        returns=[
            {
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content.",
                },
            }
        ],
    )
    server.tool(
        "test_multiple_content_types",
        description="Returns text, an image and an embedded resource",
        returns=[
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG_1X1, "mimeType": "image/png"},
            {
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": '{"test":"data","value":123}',
                },
            },
        ],
    )
    server.tool(
        "test_error_handling",
        description="Always answers with a tool error",
        returns=ToolError("This tool intentionally returns an error for testing"),
    )

    async def with_logging(arguments: dict[str, Any], context: ToolContext) -> str:
        for step, text in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if step:
                await anyio.sleep(0.05)
            await context.log("info", text)
        return "Tool with logging executed successfully"

    async def with_progress(arguments: dict[str, Any], context: ToolContext) -> str:
        for step, value in enumerate((0, 50, 100)):
            if step:
                await anyio.sleep(0.05)
            await context.progress(value, 100)
        return "Tool with progress executed successfully"

    server.tool("test_tool_with_logging", description="Sends three log messages")(with_logging)
    server.tool("test_tool_with_progress", description="Reports progress 0, 50, 100 of 100")(with_progress)
    _stateless_era(server, with_logging)
    _offerings(server)
    _listen_triggers(server)
    _tasks(server)
    input_requests(server)


_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""What the suite's json-schema-2020-12 scenario asks a tool to declare, kept as it is sent."""

_MIRRORED = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "description": "Where to run the query", "x-mcp-header": "Region"},
        "query": {"type": "string", "description": "The query"},
    },
    "required": ["region"],
}


def _stateless_era(server: ScriptedServer, with_logging: Callable[..., Any]) -> None:
    """The diagnostic tools of the 2026-07-28 scenarios: capabilities, logging without a level, 2020-12 schemas
    and a parameter mirrored into an `Mcp-Param-Region` header."""
    server.tool(
        "test_missing_capability",
        description="Needs the client's sampling capability: refused with -32021 without it",
        requires=["sampling"],
        returns="sampling was declared",
    )
    server.tool(
        "test_streaming_elicitation",
        description="Needs the client's elicitation capability; answers on its own response stream",
        requires=["elicitation"],
        returns="elicitation was declared",
    )
    server.tool("test_logging_tool", description="Sends three log messages, only to a request that set a level")(
        with_logging
    )
    server.tool(
        "json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema=_SCHEMA_2020_12,
        returns="the schema was kept",
    )
    server.tool(
        "test_mirrored_header",
        description="Mirrors its region parameter into the Mcp-Param-Region header (x-mcp-header)",
        input_schema=_MIRRORED,
        read_only=True,
        returns=lambda arguments: f"ran in {arguments['region']}",
    )


def _offerings(server: ScriptedServer) -> None:
    """The resources, template, prompts and completion values the suite's scenarios read, get and complete."""
    server.resource(
        "test://static-text",
        name="static-text",
        description="A static text resource",
        mime_type="text/plain",
        text="This is the content of the static text resource.",
    )
    server.resource(
        "test://static-binary",
        name="static-binary",
        description="A static PNG image",
        mime_type="image/png",
        blob=base64.b64decode(PNG_1X1),
    )
    server.resource(
        "test://watched-resource",
        name="watched-resource",
        description="A resource to subscribe to",
        mime_type="text/plain",
        text="Watched resource content.",
    )
    server.resource_template(
        "test://template/{id}/data",
        name="template-data",
        description="Data for an id",
        mime_type="application/json",
        reads=lambda params: json.dumps(
            {"id": params["id"], "templateTest": True, "data": f"Data for ID: {params['id']}"}, separators=(",", ":")
        ),
    )
    server.prompt(
        "test_simple_prompt",
        description="A simple prompt without arguments",
        messages=[{"role": "user", "content": "This is a simple prompt for testing."}],
    )
    server.prompt(
        "test_prompt_with_arguments",
        description="A prompt with two required arguments",
        arguments=[
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
        messages=lambda arguments: [
            {"role": "user", "content": "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'".format(**arguments)}
        ],
    )
    server.prompt(
        "test_prompt_with_embedded_resource",
        description="A prompt embedding the resource it is given",
        arguments=[{"name": "resourceUri", "description": "URI of the resource to embed", "required": True}],
        messages=lambda arguments: [
            {
                "role": "user",
                "content": {
                    "type": "resource",
                    "resource": {
                        "uri": arguments["resourceUri"],
                        "mimeType": "text/plain",
                        "text": "Embedded resource content for testing.",
                    },
                },
            },
            {"role": "user", "content": "Please process the embedded resource above."},
        ],
    )
    server.prompt(
        "test_prompt_with_image",
        description="A prompt with an image",
        messages=[
            {"role": "user", "content": {"type": "image", "data": PNG_1X1, "mimeType": "image/png"}},
            {"role": "user", "content": "Please analyze the image above."},
        ],
    )
    server.complete(prompt="test_prompt_with_arguments", argument="arg1", values=["paris", "park", "party"])


def _listen_triggers(server: ScriptedServer) -> None:
    """The suite's hooks that change the tool and prompt lists, so that a `subscriptions/listen` stream has a change
    to carry: each call (re)places one dynamic entry, whose description counts the calls."""
    calls = {"tools": 0, "prompts": 0}

    def change_tools(arguments: dict[str, Any]) -> str:
        calls["tools"] += 1
        server.tool("test_dynamic_tool", description=f"Placed by test_trigger_tool_change (call {calls['tools']})")
        return "the tool list changed"

    def change_prompts(arguments: dict[str, Any]) -> str:
        calls["prompts"] += 1
        text = f"Placed by test_trigger_prompt_change (call {calls['prompts']})"
        server.prompt("test_dynamic_prompt", description=text, messages=[{"role": "user", "content": text}])
        return "the prompt list changed"

    server.tool("test_trigger_tool_change", description="Changes the tool list (listen streams are told)")(change_tools)
    server.tool("test_trigger_prompt_change", description="Changes the prompt list (listen streams are told)")(
        change_prompts
    )


_SECONDS = {
    "type": "object",
    "properties": {"seconds": {"type": "number", "minimum": 0}, "label": {"type": "string"}},
}


def _tasks(server: ScriptedServer) -> None:
    """The fixtures of the suite's tasks-extension scenarios (SEP-2663): a sync tool, and tools run as tasks."""
    async def slow(arguments: dict[str, Any]) -> str:
        await anyio.sleep(float(arguments.get("seconds", 0)))
        return f"computed {arguments.get('label', '')} after {arguments.get('seconds', 0)} s"

    async def failing(arguments: dict[str, Any]) -> Any:
        await anyio.sleep(0.2)
        return ToolError("the job failed")

    async def protocol_error(arguments: dict[str, Any]) -> Any:
        raise JsonRpcError(-32603, "Internal error: the job's worker crashed")

    def elicit(message: str) -> dict[str, Any]:
        schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
        params = {"mode": "form", "message": message, "requestedSchema": schema}
        return {"method": "elicitation/create", "params": params}

    async def confirm_delete(arguments: dict[str, Any]) -> str:
        filename = arguments.get("filename", "")
        answers = await ask_client({"confirm": elicit(f"Delete {filename}?")})
        confirmed = (answers["confirm"].get("content") or {}).get("confirm") is True
        return f"deleted {filename}" if confirmed else f"kept {filename}"

    async def multi_input(arguments: dict[str, Any]) -> str:
        answers = await ask_client({"first": elicit("First?"), "second": elicit("Second?")})
        return f"got {len(answers)} answers"

    server.tool("greet", description="Greets by name (never a task)")(lambda arguments: f"Hello, {arguments['name']}!")
    server.tool("slow_compute", description="Sleeps `seconds`, then answers", input_schema=_SECONDS, task="optional")(
        slow
    )
    server.tool("failing_job", description="A tool error after a moment", task="required")(failing)
    server.tool("protocol_error_job", description="Crashes into a protocol error", task="optional")(protocol_error)
    server.tool("confirm_delete", description="Asks the client to confirm, then deletes", task="optional")(
        confirm_delete
    )
    server.tool("multi_input", description="Asks two questions at once", task="optional")(multi_input)

    @asks_first
    async def with_task(arguments: dict[str, Any], ctx: ToolContext) -> str:
        name_schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        answer = await ctx.elicit("What is your name?", name_schema, key="user_name")
        await start_task()  # the name is in: the rest runs as a task
        await anyio.sleep(0.05)
        return f"Hello, {(answer.get('content') or {}).get('name', 'nobody')}!"

    server.tool("test_tool_with_task", description="Asks a name in rounds, then greets as a task", task="required")(
        with_task
    )


PRESETS: dict[str, Callable[[ScriptedServer], None]] = {"conformance": conformance, "demo": demo}
