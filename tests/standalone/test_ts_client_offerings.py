"""A client built on the TypeScript MCP SDK against `mcp-testkit serve`: resources, prompts, completion, elicitation.

The TypeScript SDK (1.32.2, the newest) speaks the handshake era only: its newest protocol version is
2025-11-25, and it has no `server/discover`, no `InputRequiredResult` rounds and no
`subscriptions/listen`. So these tests drive the handshake era; 2026-07-28 is covered by the Python
SDK's tests (tests/server/) and by the conformance suites.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from node_trees import NPM_CI_TIMEOUT_S, TS_CLIENT, installed, node

from ._support import LIMIT_S, start

SCENARIO = """
from mcp_testkit import ToolError

server_options = {"name": "ts-offerings", "get_stream": True}

PNG = bytes.fromhex("89504e470d0a1a0a")


def scenario(server):
    server.resource("file:///notes.txt", text="hello", mime_type="text/plain", description="Notes")
    server.resource("file:///logo.png", blob=PNG, mime_type="image/png")
    server.resource_template("db://rows/{id}", reads=lambda params: f"row {params['id']}", mime_type="text/plain")
    server.prompt(
        "summarize",
        arguments=[{"name": "topic", "required": True}, {"name": "style"}],
        messages=lambda args: [
            {"role": "user", "content": f"Summarize {args['topic']} ({args.get('style', 'any')})"},
            {"role": "assistant", "content": {"type": "resource", "resource": {
                "uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello"}}},
        ],
    )
    server.complete(prompt="summarize", argument="topic", values=["mcp", "pytest", "python", "rust"])
    server.complete(resource_template="db://rows/{id}", argument="id", values=["41", "42", "7"])

    @server.tool("book", input_schema={"type": "object", "properties": {"what": {"type": "string"}}})
    async def book(arguments, ctx):
        answer = await ctx.elicit(
            f"Which date for {arguments['what']}?",
            {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]},
        )
        if answer.get("action") != "accept":
            raise ToolError(f"not booked: {answer.get('action')}")
        return f"booked {arguments['what']} on {answer['content']['date']}"
"""

PNG = bytes.fromhex("89504e470d0a1a0a")

# The first test may wait for the `npm ci` of tests/standalone/ts_client.
pytestmark = pytest.mark.timeout(NPM_CI_TIMEOUT_S + LIMIT_S)

Run = tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]


@pytest.fixture(scope="module")
def ts_client() -> tuple[str, Path]:
    """`node`, and the client's folder with its locked TypeScript SDK installed (skips without Node.js)."""
    return node("the TypeScript SDK client"), installed(TS_CLIENT)


