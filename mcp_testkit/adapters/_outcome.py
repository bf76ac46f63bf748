"""The adapter interface: `Outcome`, what one connect or call came to, and the `BridgeAdapter` protocol."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "CAPABILITIES",
    "INABILITIES",
    "AdapterFactory",
    "ApprovalAdapter",
    "BridgeAdapter",
    "Capability",
    "Inability",
    "OAuthAdapter",
    "Outcome",
    "OutcomeKind",
    "SessionMode",
    "ToolCacheAdapter",
]

OutcomeKind = Literal["ok", "tool_error", "auth_error", "outcome_unknown", "connection_error", "approval_required"]
SessionMode = Literal["persistent", "per_call"]
Capability = Literal["approvals", "tool_cache", "oauth", "cancellation"]
CAPABILITIES: tuple[Capability, ...] = ("approvals", "tool_cache", "oauth", "cancellation")
"""What an adapter may declare in `capabilities`: the properties that need one apply only to bridges that have it
("oauth": the bridge authorizes with OAuth 2.1, an `OAuthAdapter`; P15 applies).
("cancellation" is kept for adapters written before P10 applied by default; it declares nothing now.)"""
Inability = Literal["abandon_calls", "overlap_calls"]
INABILITIES: tuple[Inability, ...] = ("abandon_calls", "overlap_calls")
"""What an adapter may declare in `cannot`: what the contract cannot do to the bridge through it, structurally.
"abandon_calls": cancelling the task that awaits `call` does not abandon the bridge's call (P10 does not apply);
"overlap_calls": the adapter cannot have two calls in flight at once (P13 does not apply). A driver, whose protocol
carries one request at a time, declares both."""


@dataclass(frozen=True)
class Outcome:
    """What one connect or call came to, as the bridge reported it.

    `text` is what the bridge renders for the model: the result of an `ok` call, or the error text
    of a failed one (by default `str(error)`). Two outcomes are equal when kind and text are. `note` is what
    the adapter knows about the outcome beyond the bridge's words, e.g. that the bridge gives two failures the
    same error; a verdict shows it.
    """

    kind: OutcomeKind
    text: str | None = None
    error: BaseException | None = field(default=None, compare=False)
    note: str | None = field(default=None, compare=False)

    @classmethod
    def ok(cls, text: str = "") -> Outcome:
        return cls("ok", text)

    @classmethod
    def tool_error(cls, error: BaseException, text: str | None = None) -> Outcome:
        """The tool said no: an `isError` result or a JSON-RPC error; `text` is the error as rendered."""
        return cls("tool_error", str(error) if text is None else text, error)

    @classmethod
    def auth_error(cls, error: BaseException, text: str | None = None) -> Outcome:
        return cls("auth_error", str(error) if text is None else text, error)

    @classmethod
    def outcome_unknown(cls, error: BaseException, text: str | None = None) -> Outcome:
        return cls("outcome_unknown", str(error) if text is None else text, error)

    @classmethod
    def connection_error(cls, error: BaseException, text: str | None = None) -> Outcome:
        return cls("connection_error", str(error) if text is None else text, error)

    @classmethod
    def approval_required(cls, token: str) -> Outcome:
        """The bridge paused the call for a person's approval; `text` is the token that approves or declines it."""
        return cls("approval_required", token)

    def __str__(self) -> str:
        note = f"; {self.note}" if self.note else ""
        if self.kind == "ok":
            return f"ok({self.text!r}{note})"
        if self.error is None:
            return f"{self.kind}({self.text!r}{note})"
        return f"{self.kind}({type(self.error).__name__}: {self.error}{note})"


