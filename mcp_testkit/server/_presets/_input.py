"""The conformance preset's tools and prompt that ask the client for input (elicitation, sampling, roots).

The same handlers serve both suites: 0.1.16's handshake-era scenarios (`test_sampling`, `test_elicitation`, the
SEP-1034 and SEP-1330 schemas) as server-to-client requests, and the 2026-07-28 scenarios (SEP-2322) as
InputRequiredResult rounds, with the keys those scenarios name.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp_testkit.tools import Elicit, ListRoots, Sample

if TYPE_CHECKING:
    from mcp_testkit.server._presets._scripted import ScriptedServer
    from mcp_testkit.tools import ToolContext

__all__ = ["input_requests"]


def _asking(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


_NAME = _asking({"name": {"type": "string"}}, "name")

_SEP1034 = _asking(
    {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    }
)

_SEP1330 = _asking(
    {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    }
)


def _text(answer: dict[str, Any]) -> str:
    """The text of a sampling answer's content block (or its first block)."""
    content = answer.get("content")
    block = content[0] if isinstance(content, list) and content else content
    return str(block.get("text", "")) if isinstance(block, dict) else ""


def _elicited(answer: dict[str, Any]) -> str:
    content = json.dumps(answer.get("content", {}), separators=(",", ":"))
    return f"Elicitation completed: action={answer.get('action')}, content={content}"


def input_requests(server: ScriptedServer) -> None:
    """Script the tools and the prompt the suites' input-request scenarios call."""
    _handshake_suite(server)
    _round_trip_suite(server)


def _handshake_suite(server: ScriptedServer) -> None:
    prompt_schema = _asking({"prompt": {"type": "string"}}, "prompt")

    @server.tool("test_sampling", description="Asks the client's model to answer a prompt", input_schema=prompt_schema)
    async def sampling(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.sample(arguments["prompt"], max_tokens=100)
        return f"LLM response: {_text(answer)}"

    message_schema = _asking({"message": {"type": "string"}}, "message")
    wanted = _asking(
        {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "username",
        "email",
    )

    @server.tool("test_elicitation", description="Asks the user for a name and email", input_schema=message_schema)
    async def elicitation(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit(arguments["message"], wanted)
        return f"User response: action={answer.get('action')}, content={json.dumps(answer.get('content', {}))}"

    @server.tool("test_elicitation_sep1034_defaults", description="Elicits with defaults of every primitive type")
    async def defaults(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return _elicited(await ctx.elicit("Please review and update the form fields with defaults", _SEP1034))

    @server.tool("test_elicitation_sep1330_enums", description="Elicits with the five enum schema variants")
    async def enums(arguments: dict[str, Any], ctx: ToolContext) -> str:
        return _elicited(await ctx.elicit("Please select options from the enum fields", _SEP1330))


def _round_trip_suite(server: ScriptedServer) -> None:
    @server.tool("test_input_required_result_elicitation", description="Asks for a name (key user_name)")
    async def elicitation(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("What is your name?", _NAME, key="user_name")
        return f"Hello, {answer.get('content', {}).get('name')}!"

    @server.tool("test_input_required_result_sampling", description="Asks the client's model a question")
    async def sampling(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
        return f"The model said: {_text(answer)}"

    @server.tool("test_input_required_result_list_roots", description="Asks for the client's roots")
    async def roots(arguments: dict[str, Any], ctx: ToolContext) -> str:
        found = await ctx.list_roots(key="client_roots")
        return "Roots: " + ", ".join(str(root.get("uri")) for root in found)

    confirm = _asking({"ok": {"type": "boolean"}}, "ok")

    @server.tool("test_input_required_result_request_state", description="Asks for a confirmation, state verified")
    async def request_state(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Please confirm", confirm, key="confirm")
        return f"state-ok: confirmed={answer.get('content', {}).get('ok')}"

    @server.tool("test_input_required_result_tampered_state", description="Asks for a confirmation; signed state")
    async def tampered_state(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Please confirm", confirm, key="confirm")
        return f"state-ok: confirmed={answer.get('content', {}).get('ok')}"

    @server.tool("test_input_required_result_multiple_inputs", description="Asks for a name, a greeting and roots")
    async def multiple(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answers = await ctx.ask(
            {
                "user_name": Elicit("What is your name?", _NAME),
                "greeting": Sample("Generate a greeting", 50),
                "client_roots": ListRoots(),
            }
        )
        name = answers["user_name"].get("content", {}).get("name")
        return f"{_text(answers['greeting'])} {name} ({len(answers['client_roots'].get('roots', []))} roots)"

    @server.tool("test_input_required_result_multi_round", description="Asks for a name, then a color")
    async def multi_round(arguments: dict[str, Any], ctx: ToolContext) -> str:
        name = await ctx.elicit("Step 1: What is your name?", _NAME, key="step1")
        color_schema = _asking({"color": {"type": "string"}}, "color")
        color = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
        return f"{name.get('content', {}).get('name')} likes {color.get('content', {}).get('color')}"

    @server.tool("test_input_required_result_capabilities", description="Asks only for what the client declared")
    async def capabilities(arguments: dict[str, Any], ctx: ToolContext) -> str:
        declared = ctx.client_capabilities
        wanted: dict[str, Any] = {}
        if "elicitation" in declared:
            wanted["user_name"] = Elicit("What is your name?", _NAME)
        if "sampling" in declared:
            wanted["greeting"] = Sample("Generate a greeting", 50)
        if "roots" in declared:
            wanted["client_roots"] = ListRoots()
        answers = await ctx.ask(wanted)
        return f"asked for {', '.join(sorted(answers)) or 'nothing'}"

    context_schema = _asking({"context": {"type": "string"}}, "context")

    async def prompt_messages(arguments: dict[str, str], ctx: ToolContext) -> list[dict[str, Any]]:
        answer = await ctx.elicit("What context should the prompt use?", context_schema, key="user_context")
        return [{"role": "user", "content": f"Use this context: {answer.get('content', {}).get('context')}"}]

    server.prompt(
        "test_input_required_result_prompt",
        description="Asks the user for context before it is given",
        messages=prompt_messages,
    )
