"""Which requests a fault hits: `Rule`, the plan of a server's rules (`FaultPlan`), and the words for a misplaced fault.

Re-exported by `mcp_testkit.faults`, the module to import.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from mcp_testkit._wire.eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.faults._auth import AUTH_ENDPOINT_METHODS
from mcp_testkit.faults._base import _ANY, Fault, from_json

_ENDPOINTS = "oauth/"
"""The prefix of the methods that name an authorization server's endpoints (`faults.AUTH_ENDPOINT_METHODS`)."""
_ENDPOINT_METHODS = tuple(AUTH_ENDPOINT_METHODS.values())

__all__ = ["FaultPlan", "MisplacedFault", "Rule", "describe", "misplaced", "named", "request_target", "rule_for"]


class MisplacedFault(Exception):
    """A fault hit a request of an era it means nothing in (a `LoseSession` on a stateless request)."""


# -- rules ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """Where a fault lands: the `nth` matching request from now on, `times` times (None: every time).

    A request matches when its JSON-RPC method, tool, name, page and session match those given. `tool` is
    the name of `tools/call` (and what `method` names, when that is another request that names something);
    `name` is what any request names (a tool, a resource's URI, a prompt), whatever its method. With `probability`
    below 1, each matching request from the `nth` on is hit with that chance, drawn from `seed`: the same
    requests in the same order are hit again in a run with the same seed. `times` still caps the hits.
    """

    fault: Fault
    method: str = _ANY
    tool: str | None = None
    page: int | None = None
    session_id: str | None = None
    nth: int = 1
    times: int | None = 1
    era: str | None = None
    """The era of the requests it hits: 'handshake', 'stateless', or None for either."""
    probability: float = 1.0
    """The chance that a due matching request is hit (1: every one)."""
    seed: int | None = None
    """The seed of the draws when `probability` is below 1 (`inject` draws one when none is given)."""
    name: str | None = None
    """What the requests it hits name: a tool, a resource's URI or a prompt's name (None: any request)."""

    def __post_init__(self) -> None:
        if not isinstance(self.fault, Fault):
            raise ValueError(f"a rule needs a fault from mcp_testkit.faults, not {self.fault!r}")
        if self.era is not None and self.era not in ERAS:
            raise ValueError(f"era must be 'handshake', 'stateless' or None (either), not {self.era!r}")
        if self.era is not None and self.era not in self.fault.eras:
            raise ValueError(misplaced(self.fault, self.era))
        if not isinstance(self.nth, int) or self.nth < 1:
            raise ValueError(f"nth must be an int >= 1, not {self.nth!r}")
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ValueError(f"times must be an int >= 1 or None (every time), not {self.times!r}")
        probability = self.probability
        if not isinstance(probability, (int, float)) or isinstance(probability, bool) or not 0 < probability <= 1:
            raise ValueError(f"probability must be a number above 0 and at most 1, not {probability!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise ValueError(f"seed must be an int or None, not {self.seed!r}")
        if self.name is not None and not isinstance(self.name, str):
            raise ValueError(f"name must be a string (what the requests hit name) or None, not {self.name!r}")
        endpoint_fault = self.fault.default_method.startswith(_ENDPOINTS)
        names_endpoint = self.method.startswith(_ENDPOINTS)
        if names_endpoint != endpoint_fault or (endpoint_fault and self.method not in _ENDPOINT_METHODS):
            known = ", ".join(_ENDPOINT_METHODS)
            if endpoint_fault:
                raise ValueError(
                    f"{self.fault!r} hits a request to the authorization server: method must be one of {known}, "
                    f"not {self.method!r}"
                )
            raise ValueError(
                f"method={self.method!r} is an authorization server endpoint, which only its faults (RejectRefresh, "
                f"AuthServerError, SlowAuthServer, WrongIssuer) hit, not {type(self.fault).__name__}"
            )
        if self.name is not None and self.tool is not None:
            tool, name = self.tool, self.name
            raise ValueError(f"give tool={tool!r} or name={name!r}, not both: name matches what any request names")

    def matches(
        self, method: str | None, tool: str | None, page: int | None, session_id: str | None, era: str = HANDSHAKE
    ) -> bool:
        return (
            # a request to the authorization server's endpoints (`oauth/...`) is hit only by a rule that names it
            ((self.method == _ANY and not (method or "").startswith(_ENDPOINTS)) or self.method == method)
            and (self.tool is None or (self.tool == tool and (method == "tools/call" or self.method == method)))
            and (self.name is None or (self.name == tool and method in _NAMED_BY))
            and (self.page is None or self.page == page)
            and (self.session_id is None or self.session_id == session_id)
            and (self.era is None or self.era == era)
            and method not in self.fault.skipped_methods
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "fault": self.fault.to_json(),
            "method": self.method,
            "tool": self.tool,
            "page": self.page,
            "session_id": self.session_id,
            "nth": self.nth,
            "times": self.times,
            "era": self.era,
        }
        if self.probability != 1 or self.seed is not None:
            data["probability"] = self.probability
            data["seed"] = self.seed
        if self.name is not None:
            data["name"] = self.name
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rule:
        if not isinstance(data, Mapping) or "fault" not in data:
            raise ValueError(f"a rule must be an object with a 'fault', not {data!r}")
        known = {spec.name for spec in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"rule: unknown field {unknown[0]!r}; fields: {', '.join(sorted(known))}")
        return cls(**{**data, "fault": from_json(data["fault"])})


@dataclass(eq=False)
class _Armed:
    rule: Rule
    seen: int = 0
    fired: int = 0
    draws: random.Random | None = None

    def __post_init__(self) -> None:
        if self.rule.probability < 1:
            self.draws = random.Random(self.rule.seed)

    def hits(self) -> bool:
        """Whether a due matching request is hit: always, or by a draw of the rule's own seeded sequence."""
        return self.draws is None or self.draws.random() < self.rule.probability

    @property
    def spent(self) -> bool:
        return self.rule.times is not None and self.fired >= self.rule.times


@dataclass(eq=False)
class FaultPlan:
    """The rules of one server, consumed in the order they were added; at most one hits a request."""

    _armed: list[_Armed] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, rule: Rule) -> Rule:
        with self._lock:
            self._armed.append(_Armed(rule))
        return rule

    def __bool__(self) -> bool:
        return bool(self._armed)

    def take(
        self, method: str | None, tool: str | None, page: int | None, session_id: str | None, era: str = HANDSHAKE
    ) -> Fault | None:
        """The fault for this request, if a rule hits it; counts the request against the rules it matches.

        Every matching rule counts the request, so `nth` means the nth matching request since the rule
        was added whatever earlier rules did; when several are due, the first added fires and the others
        stay due for the next matching request. A rule with a `probability` draws once per due matching
        request that no earlier rule took, and fires when the draw says so.
        """
        chosen: Fault | None = None
        with self._lock:
            for armed in self._armed:
                if armed.spent or not armed.rule.matches(method, tool, page, session_id, era):
                    continue
                armed.seen += 1
                if chosen is None and armed.seen >= armed.rule.nth and armed.hits():
                    armed.fired += 1
                    chosen = armed.rule.fault
        return chosen

    def give_back(self, fault: Fault) -> None:
        """The request `take` gave `fault` to was left as it was (the fault found nothing to change there): its
        rule did not fire after all, and stays due for the next matching request."""
        with self._lock:
            for armed in reversed(self._armed):
                if armed.rule.fault is fault and armed.fired > 0:
                    armed.fired -= 1
                    return

    def pending(self) -> list[Rule]:
        """Rules that can still fire: not yet used up."""
        return [armed.rule for armed in self._armed if not armed.spent]

    def unfired(self) -> list[Rule]:
        """Rules that never fired at all."""
        return [armed.rule for armed in self._armed if armed.fired == 0]


