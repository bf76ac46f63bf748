"""`mcp_testkit.scenario`: the shipped JSON Schema, JSON and Python scenarios, and errors that name the field."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit._renamed import OLD_SPELLINGS
from mcp_testkit.scenario import ScenarioError, add_rules, from_json, load_scenario, scenario_schema, validate

FAULT_KINDS = {name: kind for name, kind in faults._KINDS.items() if not name.startswith("_") and name != "Fault"}


def test_schema_lists_every_fault_with_its_fields() -> None:
    """The shipped schema has one definition per fault class, with the dataclass's fields and old spellings."""
    defs = scenario_schema()["$defs"]
    assert sorted(defs["fault"]["properties"]["type"]["enum"]) == sorted(FAULT_KINDS)
    for name, kind in FAULT_KINDS.items():
        properties = set(defs[f"fault{name}"]["properties"])
        old = OLD_SPELLINGS.get(f"{name}()", {})
        assert properties == {"type", *(spec.name for spec in dataclasses.fields(kind)), *old}, name


@pytest.mark.parametrize("name", sorted(FAULT_KINDS))
def test_rule_to_json_of_every_fault_loads_back(name: str) -> None:
    """`Rule.to_json()` of any fault is a valid scenario rule, and loads back to an equal rule."""
    fault = FAULT_KINDS[name]()
    own = fault.default_method in ("tools/call", *faults.AUTH_ENDPOINT_METHODS.values())
    rule = faults.Rule(fault, method=fault.default_method if own else "*")
    server = TestMcpServer()
    (loaded,) = add_rules(server, rule.to_json())
    assert loaded == rule


def test_json_scenario_builds_the_server_it_describes() -> None:
    """Settings become TestMcpServer arguments; tools, headers and faults are scripted on apply."""
    scenario = from_json(
        {
            "name": "s",
            "page_size": 1,
            "response_mode": "sse",
            "tools": [{"name": "a", "description": "A", "returns": "x"}],
            "required_headers": [{"name": "X-Key", "value": "k", "status": 403}],
            "faults": [{"fault": {"type": "PageError", "page": 2}}],
        }
    )
    server = TestMcpServer(**scenario.options)
    scenario.apply(server)
    assert scenario.options == {"name": "s", "page_size": 1, "response_mode": "sse"}
    assert server.tools["a"].definition["description"] == "A"
    assert server._state.required["x-key"].status == 403
    assert [rule.page for rule in server.pending_faults()] == [2]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"tools": [{"name": "a", "returns": "x", "answers": ["y"]}]}, "tools/0: "),
        ({"tools": [{"name": "a", "answers": []}]}, "tools/0/answers: "),
        (
            {"tools": [{"name": "a", "inputSchema": {"type": "array"}}]},
            "tools/0/inputSchema/type: ",
        ),
        (
            {"required_headers": [{"name": "X", "value": "v", "status": 500}]},
            "required_headers/0/status: ",
        ),
        (
            {"faults": [{"fault": {"type": "Delay", "seconds": -1}}]},
            "faults/0/fault/seconds: ",
        ),
        ({"faults": [{"fault": {"type": "Delay"}, "times": 0}]}, "faults/0/times: "),
        ({"response_mode": "xml"}, "response_mode: "),
    ],
)
def test_errors_name_the_bad_field(data: dict[str, object], message: str) -> None:
    """Each schema violation is reported with the path of the bad field."""
    with pytest.raises(ScenarioError, match=r"^scenario t\.json: ") as caught:
        from_json(data, source="t.json")
    assert message in str(caught.value)


def test_validate_one_definition_with_a_prefix() -> None:
    """`validate(data, "rule", at=...)` checks one definition and puts `at` in front of the path."""
    with pytest.raises(ScenarioError, match=r"^3/nth: 0 is less than the minimum of 1$"):
        validate({"fault": {"type": "Drop"}, "nth": 0}, "rule", at="3")


def test_python_scenario_errors_name_the_line(tmp_path: Path) -> None:
    """An exception in `scenario(server)` is reported with the file and the line that raised it."""
    path = tmp_path / "broken.py"
    path.write_text("def scenario(server):\n    server.require_header('X', 'v', status=500)\n")
    scenario = load_scenario(path)
    with pytest.raises(ScenarioError, match=r"broken.py: line 2: ValueError: require_header: status must be 401"):
        scenario.apply(TestMcpServer())


def test_a_rule_for_an_era_the_server_does_not_speak_is_refused() -> None:
    """add_rules refuses, before adding any, a fault for an era the server does not speak, naming the rule."""
    server = TestMcpServer(eras=("stateless",))
    rules = [{"fault": {"type": "Drop"}}, {"fault": {"type": "LoseSession"}}]
    with pytest.raises(ScenarioError, match=r"^1: inject: LoseSession\(\) has no meaning for a stateless"):
        add_rules(server, rules)
    assert server.pending_faults() == []


def test_a_json_rule_for_an_era_the_server_does_not_speak_is_refused_on_apply() -> None:
    """A scenario's fault rule is checked against the server's eras as `inject` checks it, naming the rule's path."""
    scenario = from_json({"faults": [{"fault": {"type": "Drop"}}, {"fault": {"type": "Drop"}, "era": "stateless"}]})
    server = TestMcpServer("h", eras=("handshake",))
    with pytest.raises(ScenarioError, match=r"scenario <json>: faults/1: inject: era='stateless', but server 'h'"):
        scenario.apply(server)
