"""Every fault class the server has is in the contract where it applies: a declared case of some property places
it, in some era, or it is listed below with the reason it is in none. A new fault class (`faults/`) fails the
first test until a property declares it or it is listed here."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_testkit import faults
from mcp_testkit._wire.eras import ERAS
from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import PROPERTIES, BridgeFacts

EXEMPT: dict[str, str] = {
    "MalformedLine": "stdio only (`mcp-testkit serve --stdio`); the contract runs a bridge over HTTP",
    "Exit": "stdio only (`mcp-testkit serve --stdio`); the contract runs a bridge over HTTP",
    "Crash": "stdio only (`mcp-testkit serve --stdio`); the contract runs a bridge over HTTP",
    "StopReading": "stdio only (`mcp-testkit serve --stdio`); the contract runs a bridge over HTTP",
    "StdoutNoise": "stdio only (`mcp-testkit serve --stdio`); the contract runs a bridge over HTTP",
    "ExpireToken": "P15 (refresh once), which will place it, is not built yet (issue 38 item 3)",
    "RevokeToken": "P15 (refresh once), which will place it, is not built yet (issue 38 item 3)",
    "InsufficientScope": "P17 (step-up), which will place it, is not built yet (issue 38 item 3)",
    "RejectRefresh": "P15 (refresh once), which will place it, is not built yet (issue 38 item 3)",
    "AuthServerError": "P15 (refresh once), which will place it, is not built yet (issue 38 item 3)",
    "SlowAuthServer": "P15 (refresh once), which will place it, is not built yet (issue 38 item 3)",
    "WrongIssuer": "P16 (tokens stay with their resource), which will place it, is not built yet (issue 38 item 3)",
    "HugeResult": "P12 places it, but its cases name only the size and framing (`size`, `sse`); its check builds it",
}
"""Fault classes in no property, each with its reason. A class listed here that a property declares fails the
second test: the list stays true."""


def _fault_classes() -> dict[str, type[faults.Fault]]:
    """Every public fault class: the names of `faults.__all__` that are subclasses of `Fault`, but `Fault`."""
    found = {}
    for name in faults.__all__:
        value = getattr(faults, name)
        if isinstance(value, type) and issubclass(value, faults.Fault) and value is not faults.Fault:
            found[name] = value
    return found


def _in(value: Any) -> set[str]:
    """The fault class names in a declared case's inputs, however nested (rules, lists, tuples, dicts)."""
    if isinstance(value, faults.Rule):
        return {type(value.fault).__name__}
    if isinstance(value, faults.Fault):
        return {type(value).__name__}
    if isinstance(value, (list, tuple)):
        return set().union(*(_in(item) for item in value)) if value else set()
    if isinstance(value, dict):
        return _in(list(value.values()))
    return set()


def _declared() -> dict[str, set[str]]:
    """Per fault class name, the `property@era` whose declared cases place it, for the reference bridge's facts and
    the SDK client's (retry 0, no page limit)."""
    where: dict[str, set[str]] = {}
    for factory in (ReferenceBridgeAdapter, SdkClientAdapter):
        for era in ERAS:
            facts = BridgeFacts.of(factory(), era)
            for pid, prop in PROPERTIES.items():
                if era not in prop.eras:
                    continue
                for case in prop.cases(facts):
                    for name in _in(case):
                        where.setdefault(name, set()).add(f"{pid}@{era}")
    return where


def test_every_fault_class_is_in_a_property_or_listed_with_its_reason() -> None:
    """Each fault class is placed by a declared case of some property in some era, or exempt with a reason."""
    declared = _declared()
    missing = sorted(name for name in _fault_classes() if name not in declared and name not in EXEMPT)
    assert not missing, (
        f"fault classes in no property's declared cases: {missing}; put each in the properties where it means "
        "something (contract/_properties/_fault_sets.py), or list it in EXEMPT with its reason"
    )


def test_no_exempt_fault_class_is_in_a_property() -> None:
    """The exemption list stays true: a class a property declares, or one the server no longer has, is not in it."""
    declared = _declared()
    classes = _fault_classes()
    assert not [name for name in EXEMPT if name in declared or name not in classes]
    assert all(reason.strip() for reason in EXEMPT.values())


@pytest.mark.parametrize(
    ("name", "properties"),
    [
        ("BreakStream", {"P2@handshake", "P3@handshake", "P6@handshake"}),
        ("ExpireSession", {"P5@handshake"}),
        ("DiscoverError", {"P6@stateless"}),
        ("SlowPage", {"P1@handshake", "P1@stateless", "P6@handshake", "P6@stateless"}),
        ("ListChanged", {"P1@handshake", "P1@stateless", "P6@handshake", "P6@stateless"}),
        ("CatalogueChange", {"P1@handshake", "P1@stateless", "P6@handshake", "P6@stateless"}),
    ],
)
def test_the_faults_once_in_no_property_are_where_they_mean_something(name: str, properties: set[str]) -> None:
    """The classes issue 21 found in no property are declared where they mean something: the stream cut (handshake
    era: the stateless era has no event ids, so no P5s) in P2, P3 and P6; an expiring session in P5; a refused
    probe at the stateless era's connect; the listing's slow page, change notice and change between pages in P1 and
    P6."""
    assert properties <= _declared()[name]
