"""What the cassette tests share: the calls every client makes, and clients that make them."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_testkit.bridge import MCPToolError, ServerConfig, ToolPool
from mcp_testkit.cassettes import FORMAT, VERSION
from mcp_testkit.cassettes._redact import Redactor

from .upstream import SECRET_TOKEN

LIMIT_S = 60.0
"""Generous: a limit only stops a broken test from hanging, it never decides a pass."""
REDACT = [r"ACCT-\d+-\d+"]
"""The --redact pattern the tests record with: it names the account number `account` answers."""
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("add", {"a": 1, "b": 2}),
    ("add", {"a": 40, "b": 2}),
    ("search", {"query": "lamp"}),
    ("search", {"query": "lamp", "page": 2}),
    ("logo", {}),
    ("fail", {"reason": "no"}),
    ("account", {}),
    ("slow_count", {"to": 3}),
    ("write_note", {"text": "hello"}),
]
"""Every tool of the upstream, one with two different arguments: the image, the isError, the secret, the write."""
TOOL_NAMES = ["add", "search", "logo", "fail", "account", "slow_count", "confirm", "write_note"]
_PLACEHOLDER = re.compile(r"<redacted:[^<>\s]+>")


def dumped(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def sdk_answers(client: Client, calls: Sequence[tuple[str, dict[str, Any]]] = CALLS) -> dict[str, Any]:
    """Every tool definition (all pages walked), every call's result and the progress it reported."""
    tools: list[Any] = []
    cursor = None
    with anyio.fail_after(LIMIT_S):
        while True:
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        answers: dict[str, Any] = {"tools": [dumped(tool) for tool in tools]}
        for index, (name, arguments) in enumerate(calls):
            progress: list[float] = []

            async def on_progress(value: float, total: float | None, message: str | None, seen: Any = progress) -> None:
                seen.append(value)

            answers[f"{index}:{name}"] = dumped(await client.call_tool(name, arguments, progress_callback=on_progress))
            if progress:
                answers[f"{index}:{name}:progress"] = progress
    return answers


def _logger(logs: list[Any]) -> Any:
    async def on_log(params: Any) -> None:
        logs.append(params.data)

    return on_log


async def sdk_http_answers(
    url: str, calls: Sequence[tuple[str, dict[str, Any]]] = CALLS, *, mode: Any = "legacy"
) -> dict[str, Any]:
    """`sdk_answers` of the SDK `Client` connected to `url`, with its log lines: in legacy mode (the handshake
    era), or in `mode="auto"` (the SDK's default: `server/discover`, then 2026-07-28 where the server offers it)."""
    logs: list[Any] = []
    with anyio.fail_after(LIMIT_S):
        async with Client(url, mode=mode, logging_callback=_logger(logs)) as client:
            answers = await sdk_answers(client, calls)
    return {**answers, "logs": logs}


def stdio_parameters(command: Sequence[str]) -> StdioServerParameters:
    return StdioServerParameters(command=command[0], args=list(command[1:]))


async def sdk_stdio_answers(command: Sequence[str]) -> dict[str, Any]:
    """`sdk_answers` of the SDK `Client` running `command` as a stdio server, with its log lines."""
    logs: list[Any] = []
    with anyio.fail_after(LIMIT_S):
        async with Client(stdio_parameters(command), mode="legacy", logging_callback=_logger(logs)) as client:
            answers = await sdk_answers(client)
    return {**answers, "logs": logs}


async def bridge_answers(
    url: str, calls: Sequence[tuple[str, dict[str, Any]]] = CALLS, *, era: Any = "auto"
) -> dict[str, Any]:
    """The tools the reference bridge (in `era`) loads and what each call renders to (or the tool error it raises)."""
    answers: dict[str, Any] = {}
    with anyio.fail_after(LIMIT_S):
        async with ToolPool([ServerConfig(name="up", url=url, connect_retries=0, era=era)]) as pool:
            answers["tools"] = [(tool.name, tool.kind, tool.input_schema) for tool in pool.tools()]
            for index, (name, arguments) in enumerate(calls):
                try:
                    answers[f"{index}:{name}"] = await pool.call(f"up.{name}", arguments)
                except MCPToolError as error:
                    answers[f"{index}:{name}"] = f"tool error: {error}"
    return answers


def as_recorded(answers: Any, patterns: Sequence[str] = REDACT) -> Any:
    """Live answers as a cassette holds them: secrets redacted, every placeholder alike."""
    text = Redactor(patterns).text(json.dumps(answers, sort_keys=True))
    return json.loads(_PLACEHOLDER.sub("<redacted>", text))


def without_secrets(answers: dict[str, Any]) -> dict[str, Any]:
    """The answers that hold no secret (all but `account`'s), which a replay must give back exactly."""
    return {key: value for key, value in answers.items() if not key.endswith(":account")}


__all__ = [
    "CALLS",
    "LIMIT_S",
    "REDACT",
    "SECRET_TOKEN",
    "TOOL_NAMES",
    "as_recorded",
    "bridge_answers",
    "dumped",
    "sdk_answers",
    "sdk_http_answers",
    "sdk_stdio_answers",
    "stdio_parameters",
    "without_secrets",
]


def minimal_cassette(request: Any = None, response: Any = None, **changes: Any) -> dict[str, Any]:
    """A valid cassette of one exchange (a ping unless `request`/`response` say otherwise), with top-level `changes`."""
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "upstream": {"transport": "http", "url": "http://127.0.0.1:1/mcp"},
        "exchanges": [
            {
                "seq": 1,
                "at_ms": 0,
                "elapsed_ms": 1.5,
                "transport": "http",
                "era": "handshake",
                "protocol_version": "2025-11-25",
                "request": request or {"jsonrpc": "2.0", "id": 1, "method": "ping"},
                "response": response or {"jsonrpc": "2.0", "id": 1, "result": {}},
            }
        ],
    }
    data.update(changes)
    return data
