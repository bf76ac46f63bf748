"""Faults a `TestMcpServer` can inject, as frozen values, and the rules that say which request they hit.

Every fault is a frozen dataclass: printable, comparable, and convertible to JSON and back
(`fault.to_json()`, `from_json(data)`), so Hypothesis can generate and shrink it, a scenario file
can name it, and a journal can record it.

```python
server.inject(faults.Drop(after_execution=True), tool="create")   # the write ran, the client never hears
server.inject(faults.PageError(page=2))                           # the second tools/list page fails
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from mcp_testkit._renamed import milliseconds, renamed_keywords
from mcp_testkit._wire.eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.faults._base import _ANY as _ANY
from mcp_testkit.faults._base import _KINDS as _KINDS
from mcp_testkit.faults._base import Fault, _page, _positive, _status, _versions, from_json
from mcp_testkit.faults._bytes import Bandwidth, Latency, LimitData, ResetPeer, Slice, SlowClose, StdoutNoise
from mcp_testkit.faults._placing import OWN_DEFAULT, era_problem, placed_rule
from mcp_testkit.faults._rules import _DEFAULT as _DEFAULT
from mcp_testkit.faults._rules import LISTING_METHODS, MisplacedFault, Rule
from mcp_testkit.faults._rules import FaultPlan as FaultPlan
from mcp_testkit.faults._rules import describe as describe
from mcp_testkit.faults._rules import misplaced as misplaced
from mcp_testkit.faults._rules import rule_for as rule_for
from mcp_testkit.faults._waits import Dribble, HugeResult, NeverAnswer, ProgressOnly, StopReading

__all__ = [
    "ERAS",
    "OWN_DEFAULT",
    "Accepted",
    "Bandwidth",
    "BreakStream",
    "CatalogueChange",
    "Crash",
    "Delay",
    "DiscoverError",
    "Dribble",
    "Drop",
    "DuplicateTool",
    "EmptyCursor",
    "EndStream",
    "EndlessPages",
    "EraDowngrade",
    "ErrorResult",
    "Exit",
    "ExpireSession",
    "Fault",
    "HeaderMismatch",
    "HttpStatus",
    "HugeResult",
    "InvalidCursor",
    "LateAnswer",
    "Latency",
    "LimitData",
    "ListChanged",
    "LoseSession",
    "MalformedLine",
    "MalformedPage",
    "MalformedSse",
    "MisplacedFault",
    "MissingCapability",
    "NeverAnswer",
    "PageError",
    "ProgressOnly",
    "ProtocolError",
    "RepeatCursor",
    "ResetPeer",
    "Restart",
    "Rule",
    "Slice",
    "SlowClose",
    "SlowPage",
    "StdoutNoise",
    "StopReading",
    "StuckCursor",
    "TruncateBody",
    "UnsupportedVersion",
    "WrongContentType",
    "era_problem",
    "from_json",
    "placed_rule",
]

for _public in (
    Fault, Rule, MisplacedFault, from_json, Dribble, HugeResult, NeverAnswer, ProgressOnly, StopReading,
    Bandwidth, Latency, LimitData, ResetPeer, Slice, SlowClose, StdoutNoise,
):
    _public.__module__ = __name__  # they are built elsewhere (no import circle), but this is where to find them
del _public


# -- answers ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ErrorResult(Fault):
    """Answer the call with an `isError` result carrying `text`; the tool's handler does not run. Any other request
    it hits (`method="resources/read"`...) has no `isError`: it is answered a JSON-RPC error -32603 with `text`."""

    text: str = "scripted tool error"
    default_method: ClassVar[str] = "tools/call"


@dataclass(frozen=True)
class ProtocolError(Fault):
    """Answer with a JSON-RPC error (`code`, `message`, `data`); nothing runs."""

    code: int = -32603
    message: str = "Internal error"
    data: Any = None
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or isinstance(self.code, bool):
            raise ValueError(f"ProtocolError code must be an int, not {self.code!r}")


@dataclass(frozen=True)
class Delay(Fault):
    """Wait `seconds`, then answer normally (longer than the client waits: a timeout)."""

    seconds: float = 1.0

    def __post_init__(self) -> None:
        _positive(self.seconds, "Delay seconds")


@dataclass(frozen=True)
class LateAnswer(Fault):
    """Run the request, then wait `seconds` before answering: the call ran, its answer comes late.

    Unlike `Delay`, which waits before the handler runs, the ledger counts the run at once, so an
    answer later than the client waits is a timeout of a call that did run.
    """

    seconds: float = 1.0

    def __post_init__(self) -> None:
        _positive(self.seconds, "LateAnswer seconds")


# -- HTTP -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HttpStatus(Fault):
    """Answer with this HTTP status, body and headers instead of running the request."""

    status: int = 500
    body: Any = None
    """None: no body; a str or bytes: sent as is; anything else: sent as JSON.

    In JSON, bytes are written `{"$bytes": "<base64>"}` (and read back as bytes), so they survive exactly.
    """
    headers: Any = None
    """Extra response headers, a mapping (kept as a tuple of pairs so the fault stays hashable)."""

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or not 100 <= self.status <= 599:
            raise ValueError(f"HttpStatus status must be an HTTP status between 100 and 599, not {self.status!r}")
        if isinstance(self.body, Mapping) and set(self.body) == {_BYTES}:
            import base64
            import binascii

            try:
                object.__setattr__(self, "body", base64.b64decode(self.body[_BYTES], validate=True))
            except (binascii.Error, TypeError, ValueError):
                raise ValueError(f"HttpStatus body {{{_BYTES!r}: ...}} must hold base64 text") from None
        if self.headers is not None:
            pairs = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
            object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in pairs))

    def body_bytes(self) -> tuple[bytes, bytes | None]:
        """The body to send and its content type."""
        import json

        if self.body is None:
            return b"", None
        if isinstance(self.body, bytes):
            return self.body, None
        if isinstance(self.body, str):
            return self.body.encode(), b"text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), b"application/json"

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if isinstance(self.body, bytes):
            import base64

            data["body"] = {_BYTES: base64.b64encode(self.body).decode("ascii")}
        return data


_BYTES = "$bytes"
"""The key that marks an `HttpStatus` body of raw bytes in JSON."""


@dataclass(frozen=True)
class Accepted(Fault):
    """Answer a request with 202 Accepted and no body, as if it were a notification; nothing runs."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class WrongContentType(Fault):
    """Run the request, then send the answer labelled with this Content-Type."""

    content_type: str = "text/html"