@pytest.fixture(scope="module")
def ts_run(ts_client: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """Runs offerings.mjs once against the scenario: what it printed, and the journal and inputs the admin API shows."""
    node_path, client_dir = ts_client
    folder = tmp_path_factory.mktemp("ts-offerings")
    scenario = folder / "offerings.py"
    scenario.write_text(SCENARIO)
    served = start(folder, "--scenario", str(scenario), "--admin")
    try:
        ran = subprocess.run(
            [node_path, str(client_dir / "offerings.mjs"), served.url, served.admin_url, served.token],
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            cwd=client_dir,
        )
        assert ran.returncode == 0, ran.stderr
        seen: dict[str, Any] = json.loads(ran.stdout.splitlines()[-1])
        assert "fatal" not in seen, seen["fatal"]
        assert served.admin().get("/health").json()["status"] == "ok"
        admin = served.admin()
        yield seen, admin.get("/journal").json()["records"], admin.get("/inputs").json()["inputs"]
    finally:
        served.stop()
        assert served.process.returncode is not None


def _requests(journal: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    return [r for r in journal if r["rpc_method"] == method]


def _result(record: dict[str, Any]) -> Any:
    """The JSON-RPC result of a journaled request, whether it was answered as JSON or on an SSE stream."""
    response = record["response"]
    if isinstance(response, list):  # SSE: the messages sent on the request's stream, its answer last
        response = response[-1]
    return response["result"]


def test_ts_client_lists_and_reads_resources_and_templates(ts_run: Run) -> None:
    """The TS client lists both resources and the template, and reads a text, a blob and a template's URI."""
    seen, journal, _ = ts_run
    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    assert [(r["uri"], r.get("mimeType")) for r in seen["resources"]] == [
        ("file:///notes.txt", "text/plain"),
        ("file:///logo.png", "image/png"),
    ]
    assert [t["uriTemplate"] for t in seen["templates"]] == ["db://rows/{id}"]
    assert seen["text"] == [{"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "hello"}]
    (blob,) = seen["blob"]
    assert base64.b64decode(blob["blob"]) == PNG
    assert seen["row"][0]["text"] == "row 42"
    reads = [(r["message"]["params"]["uri"], r["status"]) for r in _requests(journal, "resources/read")]
    assert reads[:4] == [
        ("file:///notes.txt", 200),
        ("file:///logo.png", 200),
        ("db://rows/42", 200),
        ("file:///missing.txt", 200),
    ]
    assert len(_requests(journal, "resources/list")) == len(_requests(journal, "resources/templates/list")) == 1


def test_ts_client_gets_the_handshake_not_found_code_for_an_unknown_uri(ts_run: Run) -> None:
    """Reading an unknown URI raises in the TS client with -32002, the handshake era's code, as journaled."""
    seen, journal, _ = ts_run
    assert seen["errors"]["unknownUri"]["code"] == -32002
    reads = _requests(journal, "resources/read")
    (missing,) = [r for r in reads if r["message"]["params"]["uri"] == "file:///missing.txt"]
    assert missing["response"]["error"]["code"] == -32002


def test_ts_client_hears_of_an_update_the_admin_api_makes(ts_run: Run) -> None:
    """Subscribed, the TS client gets notifications/resources/updated on its GET stream and reads the new text."""
    seen, journal, _ = ts_run
    assert seen["adminStatus"] == 200  # a known URI with new content: an update, not a new resource
    assert seen["updated"] == ["file:///notes.txt"]
    assert seen["changed"][0]["text"] == "changed"
    (subscribe,) = _requests(journal, "resources/subscribe")
    (unsubscribe,) = _requests(journal, "resources/unsubscribe")
    assert subscribe["message"]["params"] == unsubscribe["message"]["params"] == {"uri": "file:///notes.txt"}
    streams = [r for r in journal if r["http_method"] == "GET"]
    assert streams, "the TS client opened no GET stream"
    assert streams[0]["session_id"] == subscribe["session_id"]
    reads = [r["message"]["params"]["uri"] for r in _requests(journal, "resources/read")]
    assert reads.count("file:///notes.txt") == 2


def test_ts_client_lists_and_gets_prompts_with_arguments(ts_run: Run) -> None:
    """The TS client lists the prompt with its arguments and gets it with them; the content blocks survive."""
    seen, journal, _ = ts_run
    (listed,) = seen["prompts"]
    assert listed["name"] == "summarize"
    assert listed["arguments"] == [{"name": "topic", "required": True}, {"name": "style"}]
    first, second = seen["prompt"]["messages"]
    assert first == {"role": "user", "content": {"type": "text", "text": "Summarize mcp (short)"}}
    assert second["content"]["type"] == "resource"
    assert second["content"]["resource"]["uri"] == "file:///notes.txt"
    got = _requests(journal, "prompts/get")
    assert [r["message"]["params"].get("arguments") for r in got] == [{"topic": "mcp", "style": "short"}, {}]
    assert _result(got[0])["messages"][0]["content"]["text"] == "Summarize mcp (short)"


def test_ts_client_is_refused_a_prompt_without_its_required_argument(ts_run: Run) -> None:
    """A prompts/get without the required `topic` raises -32602 in the TS client and is journaled as that error."""
    seen, journal, _ = ts_run
    assert seen["errors"]["missingArgument"]["code"] == -32602
    refused = _requests(journal, "prompts/get")[-1]
    assert refused["response"]["error"]["code"] == -32602
    assert "topic" in refused["response"]["error"]["message"]


def test_ts_client_completes_a_prompt_argument_and_a_template_parameter(ts_run: Run) -> None:
    """completion/complete offers the values that start with what the TS client typed, for a prompt and a template."""
    seen, journal, _ = ts_run
    assert seen["completion"]["values"] == ["pytest", "python"]
    assert seen["rowCompletion"]["values"] == ["41", "42"]
    refs = [r["message"]["params"]["ref"] for r in _requests(journal, "completion/complete")]
    assert refs == [{"type": "ref/prompt", "name": "summarize"}, {"type": "ref/resource", "uri": "db://rows/{id}"}]


def test_ts_client_answers_an_elicitation_through_its_request_handler(ts_run: Run) -> None:
    """The tool's elicitation/create reaches the TS client's ElicitRequestSchema handler; its answer completes the call.

    The admin API's `inputs` shows what the tool asked and the answer the client POSTed back (its own
    journal record, on the call's session), and the tool ran once.
    """
    seen, journal, inputs = ts_run
    (asked,) = seen["elicited"]
    assert asked["message"] == "Which date for a table?"
    assert asked["requestedSchema"]["required"] == ["date"]
    assert seen["booked"] == {"text": "booked a table on 2026-12-24", "isError": False}
    (call,) = _requests(journal, "tools/call")
    assert call["executed"] is True
    (exchange,) = inputs
    assert (exchange["name"], exchange["kind"], exchange["era"]) == ("book", "elicit", "handshake")
    assert exchange["params"]["message"] == "Which date for a table?"
    assert exchange["answer"] == {"action": "accept", "content": {"date": "2026-12-24"}}
    assert exchange["answered"] is True
    assert exchange["error"] is None
    (answer,) = [r for r in journal if r["seq"] == exchange["answered_seq"]]
    assert answer["rpc_method"] is None  # a JSON-RPC response, not a request
    assert answer["message"]["result"] == exchange["answer"]
    assert (answer["status"], answer["session_id"]) == (202, call["session_id"])
