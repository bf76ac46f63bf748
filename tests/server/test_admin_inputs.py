"""The admin API's `GET /_testkit/inputs`: what tools asked the client for and got (`journal.inputs`), as JSON a test
in any language reads, in both eras, over a real socket with the SDK client answering."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from mcp_testkit import TestMcpServer, ToolContext
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import LIMIT_S, sdk_transport, serving

pytestmark = pytest.mark.anyio

TOKEN = "admin-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}
DATE = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}


def _server() -> TestMcpServer:
    server = TestMcpServer("inputs")

    @server.tool("book")
    async def book(arguments: dict[str, Any], ctx: ToolContext) -> str:
        answer = await ctx.elicit("Which date?", DATE)
        return f"booked {answer['content']['date']}"

    server.tool("echo", returns="echoed")
    server.asgi_app = AdminApp(server, TOKEN)  # type: ignore[assignment]
    return server


async def _elicited(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"date": "2026-08-01"})


@pytest.mark.parametrize(("mode", "era"), [("legacy", "handshake"), ("auto", "stateless")])
async def test_inputs_lists_what_a_tool_asked_and_the_answer_it_got(mode: str, era: str) -> None:
    """After the SDK client answered an elicitation, /inputs shows it (kind, params, answer, the records that asked
    and answered), filtered by tool and kind; an unknown query parameter is a 400 naming the ones it takes."""
    server = _server()
    async with serving(server, "socket") as wire:
        with anyio.fail_after(LIMIT_S):
            async with Client(sdk_transport(server, "socket"), mode=mode, elicitation_callback=_elicited) as client:
                booked = await client.call_tool("book", {})
                await client.call_tool("echo", {})
            every = (await wire.client.get(f"{PREFIX}/inputs", headers=BEARER)).json()
            of_book = (await wire.client.get(f"{PREFIX}/inputs", params={"tool": "book"}, headers=BEARER)).json()
            samples = (await wire.client.get(f"{PREFIX}/inputs", params={"kind": "sample"}, headers=BEARER)).json()
            of_echo = (await wire.client.get(f"{PREFIX}/inputs", params={"tool": "echo"}, headers=BEARER)).json()
            bad = await wire.client.get(f"{PREFIX}/inputs", params={"name": "book"}, headers=BEARER)
    assert booked.content[0].text == "booked 2026-08-01"  # type: ignore[union-attr]
    assert every == of_book
    (exchange,) = every["inputs"]
    assert every["count"] == 1
    assert (exchange["name"], exchange["kind"], exchange["method"], exchange["era"]) == (
        "book",
        "elicit",
        "elicitation/create",
        era,
    )
    assert exchange["params"]["message"] == "Which date?"
    assert exchange["answer"] == {"action": "accept", "content": {"date": "2026-08-01"}}
    assert (exchange["answered"], exchange["error"]) == (True, None)
    assert exchange["answered_seq"] > exchange["seq"]
    assert [r.seq for r in server.journal if r.seq == exchange["answered_seq"]] == [exchange["answered_seq"]]
    assert samples == of_echo == {"count": 0, "inputs": []}
    assert bad.status_code == 400
    assert "tool, kind" in bad.text
