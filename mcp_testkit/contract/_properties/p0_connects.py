"""P0: the bridge connects to any valid server, and loads its whole catalogue of legal but unusual tools.

Every other property's examples start with a connect and a listing; a bridge that cannot do that on a legal
catalogue has no verdict there, only this failure. When P0 fails in an era, every other property of the era is
`blocked` (`check_property`); a hang of P0 blocks nothing (it says nothing of the promise)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness
    from mcp_testkit.server import TestMcpServer

__all__ = ["ORDINARY", "PROPERTY", "SHAPES", "add_tool"]

ORDINARY = "ordinary"
"""The shape every other is a variation of: a description, one string parameter, a read-only hint."""
_QUERY = {"q": {"type": "string", "description": "what to look up"}}
_POINT = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]}
SHAPES: dict[str, dict[str, Any]] = {
    ORDINARY: {},
    "schema without properties": {"input_schema": {"type": "object"}},
    "empty properties": {"input_schema": {"type": "object", "properties": {}}},
    "additionalProperties false": {
        "input_schema": {"type": "object", "properties": _QUERY, "required": ["q"], "additionalProperties": False}
    },
    "additionalProperties schema, no properties": {
        "input_schema": {"type": "object", "additionalProperties": {"type": "string"}}
    },
    "$defs and $ref": {
        "input_schema": {
            "type": "object",
            "$defs": {"point": _POINT},
            "properties": {
                "at": {"$ref": "#/$defs/point"},
                "path": {"type": "array", "items": {"$ref": "#/$defs/point"}},
            },
            "required": ["at"],
        }
    },
    "$schema 2020-12": {
        "input_schema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": _QUERY,
        }
    },
    "empty description": {"description": ""},
    "no description": {"description": None},
    "unicode description": {"description": "Cherche un outil \u2014 \u5de5\u5177 \U0001f527\nsecond line\ttabbed"},
    "title": {"title": "A Tool With A Title"},
    "no annotations": {"annotations": None},
    "empty annotations": {"annotations": {}},
    "odd annotations": {
        "annotations": {"readOnlyHint": True, "destructiveHint": True, "title": "", "x-vendor": {"weight": 3}}
    },
    "output schema": {"output_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
}
"""The legal but unusual tool definitions, by name: each varies one thing of the ordinary tool."""

_NAMES = ("T", "9lives", "_under", "db.query-v2_x", "a.b.c", "UPPER.lower", "n" * 64, "x" * 128)
"""Legal names (1-128 of A-Z, a-z, 0-9, `_`, `-`, `.`) that are easy to get wrong: short, digit first, dotted, long."""
_NAME = r"[A-Za-z0-9_.\-]{1,128}"


def add_tool(server: TestMcpServer, shape: str, name: str) -> None:
    """Add the tool of `shape` named `name` to `server`: the ordinary tool with that one thing changed."""
    options: dict[str, Any] = {
        "description": "an ordinary tool",
        "input_schema": {"type": "object", "properties": _QUERY},
        "annotations": {"readOnlyHint": True},
        "returns": "ok",
    }
    options.update(SHAPES[shape])
    tool = server.tool(name, **options)
    if options.get("annotations") == {}:  # built without the key (no hint given): the empty object is the shape
        tool.definition["annotations"] = {}


def _slug(shape: str) -> str:
    """A shape's tool name in its declared case: `$defs and $ref` -> `defs_and_ref`."""
    return re.sub(r"[^0-9A-Za-z]+", "_", shape).strip("_")


def _cases(facts: BridgeFacts) -> list[Inputs]:
    alone = [[(shape, _slug(shape))] for shape in SHAPES if shape != ORDINARY]
    names = [[(ORDINARY, name)] for name in _NAMES]
    together = [tool for case in alone + names for tool in case]
    return [{"tools": case} for case in [*alone, *names, together]]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    name = st.sampled_from(_NAMES) | st.from_regex(_NAME, fullmatch=True)
    tool = st.tuples(st.sampled_from(list(SHAPES)), name)
    return {"tools": st.lists(tool, min_size=1, max_size=8, unique_by=lambda pair: pair[1])}


def _labels(inputs: Inputs) -> list[str]:
    tools = inputs["tools"]
    shapes = sorted({shape for shape, _ in tools if shape != ORDINARY})
    long_name = ["name over 64 characters"] if any(len(name) > 64 for _, name in tools) else []
    return [*shapes, *long_name] or [ORDINARY]


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    tools = inputs["tools"]
    for shape, name in tools:
        add_tool(h.server, shape, name)
    outcome = await adapter.connect(h.url, {})
    names = list(h.server.tools)  # the example's tools, and a recorded catalogue's on a replay
    shown: Callable[[list[str]], list[str]] = lambda some: some if len(some) <= 12 else [*some[:12], "..."]  # noqa: E731
    facts_ = {"catalogue": [shape for shape, _ in tools], "outcome": outcome}
    if outcome.kind != "ok":
        raise h.fail(
            f"the bridge could not connect to a valid server: {outcome} (no fault placed; every tool listed is legal)",
            **facts_,
        )
    loaded = await adapter.list_tools()
    if sorted(loaded) != sorted(names):
        missing = sorted(set(names) - set(loaded))
        extra = sorted({n for n in loaded if loaded.count(n) > 1 or n not in names})
        raise h.fail(
            f"the bridge connected but loaded a wrong tool set from a legal catalogue (missing {shown(missing)}, "
            f"extra {shown(extra)})",
            **facts_,
            loaded=len(loaded),
        )


PROPERTY = Property(
    "P0",
    "Connects to any valid server",
    "connects_to_any_valid_server",
    "each legal but unusual tool shape alone (a schema without `properties`, `additionalProperties`, `$defs` and "
    "`$ref`, `$schema`, an output schema, an empty, missing or multi-line description, a title, annotations absent, "
    "empty or odd), the names easy to get wrong (digit first, dotted, 64 and 128 characters), then all together; "
    "drawn catalogues of them",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee=(
        "Connects to any valid server: the bridge connects to a healthy server whose tools are legal but unusual, "
        "and loads every one of them. When P0 fails in an era, every other property of that era is "
        "`blocked`: no verdict, never a pass."
    ),
    breaks=(
        'reading `inputSchema["properties"]` of a schema that has none (`{"type": "object"}`, legal and '
        "common: a tool without parameters); refusing or dropping a tool with `additionalProperties`, `$defs`, "
        "`$ref`, `$schema` or an output schema; requiring a description; rejecting annotations it does not know; "
        "cutting or refusing a name longer than 64 characters"
    ),
)
