"""The faults of listings (`faults.RepeatCursor`, `StuckCursor`, `EmptyCursor`, `DuplicateTool`, `PageError`,
`MalformedPage`, `SlowPage`, `EndlessPages`, `InvalidCursor`, `CatalogueChange`, `ListChanged`): what one page of a
paginated listing, or its cursor, does wrong.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_listing.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.faults._base import Fault, _page, _positive
from mcp_testkit.faults._rules import LISTING_METHODS

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CatalogueChange",
    "DuplicateTool",
    "EmptyCursor",
    "EndlessPages",
    "InvalidCursor",
    "ListChanged",
    "MalformedPage",
    "PageError",
    "RepeatCursor",
    "SlowPage",
    "StuckCursor",
]


@dataclass(frozen=True)
class _ListingFault(Fault):
    default_method: ClassVar[str] = "tools/list"
    listing: ClassVar[bool] = True
    listing_methods: ClassVar[tuple[str, ...]] = LISTING_METHODS
    """The listings it may hit (`method=`); `tools/list` by default."""


@dataclass(frozen=True)
class _PageFault(_ListingFault):
    """A listing fault placed at a page of the listing, `page` (the first is 1), checked once for all of them."""

    page: int = 1

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class RepeatCursor(_PageFault):
    """Page `page` (>= 2) names as `nextCursor` the cursor that fetched it: the client walks in a circle."""

    page: int = 2

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.page < 2:
            raise ValueError("RepeatCursor page must be >= 2: page 1 is fetched without a cursor")


@dataclass(frozen=True)
class StuckCursor(_PageFault):
    """From page `page` on, every page names the same `nextCursor`, forever."""

    page: int = 1


@dataclass(frozen=True)
class EmptyCursor(_PageFault):
    """Page `page` answers `nextCursor: ""` although more pages exist.

    In the handshake era "" sent back is an invalid cursor (-32602). In the stateless era "" is a legal
    cursor (2026-07-28: a client MUST NOT take it for the end), so the server serves the next page for it.
    The 2025-11-25 text does not say which "" is, so in the handshake era a client may take it for the end.
    """

    page: int = 1
    legal_in_eras: ClassVar[tuple[str, ...]] = (STATELESS,)
    may_end_listing_in: ClassVar[tuple[str, ...]] = (HANDSHAKE,)


@dataclass(frozen=True)
class DuplicateTool(_PageFault):
    """Page `page` lists a tool a second time: `name` (when the catalogue has it), or else, with no `name`, the first
    tool of the catalogue. A page it has no such tool to add to is left as it was, and the fault did not fire there."""

    page: int = 1
    name: str | None = None

    def repeated(self, known: Callable[[str], Any], first: Any) -> Any:
        """The entry this fault lists again, given what is known of the catalogue: `known(name)` gives the named
        entry (None when not known) and `first` is the catalogue's first entry (None when not known). None: this
        page is left as it was. One definition for every place that applies it (the fake, the proxy)."""
        return first if self.name is None else known(self.name)


@dataclass(frozen=True)
class PageError(_PageFault):
    """Page `page` is answered with a JSON-RPC error."""

    page: int = 1
    code: int = -32603
    message: str = "Internal error while listing tools"


@dataclass(frozen=True)
class MalformedPage(_PageFault):
    """Page `page` is a result that is not a valid `ListToolsResult` (`tools` is not a list)."""

    page: int = 1


@dataclass(frozen=True)
class SlowPage(_PageFault):
    """Page `page` is answered after `seconds`."""

    page: int = 1
    seconds: float = 1.0
    connect_may_succeed: ClassVar[bool] = True

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self.seconds, "SlowPage seconds")


@dataclass(frozen=True)
class EndlessPages(_ListingFault):
    """Every page has a fresh `nextCursor`: after the catalogue, empty pages that never end."""

    default_times: ClassVar[int | None] = None


@dataclass(frozen=True)
class InvalidCursor(_PageFault):
    """The request for page `page` (>= 2) is refused with -32602 although its cursor is valid."""

    page: int = 2


@dataclass(frozen=True)
class CatalogueChange(_PageFault):
    """Before page `page` is answered, tools named in `add` appear and those in `remove` go."""

    page: int = 2
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    connect_may_succeed: ClassVar[bool] = True
    listing_methods: ClassVar[tuple[str, ...]] = ("tools/list",)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("add", "remove"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"CatalogueChange {name} must be a list of tool names, not the string {value!r}")
            object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True)
class ListChanged(_PageFault):
    """While page `page` is answered, the server sends `notifications/tools/list_changed`."""

    page: int = 1
    connect_may_succeed: ClassVar[bool] = True
