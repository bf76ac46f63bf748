"""Odd files and lines never crash a reader: cassettes, scenario files and driver lines, mutated at random (issue 22).

Each mutated cassette is read and, when it loads, made into a replay script: it loads or is a one-line
`CassetteError`, never another exception. Each mutated scenario file loads and applies to a server, or is a
one-line `ScenarioError` naming the file. Each mutated driver line is decoded and checked as the driver
adapter does: a value and its problem, or a `JsonError`. Raise the counts with MCP_TESTKIT_FUZZ_FILES
(default: 300 of each).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_testkit import TestMcpServer
from mcp_testkit._wire.strict_json import JsonError, loads
from mcp_testkit.adapters._driver import _problem
from mcp_testkit.cassettes import Cassette, CassetteError
from mcp_testkit.cassettes._replay import ReplayScript
from mcp_testkit.scenario import ScenarioError, load_scenario

from ._mutation import mutated_text

FILES = int(os.environ.get("MCP_TESTKIT_FUZZ_FILES", "300"))
_SETTINGS = settings(max_examples=FILES, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _exchange(seq: int, request: Any, response: Any) -> dict[str, Any]:
    return {"seq": seq, "at_ms": seq, "elapsed_ms": 1.0, "transport": "http", "era": "handshake",
            "protocol_version": "2025-11-25", "request": request, "response": response}  # fmt: skip


_INFO = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
_PAGE = {"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "p2"}
SEED: dict[str, Any] = {
    "format": "mcp-testkit cassette",
    "version": 1,
    "upstream": {"transport": "http", "url": "http://127.0.0.1:1/mcp"},
    "exchanges": [
        _exchange(
            1,
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
            {"jsonrpc": "2.0", "id": 0, "result": _INFO},
        ),
        _exchange(2, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, {"jsonrpc": "2.0", "id": 1, "result": _PAGE}),
        _exchange(
            3,
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "p2"}},
            {"jsonrpc": "2.0", "id": 2, "result": {"tools": [{"name": "b", "inputSchema": {"type": "object"}}]}},
        ),
        _exchange(
            4,
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "a", "arguments": {"x": [1]}}},
            {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "ok"}]}},
        ),
    ],
}
HELLO: dict[str, Any] = {"protocol": "mcp-testkit-driver", "version": 1, "bridge": "b", "bridge_version": "1",
                         "page_limit": None, "retry": 0, "timeout_s": 1.0, "sessions": "per_call"}  # fmt: skip
ANSWER: dict[str, Any] = {"id": 1, "kind": "ok", "text": "x", "message": ""}
SCENARIO: dict[str, Any] = {
    "page_size": 2,
    "tools": [
        {"name": "lookup", "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 9}}},
         "annotations": {"readOnlyHint": True}, "answers": ["found", {"structured": {"n": 1}}, {"error": "busy"}]},
        {"name": "write", "returns": {"content": [{"type": "text", "text": "done"}]}},
    ],
    "required_headers": [{"name": "Authorization", "value": "Bearer t", "status": 401}],
    "faults": [{"fault": {"type": "ErrorResult", "text": "busy"}, "tool": "lookup", "times": 2}],
}  # fmt: skip

@_SETTINGS
@given(text=mutated_text(SEED))
def test_a_mutated_cassette_loads_or_is_one_line_naming_it(text: str) -> None:
    """A mutated cassette loads (and makes a replay script) or is a one-line CassetteError naming the file."""
    try:
        cassette = Cassette.loads(text, source="fuzzed.json")
    except CassetteError as exc:
        message = str(exc)
    else:
        ReplayScript.from_cassette(cassette)
        return
    assert message.startswith("cassette fuzzed.json: ")
    assert "\n" not in message


@_SETTINGS
@given(text=mutated_text(SCENARIO))
def test_a_mutated_scenario_file_loads_and_applies_or_is_one_line_naming_it(text: str, tmp_path_factory: Any) -> None:
    """A mutated scenario file loads and scripts a server, or is a one-line ScenarioError naming the file."""
    path = tmp_path_factory.mktemp("scenario") / "fuzzed.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        load_scenario(path).apply(TestMcpServer())
    except ScenarioError as exc:
        message = str(exc)
    else:
        return
    assert message.startswith(f"scenario {path}: ")
    assert "\n" not in message


@_SETTINGS
@given(text=st.one_of(mutated_text(HELLO), mutated_text(ANSWER)), part=st.sampled_from(["hello", "answer"]))
def test_a_mutated_driver_line_is_decoded_or_refused(text: str, part: str) -> None:
    """A mutated driver line is a value the schema judges, or a JsonError: never a RecursionError or a crash."""
    try:
        value = loads(text.encode("utf-8", "surrogatepass") + b"\n", what="line")
    except JsonError:
        return
    problem = _problem(part, value)
    assert problem is None or isinstance(problem, str)