@runtime_checkable
class BridgeAdapter(Protocol):
    """One bridge connected to one server, as the contract suite drives it.

    Four attributes are optional and read with a default: `sessions` ("persistent", the default, or
    "per_call" for a bridge that opens a session for every operation), `timeout_s` (how long the
    bridge waits for a call's answer; None, the default, runs no late-answer cases, and P11 bounds its waits by
    the contract's default, `DEFAULT_WAIT_S`), `eras` (the protocol eras the factory can be asked to speak with
    `era=`; None, the default, never asks) and `capabilities` (what the bridge has beyond the core, from
    `CAPABILITIES`: "approvals" makes it an `ApprovalAdapter` and P8 applies, "tool_cache" a `ToolCacheAdapter`
    and P9 applies, "oauth" an `OAuthAdapter` and P15 applies; by default none, and those properties are "not
    applicable", never "holds"). Every other
    property applies unless the adapter says it structurally cannot: `cannot` (from `INABILITIES`) names what the
    contract cannot do through it (abandon a call: P10; overlap calls: P13). Four more facts, also optional, sharpen
    P11-P13: `connect_timeout_s` (default: each of the connect's requests within `timeout_s`, its listing tried
    1 + `retry` times), `progress_timeout_s`, `max_result_bytes` and `concurrency` (default 2)
    (docs/contract.md, "Waits, large results and concurrent calls").
    """

    name: ClassVar[str]
    """A short name for reports, e.g. 'reference'."""
    page_limit: int | None
    """The most `tools/list` pages the bridge reads before giving up; None: no limit."""
    retry: int
    """How many times the bridge may resend a read after a transient failure."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        """Connect and load the tool listing; an `Outcome` says whether that worked."""
        ...

    async def list_tools(self) -> list[str]:
        """The bare names of the tools the bridge offers its application, as many times as it holds them: those
        loaded at connect, and after a connect that failed whatever it would still offer (P1: none)."""
        ...

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        """Call a tool by its bare name."""
        ...

    def set_headers(self, headers: Mapping[str, str]) -> None:
        """New credentials, to be used from the bridge's next connect or request on (a rotation)."""
        ...

    async def close(self) -> None:
        """Disconnect; nothing may stay open."""
        ...


class AdapterFactory(Protocol):
    """Makes an adapter; `transport` routes its HTTP in-process when given."""

    def __call__(self, *, transport: httpx2.AsyncBaseTransport | None = None) -> BridgeAdapter: ...


@runtime_checkable
class ApprovalAdapter(BridgeAdapter, Protocol):
    """An adapter whose bridge pauses calls for approval (capability "approvals"; property P8).

    A gated call's `call` returns `Outcome.approval_required(token)` and sends nothing; the token is
    then given to `approve` (which returns what `call` would have) or to `decline`.
    """

    def require_approval(self, tools: Collection[str]) -> None:
        """From the next connect on, calls of these tools (bare names) wait for approval."""
        ...

    async def approve(self, token: str) -> Outcome:
        """Run the paused call, once; any use of a spent or unknown token is not `ok`."""
        ...

    async def decline(self, token: str) -> Outcome:
        """Drop the paused call without sending it; `ok` when it was dropped."""
        ...


@runtime_checkable
class ToolCacheAdapter(BridgeAdapter, Protocol):
    """An adapter whose bridge caches tool listings across connects (capability "tool_cache"; property P9).

    `connect` may be called again on the same adapter: it ends what the previous connect opened and
    connects anew, through the cache, with the headers given.
    """

    cache_ttl_s: float
    """How long a cached listing is kept, in seconds of the cache's clock."""

    def use_tool_cache(self) -> None:
        """From the next connect on, list through the bridge's tool cache, empty now, on a clock that only
        `advance_cache_clock` moves."""
        ...

    def advance_cache_clock(self, seconds: float) -> None:
        """Move the cache's clock forward."""
        ...


@runtime_checkable
class OAuthAdapter(BridgeAdapter, Protocol):
    """An adapter whose bridge authorizes with OAuth 2.1 as the MCP spec's authorization section has it (capability
    "oauth"; property P15): discovery from the server's 401, the authorization-code flow with PKCE, refresh.

    The user's browser is played for it: `redirect_handler(url)` is awaited with the authorization URL the bridge
    would open a browser at, and `callback_handler()` returns what the authorization server redirected back with
    (an `mcp.shared.auth.AuthorizationCodeResult`: code, state, iss), as the `mcp` SDK's `OAuthClientProvider`
    takes them. The redirect URI the bridge registers is its own; the handlers never follow it.
    """

    def use_oauth(
        self, redirect_handler: Callable[[str], Awaitable[None]], callback_handler: Callable[[], Awaitable[Any]]
    ) -> None:
        """From the next connect on, authorize with OAuth through these handlers, starting with no token and no
        registered client."""
        ...
