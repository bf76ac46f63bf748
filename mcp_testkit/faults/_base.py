"""The base of every fault (`faults.Fault`): a frozen value that converts to JSON and back; checks its fields share.

`mcp_testkit.faults` re-exports the faults (a module a kind beside this one) and is the module to import; this one
holds what they and the rules (`faults/_rules.py`) are built on, so that neither imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from mcp_testkit._renamed import OLD_SPELLINGS
from mcp_testkit._wire.eras import ERAS

__all__ = ["Fault", "from_json"]

_ANY = "*"
"""A rule's method that matches every JSON-RPC message."""


_KINDS: dict[str, type[Fault]] = {}


@dataclass(frozen=True)
class Fault:
    """Base of every fault. `default_method` is the JSON-RPC method a rule hits when none is named."""

    default_method: ClassVar[str] = _ANY
    default_times: ClassVar[int | None] = 1
    listing: ClassVar[bool] = False
    stdio_only: ClassVar[bool] = False
    """Whether the fault means something only over stdio (`mcp-testkit serve --stdio`)."""
    eras: ClassVar[tuple[str, ...]] = ERAS
    """The protocol eras the fault means something in; where it hits a request of another era, the
    server answers with an error that says so (see `MisplacedFault`)."""
    default_era: ClassVar[str | None] = None
    """The era a rule of this fault hits when `inject` names none (None: requests of either era)."""
    skipped_methods: ClassVar[frozenset[str]] = frozenset()
    """JSON-RPC methods the fault never hits, whatever its rule says."""
    legal_in_eras: ClassVar[tuple[str, ...]] = ()
    """The eras where what the fault sends is a legal answer, no fault at all (the contract expects it taken as any
    other answer there)."""
    may_end_listing_in: ClassVar[tuple[str, ...]] = ()
    """The eras where a client may read the page the fault hits as the listing's last (the spec of that era allows
    either reading): the contract accepts the pages up to it as the whole catalogue there."""
    connect_may_succeed: ClassVar[bool] = False
    """For a listing fault: whether a careful bridge may still connect when it hits the listing, since what it reads
    is a whole catalogue (a slow page, a change notice, a change between pages); else it must fail the connect."""
    answers_in_the_end: ClassVar[bool] = False
    """For a fault that holds a call: whether the answer still arrives, however slowly (so `ok` may be true)."""
    extends_waits: ClassVar[bool] = False
    """Whether what the fault sends is progress, which a bridge may let extend its wait (up to its maximum)."""
    transient: ClassVar[bool] = True
    """For a fault of the connection, stream or session: whether a resilient client may take it for a passing
    failure and retry (False: the answer arrives garbled or empty instead). What it does lives in
    `server/_effects/`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_"):  # private bases group faults; they are not faults themselves
            _KINDS[cls.__name__] = cls

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """How Hypothesis prints a fault in a counterexample: as its repr, without the class settings."""
        printer.text(repr(self))

    def to_json(self) -> dict[str, Any]:
        """`{"type": "Drop", "after_execution": true}`: the fault's class and fields as JSON data."""
        data: dict[str, Any] = {"type": type(self).__name__}
        for spec in fields(self):
            value = getattr(self, spec.name)
            data[spec.name] = list(value) if isinstance(value, tuple) else value
        if "headers" in data and data["headers"] is not None:
            data["headers"] = dict(data["headers"])
        return data


def from_json(data: Mapping[str, Any]) -> Fault:
    """The fault that `data` (as made by `to_json`) describes; ValueError naming what is wrong."""
    if not isinstance(data, Mapping) or not isinstance(data.get("type"), str):
        raise ValueError(f"a fault must be an object with a 'type' naming the fault, not {data!r}")
    kind = _KINDS.get(data["type"])
    if kind is None or kind is Fault:
        raise ValueError(f"unknown fault type {data['type']!r}; known: {', '.join(sorted(_KINDS))}")
    arguments = {key: value for key, value in data.items() if key != "type"}
    known = {spec.name for spec in fields(kind)}
    unknown = sorted(set(arguments) - known - set(OLD_SPELLINGS.get(f"{kind.__name__}()", ())))
    if unknown:
        raise ValueError(f"fault {data['type']}: unknown field {unknown[0]!r}; fields: {', '.join(sorted(known))}")
    try:
        return kind(**arguments)
    except TypeError as exc:
        raise ValueError(f"fault {data['type']}: {exc}") from None


def _positive(value: float, what: str) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{what} must be a number >= 0, not {value!r}")


def _rate(value: float, what: str) -> None:
    """A rate of bytes a second above 0: a rate of 0 would be no answer at all, which is `NeverAnswer`."""
    _positive(value, what)
    if not value > 0:
        raise ValueError(f"{what} must be > 0: a rate of 0 is NeverAnswer")


def _page(value: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"page must be an int >= 1 (the first page is 1), not {value!r}")


def _status(value: Any, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 100 <= value <= 599:
        raise ValueError(f"{what} must be an HTTP status between 100 and 599, not {value!r}")


def _versions(value: Any, what: str) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(version, str) for version in value):
        raise ValueError(f"{what} must be a list of protocol version strings, not {value!r}")
    return tuple(value)
