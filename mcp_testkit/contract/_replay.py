"""One example of a property run again, alone, as the contract ran it: `replay_example` (what a kept failure's test
file calls) raises the property's violation when the bridge still breaks it, and `replayed` (what `mcp-testkit diff`
compares) says how it ended and keeps the journal. Both run the example through `PropertyRun.example`, the path
every declared case and drawn example takes."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import ERAS
from mcp_testkit.contract._errors import ContractError, ContractViolation
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._harness import ContractHarness
from mcp_testkit.contract._properties import PROPERTIES
from mcp_testkit.contract._property_run import PropertyRun, Stop

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.journal import Record

__all__ = ["Replayed", "adapter_factory", "replay_example", "replayed"]


@dataclass(frozen=True)
class Replayed:
    """How one example ended for one bridge: "held", "failed", "hung" or "error", the message of the last three,
    and the requests the server journaled."""

    status: str
    message: str
    journal: tuple[Record, ...]


def adapter_factory(adapter: str | AdapterFactory, relative_to: str | os.PathLike[str] | None = None) -> Any:
    """The factory `adapter` names: a factory as is, or a spec as `mcp-testkit check` takes it (`module:Factory`,
    `path/to/file.py:Factory`); a file's path relative to `relative_to` (a folder, or a file whose folder it is)."""
    if not isinstance(adapter, str):
        return adapter
    from mcp_testkit.contract._cli._adapter_specs import BadSpec, load_factory

    module, _, attribute = adapter.rpartition(":")
    if relative_to is not None and (module.endswith(".py") or "/" in module) and not Path(module).is_absolute():
        base = Path(relative_to)
        base = base.parent if base.is_file() else base
        adapter = f"{os.path.normpath(base / module)}:{attribute}"
    try:
        return load_factory(adapter)
    except BadSpec as exc:
        raise ValueError(f"replay_example: {exc}") from None


def replayed(
    adapter: str | AdapterFactory,
    property_id: str,
    era: str,
    inputs: Mapping[str, Any],
    *,
    found_as: str = "drawn",
    via: str = "asgi",
    clock: str | None = None,
    example_timeout_s: float | None = None,
    relative_to: str | os.PathLike[str] | None = None,
) -> Replayed:
    """Run the example of `property_id` with `inputs` once against `adapter` in `era`; how it ended, never raising
    for the bridge. `ValueError` for an unknown property or era, or a property that does not apply there."""
    if property_id not in PROPERTIES:
        raise ValueError(f"unknown property {property_id!r}; known: {', '.join(PROPERTIES)}")
    if era not in ERAS:
        raise ValueError(f"era must be 'handshake' or 'stateless', not {era!r}")
    prop = PROPERTIES[property_id]
    if era not in prop.eras:
        raise ValueError(f"{property_id} has no meaning in the {era} era: it applies in {', '.join(prop.eras)}")
    factory = adapter_factory(adapter, relative_to)
    with ContractHarness(factory, via=via, era=era, clock=clock, example_timeout_s=example_timeout_s) as harness:
        harness.property_id = property_id
        harness.own_era = prop.own_era  # as the contract made its adapters for this property
        try:
            facts = harness.facts()
        except ContractError as error:
            return Replayed("error", str(error), ())
        run = PropertyRun(harness, prop, facts, float("inf"))
        with harness.fresh_loop():
            try:
                run.example(dict(inputs), f"{found_as}, replayed")
            except BridgeHung as hang:
                return Replayed("hung", str(hang), tuple(harness.server.journal))
            except ContractViolation as violation:
                return Replayed("failed", str(violation), tuple(harness.server.journal))
            except Stop as stop:
                return Replayed("error", str(stop.error or stop.reason), tuple(harness.server.journal))
        journal = tuple(harness.server.journal)
    if run.unrun:  # a declared case none of whose faults fired checked nothing, as in `check_property`
        _where, unsent, trace = run.unrun[0]
        status = "failed" if unsent else "error"
        why = "never sent what this declared case's faults wait for" if unsent else "did not fire this case's faults"
        return Replayed(status, f"{trace}\n(the bridge {why}, so the property cannot be checked)", journal)
    return Replayed("held", "", journal)


def replay_example(
    adapter: str | AdapterFactory,
    property_id: str,
    era: str,
    inputs: Mapping[str, Any],
    *,
    found_as: str = "drawn",
    via: str = "asgi",
    clock: str | None = None,
    example_timeout_s: float | None = None,
    relative_to: str | os.PathLike[str] | None = None,
) -> None:
    """Run one example of a property again against a bridge, as the contract ran it; what a kept failure calls.

    `adapter` is a factory or a spec as `mcp-testkit check` takes it (`module:Factory`, `file.py:Factory`, a file
    relative to `relative_to`); `inputs` the example's inputs (a `PropertyResult`'s `inputs`), `found_as` which
    example it was ("drawn", "declared case 3 of 20": its message says so). Returns when the property holds for the
    example; raises `ContractViolation` with the counterexample when the bridge breaks it (a `BridgeHung`, one, when
    it hung), `ContractError` when the adapter or the harness raised.
    """
    __tracebackhide__ = True  # pytest shows the counterexample, not this function
    ended = replayed(
        adapter,
        property_id,
        era,
        inputs,
        found_as=found_as,
        via=via,
        clock=clock,
        example_timeout_s=example_timeout_s,
        relative_to=relative_to,
    )
    if ended.status == "hung":
        raise BridgeHung(ended.message)
    if ended.status == "failed":
        raise ContractViolation(ended.message)
    if ended.status == "error":
        raise ContractError(ended.message)
