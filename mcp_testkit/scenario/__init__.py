"""Scenario files for `mcp-testkit serve --scenario FILE`: a Python file or a JSON document.

A Python scenario defines `def scenario(server): ...` and has the whole Python API; it may also
define `server_options`, a dict of `TestMcpServer` keyword arguments. A JSON scenario holds the
server's settings, tools with static answers, resources, resource templates, prompts, completion values,
required headers and fault rules (in the form `Rule.to_json()` writes), and is checked against
`scenario.schema.json`, shipped in this package; an error names the bad field by its path, e.g.
`tools/0/annotations/readOnlyHint`.

Its seams: the document and its schema (`_document.py`), tools (`_tools.py`, asking ones in `_asks.py`), fault
rules (`_rules.py`), what it offers besides tools (`_offerings.py`) and Python scenarios (`_python.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit._renamed import milliseconds, renamed
from mcp_testkit.scenario._document import MAX_DEPTH, ScenarioError, decode, scenario_schema, validate
from mcp_testkit.scenario._offerings import OFFERING_KINDS, add_offering, offerings_of
from mcp_testkit.scenario._python import load_python, origin
from mcp_testkit.scenario._rules import add_rules, check_transport, parse_rules, rule_of, transport_problem
from mcp_testkit.scenario._tools import add_tool, built_tool

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = [
    "OFFERING_KINDS",
    "Scenario",
    "ScenarioError",
    "add_offering",
    "add_rules",
    "add_tool",
    "check_transport",
    "decode",
    "from_json",
    "load_scenario",
    "parse_rules",
    "scenario_schema",
    "transport_problem",
    "validate",
]

_OPTIONS = ("name", "preset", "page_size", "response_mode", "get_stream", "eras", "resumable", "retry_s", "scopes")
"""Top-level keys of a JSON scenario that are `TestMcpServer` keyword arguments."""


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: keyword arguments for `TestMcpServer`, and what to do to it once built."""

    source: str
    options: Mapping[str, Any] = field(default_factory=dict)
    setup: Callable[[TestMcpServer], None] = field(default=lambda server: None, repr=False)

    def apply(self, server: TestMcpServer) -> None:
        """Script `server` as the scenario says; ScenarioError naming the file if that fails."""
        try:
            self.setup(server)
        except ScenarioError:
            raise
        except Exception as exc:
            where = origin(exc, self.source)
            raise ScenarioError(f"scenario {self.source}: {where}{type(exc).__name__}: {exc}") from exc


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file: `.py` (defines `scenario(server)`) or `.json`; ScenarioError naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise ScenarioError(f"scenario {path}: no such file")
    if path.suffix == ".py":
        options, setup = load_python(path)
        return Scenario(str(path), options, setup)
    if path.suffix == ".json":
        return from_json(decode(path.read_bytes(), str(path)), source=str(path))
    raise ScenarioError(f"scenario {path}: a scenario is a .py file defining scenario(server) or a .json file")


def from_json(data: Any, *, source: str = "<json>") -> Scenario:
    """The scenario a JSON document describes, checked against the schema and built eagerly.

    Its tools are built (and their schemas checked) here, so that applying it only puts them in the catalogue,
    all at once: a large scenario costs its time where it is read, not where the server serves.
    """
    from mcp_testkit._wire.strict_json import unfit

    problem = unfit(data, MAX_DEPTH)  # a value built in Python has not been through the decoder's bounds
    if problem:
        raise ScenarioError(f"scenario {source}: {problem}")
    try:
        validate(data)
        tools = [built_tool(tool, f"tools/{i}") for i, tool in enumerate(data.get("tools", ()))]
        rules = [(f"faults/{i}", rule_of(rule, f"faults/{i}")) for i, rule in enumerate(data.get("faults", ()))]
        offerings = offerings_of(data)
    except ScenarioError as exc:
        raise ScenarioError(f"scenario {source}: {exc}") from None
    headers = [(h["name"], h["value"], h.get("status", 401)) for h in data.get("required_headers", ())]

    def setup(server: TestMcpServer) -> None:
        if tools:  # one swap: a listing sees all of them or none, and one list_changed is sent
            server.add_tools(dataclasses.replace(tool, answers=list(tool.answers), _served=0) for tool in tools)
        for name, value, status in headers:
            server.require_header(name, value, status=status)
        for at, rule in rules:
            try:
                server.add_rule(rule)  # refused when the server's eras can never meet it, as inject refuses it
            except ValueError as exc:
                raise ScenarioError(f"scenario {source}: {at}: {exc}") from None
        for offer in offerings:
            offer(server)

    options = {key: data[key] for key in _OPTIONS if key in data}
    if data.get("auth"):
        options["auth"] = data["auth"]  # each server built from the scenario gets an authorization server of its own
    if "retry_ms" in data:
        if "retry_s" in data:
            raise ScenarioError(f"scenario {source}: give retry_s only (retry_ms is its old spelling, in milliseconds)")
        where = f"scenario {source}"
        options["retry_s"] = renamed(dict(data), "retry_ms", "retry_s", None, where=where, convert=milliseconds)
    return Scenario(source, options, setup)
