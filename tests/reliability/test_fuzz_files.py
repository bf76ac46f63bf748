"""Odd files and lines never crash a reader: cassettes and driver lines, mutated at random (issue 22).

Each mutated cassette is read and, when it loads, made into a replay script: it loads or is a one-line
`CassetteError`, never another exception. Each mutated driver line is decoded and checked as the driver
adapter does: a value and its problem, or a `JsonError`. Raise the counts with MCP_TESTKIT_FUZZ_FILES
(default: 300 of each).
"""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_testkit._json import JsonError, loads
from mcp_testkit.adapters._driver import _problem
from mcp_testkit.cassettes import Cassette, CassetteError
from mcp_testkit.cassettes._replay import ReplayScript

FILES = int(os.environ.get("MCP_TESTKIT_FUZZ_FILES", "300"))
_SETTINGS = settings(max_examples=FILES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
_HOLE = "\u0000HOLE\u0000"


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

_ODD_TOKENS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1" * 5000, "tru", '"\\ud800"'])
_ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from([{}, [], {"p": 2}, ["p2"], "\x1b[2J", "", 10**18]),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def _mutated_text(draw: st.DrawFn, seed: Any) -> str:
    path = draw(st.sampled_from(_paths(seed)))
    kind = draw(st.sampled_from(["value", "token", "deep", "cut"]))
    if kind == "value":
        return json.dumps(_replaced(seed, path, draw(_ODD_VALUES)))
    text = json.dumps(_replaced(seed, path, _HOLE))
    if kind == "token":
        return text.replace(json.dumps(_HOLE), draw(_ODD_TOKENS))
    if kind == "deep":
        depth = draw(st.integers(min_value=100, max_value=20_000))
        opener = draw(st.sampled_from(["[", '{"k": ']))
        closer = "]" if opener == "[" else "}"
        return text.replace(json.dumps(_HOLE), opener * depth + "0" + closer * depth)
    return text[: draw(st.integers(min_value=0, max_value=len(text)))]


@_SETTINGS
@given(text=_mutated_text(SEED))
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
@given(text=st.one_of(_mutated_text(HELLO), _mutated_text(ANSWER)), part=st.sampled_from(["hello", "answer"]))
def test_a_mutated_driver_line_is_decoded_or_refused(text: str, part: str) -> None:
    """A mutated driver line is a value the schema judges, or a JsonError: never a RecursionError or a crash."""
    try:
        value = loads(text.encode("utf-8", "surrogatepass") + b"\n", what="line")
    except JsonError:
        return
    problem = _problem(part, value)
    assert problem is None or isinstance(problem, str)
