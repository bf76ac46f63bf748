"""A JSON scenario's tool that asks for input (`asks`), served by `mcp-testkit serve` and added through the admin API,
answered by the SDK client's callbacks in both eras."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_testkit.scenario import ScenarioError, from_json

from ._support import LIMIT_S, Served

pytestmark = pytest.mark.anyio

DATE = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
BOOK = {
    "name": "book",
    "inputSchema": {"type": "object", "properties": {"guest": {"type": "string"}}},
    "asks": [
        {"key": "date", "elicit": {"message": "Which date, {arguments.guest}?", "schema": DATE}},
        {"key": "note", "sample": {"messages": "Summarize the booking", "maxTokens": 50}},
        {"key": "where", "roots": {}},
    ],
    "returns": "booked {arguments.guest} on {date.content.date} ({note.content.text}) in {where.roots.0.uri}",
}


async def _elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "Which date, Ada?"  # the ask's placeholder, filled from the arguments
    return types.ElicitResult(action="accept", content={"date": "2026-08-01"})


async def _sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="quiet"), model="m")


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///rooms")])


async def _book(url: str, mode: str) -> str:
    with anyio.fail_after(LIMIT_S):
        async with Client(
            url, mode=mode, elicitation_callback=_elicit, sampling_callback=_sample, list_roots_callback=_roots
        ) as client:
            result = await client.call_tool("book", {"guest": "Ada"})
    assert not result.is_error, result
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_scenario_tool_asks_and_answers_with_the_answers(
    serve: Callable[..., Served], tmp_path: Path, mode: str
) -> None:
    """scenario file -> mcp-testkit serve -> the SDK client answers the elicitation, the sampling and the roots ->
    the result is made of the answers, in the handshake era and in 2026-07-28."""
    path = tmp_path / "booking.json"
    path.write_text(json.dumps({"tools": [BOOK]}))
    served = serve("--scenario", str(path))
    assert await _book(served.url, mode) == "booked Ada on 2026-08-01 (quiet) in file:///rooms"


async def test_the_admin_api_adds_a_tool_that_asks(serve: Callable[..., Served]) -> None:
    """POST /_testkit/tools takes the same `asks`; the tool asks as a scenario's does, and the journal has it."""
    served = serve("--admin")
    response = served.admin().post("/tools", json=BOOK)
    assert response.status_code == 201, response.text
    assert await _book(served.url, "auto") == "booked Ada on 2026-08-01 (quiet) in file:///rooms"
    refused = served.admin().post("/tools", json={**BOOK, "asks": [{"key": "date", "elicit": {"message": "?"}}]})
    assert refused.status_code == 400
    assert "asks/0/elicit" in refused.json()["message"]


async def test_a_declined_form_leaves_its_parts_empty_and_says_so(serve: Callable[..., Served], tmp_path: Path) -> None:
    """A declined elicitation has no content: its placeholders are empty, `{key.action}` says what happened."""
    tool = {"name": "book", "asks": [BOOK["asks"][0]], "returns": "{date.action}:{date.content.date}"}
    path = tmp_path / "booking.json"
    path.write_text(json.dumps({"tools": [tool]}))
    served = serve("--scenario", str(path))

    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="auto", elicitation_callback=decline) as client:
            result = await client.call_tool("book", {})
    assert result.content == [types.TextContent(type="text", text="decline:")]


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"asks": [{"key": "date", "elicit": {"message": "?", "schema": DATE}}], "returns": "{dat.content}"},
         "tools/0/returns: {dat.content} names no ask before it (the asks' keys: date; or arguments.NAME"),
        ({"asks": [{"key": "a", "elicit": {"message": "{b.content.x}?", "schema": DATE}}, {"key": "b", "roots": {}}]},
         "tools/0/asks/0/elicit: {b.content.x} names no ask before it (the asks' keys: none"),
        ({"asks": [{"key": "a", "roots": {}}, {"key": "a", "roots": {}}]},
         "tools/0/asks/1/key: key 'a' is used twice"),
        ({"asks": [{"key": "arguments", "roots": {}}]}, "tools/0/asks/0/key: 'arguments' names the tool's arguments"),
        ({"asks": [{"key": "a", "roots": {}}], "answers": ["x"]}, "tools/0/answers: a tool with asks answers once"),
        ({"asks": [{"key": "a", "sample": {"messages": "hi"}}]}, "tools/0/asks/0/sample"),
        ({"asks": [{"key": "a", "elicit": {"message": "?", "schema": {"type": "string"}}}]},
         "tools/0/asks/0/elicit/schema/type"),
    ],
)  # fmt: skip
def test_a_bad_ask_is_refused_naming_its_key(tool: dict[str, Any], message: str) -> None:
    """A mistake in `asks` or in a placeholder is a ScenarioError naming the field."""
    with pytest.raises(ScenarioError) as refused:
        from_json({"tools": [{"name": "book", **tool}]}, source="bad.json")
    assert str(refused.value).startswith("scenario bad.json: ")
    assert message in str(refused.value)