# -- connection -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Drop(Fault):
    """Close the connection without answering; with `after_execution` the request runs first."""

    after_execution: bool = False


@dataclass(frozen=True)
class TruncateBody(Fault):
    """Run the request, then send only the first half of the JSON answer."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class EndStream(Fault):
    """Run the request, then end its SSE stream before the response event."""


@dataclass(frozen=True)
class MalformedSse(Fault):
    """Run the request, then send an SSE event whose data is not JSON, and end the stream."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class BreakStream(Fault):
    """Answer as SSE and close the connection after `after_events` events without ending the stream.

    The request runs to its end; the events the client did not get (its answer among them) are kept,
    and a GET with `Last-Event-ID` naming the last event it got replays them (resumption). `retry_s`,
    when set, is sent as `retry:` (in whole milliseconds) just before the break. With `after_events=0` the
    client gets no event id, so it cannot resume. On a server built with `resumable=True` the first event is
    the priming one. Handshake era only: the stateless era (2026-07-28) has no event ids.
    """

    after_events: int = 1
    retry_s: float | None = None
    eras: ClassVar[tuple[str, ...]] = (HANDSHAKE,)
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if not isinstance(self.after_events, int) or isinstance(self.after_events, bool) or self.after_events < 0:
            raise ValueError(f"BreakStream after_events must be an int >= 0, not {self.after_events!r}")
        retry_s = self.retry_s
        if retry_s is not None and (not isinstance(retry_s, (int, float)) or isinstance(retry_s, bool) or retry_s < 0):
            raise ValueError(f"BreakStream retry_s must be a number of seconds >= 0 or None, not {retry_s!r}")


BreakStream.__init__ = renamed_keywords(retry_ms=("retry_s", milliseconds))(BreakStream.__init__)  # type: ignore[method-assign]


