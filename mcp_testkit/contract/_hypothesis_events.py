"""What a drawn example covered, told to Hypothesis in its own words: `event()` for each fault class that fired, the
era, the property's labels and the listing's shape (how many `tools/list` requests the server answered), so that
`--hypothesis-show-statistics` and Hypothesis' observability output (its JSON lines, which Tyche reads) say what a
run covered; `note()` for the faults that fired, in order, which Hypothesis prints with a failing example. And the
statistics of a `resilience_suite` test's draws, handed to pytest as Hypothesis' own tests hand theirs."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.contract._firing import Firing
    from mcp_testkit.journal import Record

__all__ = ["statistics_for", "tell_hypothesis"]


def tell_hypothesis(
    property_id: str, era: str, labels: Iterable[str], firing: Firing, records: Sequence[Record]
) -> None:
    """Tell Hypothesis what the drawn example running now covered (call it from inside the example)."""
    from hypothesis import event, note

    for label in labels:
        event(f"{property_id} {label}")
    event(f"{property_id} era {era}")
    for name in sorted({type(fault).__name__ for fault in firing.fired}) or ["nothing"]:
        event(f"{property_id} fired {name}")
    pages = sum(1 for record in records if record.rpc_method == "tools/list")
    event(f"{property_id} tools/list requests: {pages}")
    note(f"{property_id} in the {era} era, faults fired: {_listed(firing.fired) or 'none'}")
    if firing.unfired:
        note(f"{property_id} faults placed that never fired: {_listed(rule.fault for rule in firing.unfired)}")


def _listed(values: Iterable[Any]) -> str:
    return ", ".join(repr(value) for value in values)


@contextlib.contextmanager
def statistics_for(node: Any) -> Iterator[None]:
    """The statistics of the Hypothesis runs inside, kept on the pytest item `node` where Hypothesis' pytest plugin
    looks for a test's (`--hypothesis-show-statistics` prints them); nothing without a node."""
    if node is None:
        yield
        return
    from hypothesis.statistics import collector, describe_statistics

    def keep(stats: Any) -> None:
        stats["nodeid"] = node.nodeid
        node.hypothesis_statistics = describe_statistics(stats)

    with collector.with_value(keep):  # type: ignore[arg-type]  # Hypothesis types it as holding None only
        yield