_NAMED_BY = {
    "tools/call": "name",
    "resources/read": "uri",
    "resources/subscribe": "uri",
    "resources/unsubscribe": "uri",
    "prompts/get": "name",
}
NAMED_METHODS = (_ANY, *_NAMED_BY)
"""The methods whose requests name something a rule's `tool` or `name` matches: a tool, a resource's URI, a prompt."""
LISTING_METHODS = ("tools/list", "resources/list", "resources/templates/list", "prompts/list")
"""The listings a listing fault may hit."""

_DEFAULT: Any = object()
"""Marks an argument of `inject` left to the fault's default."""


def request_target(method: str | None, params: Any, tool: str | None) -> str | None:
    """What a request names, for a fault rule's `tool` (or `name`) to match: the tool of `tools/call`, the URI of
    `resources/read` (and of a subscription), the prompt of `prompts/get`; None for any other request."""
    if method == "tools/call":
        return tool
    key = _NAMED_BY.get(method or "")
    value = params.get(key) if key is not None and isinstance(params, dict) else None
    return value if isinstance(value, str) else None


def rule_for(
    fault: Fault,
    *,
    method: str | object | None,
    tool: str | None,
    page: int | None,
    session_id: str | None,
    nth: int,
    times: int | object | None,
    era: str | object | None = _DEFAULT,
    probability: float = 1.0,
    seed: int | None = None,
    name: str | None = None,
) -> Rule:
    """A rule with the fault's own defaults filled in (method, times, era, and page for listing faults).

    `name` matches what any request names (a tool, a URI, a prompt): left out, the method is then any request
    that names something, whatever the fault's own default; `tool` and `name` are not given together.

    With a `probability` below 1, `times` left out means every time (each matching request has that chance),
    and a `seed` left out is drawn, so that the rule shows the seed to replay the run with.
    """
    if not isinstance(fault, Fault):
        raise ValueError(f"inject() needs a fault from mcp_testkit.faults, not {fault!r}")
    if method is not _DEFAULT:
        chosen_method = _ANY if method is None else method
    else:
        chosen_method = _ANY if name is not None and not fault.listing else fault.default_method
    chancy = isinstance(probability, (int, float)) and probability < 1
    chosen_times = (None if chancy else fault.default_times) if times is _DEFAULT else times
    if chancy and seed is None:
        seed = random.SystemRandom().randrange(2**32)
    chosen_era = fault.default_era if era is _DEFAULT else era
    if page is None and fault.listing:
        page = getattr(fault, "page", None)
    for label, value in (("tool", tool), ("name", name)):
        if value is not None and chosen_method not in NAMED_METHODS:
            named = ", ".join(NAMED_METHODS[1:])
            raise ValueError(
                f"{label}={value!r} matches only requests that name something ({named}), not {chosen_method}"
            )
    listings = getattr(fault, "listing_methods", LISTING_METHODS)
    if fault.listing and chosen_method not in (_ANY, *listings):
        raise ValueError(f"{fault!r} is a listing fault: it hits {' or '.join(listings)}, not {chosen_method}")
    return Rule(
        fault,
        method=str(chosen_method),
        tool=tool,
        page=page,
        session_id=session_id,
        nth=nth,
        times=chosen_times,  # type: ignore[arg-type]
        era=chosen_era,  # type: ignore[arg-type]
        probability=probability,
        seed=seed,
        name=name,
    )


def misplaced(fault: Fault, era: str) -> str:
    """Why `fault` means nothing for a request of `era`, and what to do instead."""
    home = fault.eras[0]
    if era == STATELESS:
        what = "a stateless (2026-07-28) request, which has no session"
    else:
        what = "a handshake-era request, which carries no 2026-07-28 metadata to refuse"
    return f"{fault!r} has no meaning for {what}: inject it with era={home!r}, or drive the client in the {home} era"


def describe(rules: Sequence[Rule]) -> str:
    return "\n".join(f"  {rule.fault!r} on {rule.method}{named(rule)}" for rule in rules)


def named(rule: Rule) -> str:
    """` tool=X` or ` name=X` when the rule names what it hits, else ''."""
    return f" tool={rule.tool}" if rule.tool else f" name={rule.name}" if rule.name else ""