# -- stdio ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _StdioFault(Fault):
    stdio_only: ClassVar[bool] = True


@dataclass(frozen=True)
class MalformedLine(_StdioFault):
    """Over stdio: run the request, then write a line that is not JSON instead of its answer.

    Over HTTP it means nothing and the request is answered normally; `mcp-testkit serve` refuses it there.
    """


@dataclass(frozen=True)
class Exit(_StdioFault):
    """Over stdio: end the process with status `code` instead of answering, the journal flushed.

    With `after_execution` the request runs first (it ran, the client never hears).
    """

    code: int = 1
    after_execution: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or isinstance(self.code, bool) or not 0 <= self.code <= 255:
            raise ValueError(f"Exit code must be an int between 0 and 255, not {self.code!r}")


@dataclass(frozen=True)
class Crash(_StdioFault):
    """Over stdio: die at once by SIGKILL instead of answering, as a crashed server does.

    With `after_execution` the request runs first. The journal line of this request is written before dying.
    """

    after_execution: bool = False


# -- sessions ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SessionFault(Fault):
    eras: ClassVar[tuple[str, ...]] = (HANDSHAKE,)


@dataclass(frozen=True)
class LoseSession(_SessionFault):
    """Forget the request's session: this request and every later one on it get 404.

    Handshake era only: a stateless (2026-07-28) request has no session to lose.
    """


@dataclass(frozen=True)
class Restart(_SessionFault):
    """Forget every session, as a restarted server does; unknown sessions then get this status.

    404 is the spec's answer; 400 is what python-sdk servers up to 1.25 answered. Handshake era only.
    """

    unknown_session_status: int = 404

    def __post_init__(self) -> None:
        if self.unknown_session_status not in (400, 404):
            raise ValueError(f"Restart unknown_session_status must be 404 or 400, not {self.unknown_session_status!r}")


@dataclass(frozen=True)
class ExpireSession(_SessionFault):
    """Let the request's session serve `after_requests` more requests, then forget it (404); handshake era only."""

    after_requests: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.after_requests, int) or self.after_requests < 0:
            raise ValueError(f"ExpireSession after_requests must be an int >= 0, not {self.after_requests!r}")


# -- listing ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _ListingFault(Fault):
    default_method: ClassVar[str] = "tools/list"
    listing: ClassVar[bool] = True
    listing_methods: ClassVar[tuple[str, ...]] = LISTING_METHODS
    """The listings it may hit (`method=`); `tools/list` by default."""


@dataclass(frozen=True)
class RepeatCursor(_ListingFault):
    """Page `page` (>= 2) names as `nextCursor` the cursor that fetched it: the client walks in a circle."""

    page: int = 2

    def __post_init__(self) -> None:
        _page(self.page)
        if self.page < 2:
            raise ValueError("RepeatCursor page must be >= 2: page 1 is fetched without a cursor")


@dataclass(frozen=True)
class StuckCursor(_ListingFault):
    """From page `page` on, every page names the same `nextCursor`, forever."""

    page: int = 1

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class EmptyCursor(_ListingFault):
    """Page `page` answers `nextCursor: ""` although more pages exist.

    In the handshake era "" sent back is an invalid cursor (-32602). In the stateless era "" is a legal
    cursor (2026-07-28: a client MUST NOT take it for the end), so the server serves the next page for it.
    The 2025-11-25 text does not say which "" is, so in the handshake era a client may take it for the end.
    """

    page: int = 1
    legal_in_eras: ClassVar[tuple[str, ...]] = (STATELESS,)
    may_end_listing_in: ClassVar[tuple[str, ...]] = (HANDSHAKE,)

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class DuplicateTool(_ListingFault):
    """Page `page` lists a tool a second time: `name`, or else the first tool of the catalogue."""

    page: int = 1
    name: str | None = None

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class PageError(_ListingFault):
    """Page `page` is answered with a JSON-RPC error."""

    page: int = 1
    code: int = -32603
    message: str = "Internal error while listing tools"

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class MalformedPage(_ListingFault):
    """Page `page` is a result that is not a valid `ListToolsResult` (`tools` is not a list)."""

    page: int = 1

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class SlowPage(_ListingFault):
    """Page `page` is answered after `seconds`."""

    page: int = 1
    seconds: float = 1.0
    connect_may_succeed: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _page(self.page)
        _positive(self.seconds, "SlowPage seconds")


