"""The time one example may take, derived from what the bridge declares and the faults the example places: an
answer later than the bridge waits costs it its `timeout_s` per attempt, so a careful bridge with a long timeout is
never taken for a hung one; and the `example_timeout` a user gives is checked against the same waits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults

if TYPE_CHECKING:
    from mcp_testkit.contract._facts import BridgeFacts

__all__ = ["DEFAULT_EXAMPLE_TIMEOUT_S", "MARGIN", "TimeLimit", "time_limit"]

DEFAULT_EXAMPLE_TIMEOUT_S = 10.0
"""What an example without declared waits may take (its own work: connecting, calling, closing)."""
MARGIN = 1.5
"""How much longer than the declared waits an example may take."""
_SLACK_S = 2.0


@dataclass(frozen=True)
class TimeLimit:
    """An example's limit in seconds, and the declared waits it is made of (what a too-short limit cuts)."""

    seconds: float
    waits_s: float = 0.0
    waits: tuple[str, ...] = ()

    @property
    def least_s(self) -> float:
        """The shortest limit that does not cut the declared waits."""
        return MARGIN * self.waits_s + _SLACK_S if self.waits_s else 0.0


def _faults(value: Any) -> Iterator[tuple[faults.Fault, int | None]]:
    """The faults in an example's inputs, with how many times each hits (None: every time). A bare fault is placed
    by its property, often on every call (P6 places each with times=None): it is counted as hitting every attempt,
    the most it can cost, so a bridge that retries a late read is never taken for a hung one."""
    if isinstance(value, faults.Rule):
        yield value.fault, value.times
    elif isinstance(value, faults.Fault):
        yield value, None
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _faults(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _faults(item)


def time_limit(inputs: Any, facts: BridgeFacts, example_timeout: float | None) -> TimeLimit:
    """The limit of one example: `example_timeout` when given, else the default plus the declared waits with a
    margin. A wait is an answer held `seconds` (`LateAnswer`, `Delay`, `SlowPage`): the bridge waits the shorter of
    that and its `timeout_s`, once per hit, and a fault that hits every time hits each of its `1 + retry` attempts."""
    waits: list[str] = []
    total = 0.0
    for fault, times in _faults(inputs):
        seconds = getattr(fault, "seconds", None)
        if not isinstance(seconds, (int, float)):
            continue
        each = min(float(seconds), facts.timeout_s) if facts.timeout_s is not None else float(seconds)
        hits = 1 + facts.retry if times is None else times
        total += each * hits
        waits.append(f"{fault!r} ({hits} x {each:g} s)")
    declared = inputs.get("bound_s") if isinstance(inputs, dict) else None
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        # An example whose server never answers (P11) waits what the bridge declares, which it names here.
        total += float(declared)
        waits.append(f"the bridge's declared waits ({declared:g} s)")
    if example_timeout is not None:
        return TimeLimit(float(example_timeout), total, tuple(waits))
    return TimeLimit(DEFAULT_EXAMPLE_TIMEOUT_S + MARGIN * total, total, tuple(waits))
