"""An example's inputs as the source a kept failure writes: every fault class, rule, declared case and drawn example
evaluates back to inputs equal to the ones given, and a value with no such source is refused by name."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcp_testkit import faults
from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import PROPERTIES
from mcp_testkit.contract._differential import drawn_example
from mcp_testkit.contract._facts import BridgeFacts
from mcp_testkit.contract._inputs_source import UnwritableInputs, inputs_source, namespace_of

FAULT_CLASSES = sorted(
    (
        value
        for value in vars(faults).values()
        if isinstance(value, type) and issubclass(value, faults.Fault) and value is not faults.Fault
    ),
    key=lambda kind: kind.__name__,
)


def _back(inputs: dict[str, Any]) -> Any:
    source, imports = inputs_source(inputs)
    return eval(source, namespace_of(imports))


def _other_value(field: dataclasses.Field[Any], current: Any) -> list[Any]:
    """Values other than the default a field of `field`'s type can take, to vary one at a time."""
    kind = str(field.type)
    if "bool" in kind:
        return [not current]
    if kind.startswith("int"):
        return [current + 3 if isinstance(current, int) else 3]
    if kind.startswith("float"):
        return [0.25, float("inf")]
    if kind.startswith("str"):
        return ["other", 'quote " and \\ backslash']
    if "tuple[str" in kind:
        return [("a", "b")]
    return [{"k": [1, None, "x"]}, None]


@pytest.mark.parametrize("kind", FAULT_CLASSES, ids=lambda kind: kind.__name__)
def test_every_fault_class_round_trips(kind: type[faults.Fault]) -> None:
    """Each fault class, with its defaults and with each field changed in turn, alone and in a rule of every
    non-default field, is written as source that evaluates back to an equal value."""
    made = [kind()]
    for field in dataclasses.fields(kind):
        for value in _other_value(field, getattr(made[0], field.name)):
            try:
                made.append(dataclasses.replace(made[0], **{field.name: value}))
            except (ValueError, TypeError):
                continue  # a value the fault refuses: not an input any example holds
    for fault in made:
        endpoint = fault.default_method in faults.AUTH_ENDPOINT_METHODS.values()  # it hits only its own endpoint
        method = fault.default_method if endpoint else "tools/call"
        rule = faults.Rule(fault, method=method, tool="write", nth=2, times=None, page=3)
        inputs = {"fault": fault, "schedule": [rule], "pair": (fault, 1)}
        assert _back(inputs) == inputs


def test_the_faults_written_name_only_what_differs_from_the_defaults() -> None:
    """A rule reads as the call that makes it: only the fields that differ from their defaults."""
    source, imports = inputs_source({"schedule": [faults.Rule(faults.Drop(after_execution=True), tool="write")]})
    assert "Rule(fault=Drop(after_execution=True), tool='write')" in source
    assert imports == {"mcp_testkit.faults": {"Drop", "Rule"}}


def _facts() -> list[BridgeFacts]:
    return [
        BridgeFacts.of(adapter(), era)
        for adapter in (ReferenceBridgeAdapter, SdkClientAdapter)
        for era in ("handshake", "stateless")
    ]


def test_every_declared_case_round_trips() -> None:
    """Every declared case of every property, for the reference bridge and the SDK client in both eras (the SDK's
    models of P7 among them), evaluates back from its source."""
    count = 0
    for facts in _facts():
        for prop in PROPERTIES.values():
            if facts.era in prop.eras:
                for case in prop.cases(facts):
                    assert _back(case) == case, (prop.property_id, case)
                    count += 1
    assert count > 500


@pytest.mark.parametrize("property_id", list(PROPERTIES))
def test_drawn_examples_round_trip(property_id: str) -> None:
    """Examples drawn from each property's strategies, seeded, evaluate back from their source."""
    prop = PROPERTIES[property_id]
    facts = BridgeFacts.of(ReferenceBridgeAdapter(), prop.eras[0])
    for seed in range(4):
        inputs = drawn_example(prop.strategies(facts), seed)
        assert _back(inputs) == inputs


def test_a_value_without_source_is_refused_naming_its_input() -> None:
    """A value of a class outside the faults and the SDK's models cannot be written: the error names its class."""

    class Opaque:
        pass

    with pytest.raises(UnwritableInputs, match=r"Opaque, which a kept failure cannot write as source"):
        inputs_source({"thing": Opaque()})


def test_a_value_whose_source_gives_another_is_refused() -> None:
    """Source that evaluates to something unequal is never written silently: NaN equals nothing, not even itself."""
    with pytest.raises(UnwritableInputs, match=r"input 'wait' = nan has no source that evaluates back to it"):
        inputs_source({"wait": float("nan")})