@dataclass(frozen=True)
class EndlessPages(_ListingFault):
    """Every page has a fresh `nextCursor`: after the catalogue, empty pages that never end."""

    default_times: ClassVar[int | None] = None


@dataclass(frozen=True)
class InvalidCursor(_ListingFault):
    """The request for page `page` (>= 2) is refused with -32602 although its cursor is valid."""

    page: int = 2

    def __post_init__(self) -> None:
        _page(self.page)


@dataclass(frozen=True)
class CatalogueChange(_ListingFault):
    """Before page `page` is answered, tools named in `add` appear and those in `remove` go."""

    page: int = 2
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    connect_may_succeed: ClassVar[bool] = True
    listing_methods: ClassVar[tuple[str, ...]] = ("tools/list",)

    def __post_init__(self) -> None:
        _page(self.page)
        for name in ("add", "remove"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ValueError(f"CatalogueChange {name} must be a list of tool names, not the string {value!r}")
            object.__setattr__(self, name, tuple(value))


@dataclass(frozen=True)
class ListChanged(_ListingFault):
    """While page `page` is answered, the server sends `notifications/tools/list_changed`."""

    page: int = 1
    connect_may_succeed: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _page(self.page)


# -- eras -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiscoverError(Fault):
    """Answer `server/discover` with this HTTP status and JSON-RPC error (no body when `code` is None).

    The default is what a handshake-era server answers the probe (400, -32600 "Missing session ID"):
    a client in auto mode falls back to `initialize`. Works in both eras.
    """

    status: int = 400
    code: int | None = -32600
    message: str = "Bad Request: Missing session ID"
    data: Any = None
    default_method: ClassVar[str] = "server/discover"

    def __post_init__(self) -> None:
        _status(self.status, "DiscoverError status")
        if self.code is not None and (not isinstance(self.code, int) or isinstance(self.code, bool)):
            raise ValueError(f"DiscoverError code must be an int or None (no body), not {self.code!r}")


@dataclass(frozen=True)
class _StatelessFault(Fault):
    eras: ClassVar[tuple[str, ...]] = (STATELESS,)


@dataclass(frozen=True)
class HeaderMismatch(_StatelessFault):
    """Refuse a stateless request with 400 and -32020 (HeaderMismatch), naming `header`; nothing runs."""

    header: str = "Mcp-Method"

    def __post_init__(self) -> None:
        if not isinstance(self.header, str) or not self.header:
            raise ValueError(f"HeaderMismatch header must be a header name, not {self.header!r}")


@dataclass(frozen=True)
class UnsupportedVersion(_StatelessFault):
    """Refuse a stateless request with 400 and -32022, offering `supported` (None: the server's versions)."""

    supported: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.supported is not None:
            object.__setattr__(self, "supported", _versions(self.supported, "UnsupportedVersion supported"))


@dataclass(frozen=True)
class MissingCapability(_StatelessFault):
    """Refuse a stateless request with 400 and -32021: it needs client capabilities it did not declare."""

    capabilities: tuple[str, ...] = ("elicitation",)
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if isinstance(self.capabilities, str) or not self.capabilities:
            raise ValueError(
                f"MissingCapability capabilities must be a non-empty list of names, not {self.capabilities!r}"
            )
        object.__setattr__(self, "capabilities", tuple(self.capabilities))


@dataclass(frozen=True)
class EraDowngrade(_StatelessFault):
    """Answer `server/discover`, then refuse stateless requests as a handshake-era server does (400, -32600).

    A half-upgraded deployment: the probe reaches a new node, the requests an old one. Hits every stateless
    request but `server/discover` until its rule is spent (every time by default); handshake requests are
    served, so a client that falls back to `initialize` recovers.
    """

    default_times: ClassVar[int | None] = None
    default_era: ClassVar[str | None] = STATELESS
    skipped_methods: ClassVar[frozenset[str]] = frozenset({"server/discover"})
