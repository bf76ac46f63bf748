"""Mutation check: one small misbehaving variant of the reference bridge per property, each caught by the contract.

A property suite that cannot fail proves nothing. Each mutant breaks one documented rule the way real
bridges do; at the default 100 examples the contract must fail exactly that property, with a short
counterexample that names what exposed it, in the era named (the handshake era, but for P5s, which is the
stateless era's, and a mutant of the stateless era's own rules). The unbroken bridge, with one session or
one per call, holds every property that applies to it in both eras under the same checks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re
from typing import Any, ClassVar

import anyio
import pytest

from mcp_testkit.adapters import PerCallReferenceAdapter, ReferenceBridgeAdapter
from mcp_testkit.bridge import (
    MCPBridgeError,
    MCPConnectionError,
    MCPToolError,
    ToolCache,
    _approval,
    _cache,
    _catalogue,
    _era_choice,
    _handshake,
    _link,
    _pool,
    _rpc,
    _stateless,
)
from mcp_testkit.bridge._handshake import McpSession
from mcp_testkit.bridge._rpc import RpcError, SessionGone, WireError
from mcp_testkit.contract import PROPERTIES, run_contract
from mcp_testkit.contract._facts import BridgeFacts


def _requests_in(counterexample: str) -> int:
    return len(re.findall(r"^\s+#\d+ ", counterexample, re.M))


def _check(property_id: str, era: str = "handshake") -> str:
    """The counterexample of `property_id` in `era` at the default 100 examples; the property must fail, not error."""
    (result,) = run_contract(ReferenceBridgeAdapter, properties=[property_id], eras=[era])
    assert result.status == "failed", result.counterexample
    assert result.counterexample is not None
    assert result.counterexample.startswith(f"{property_id} counterexample (")
    return result.counterexample


# -- P0 ------------------------------------------------------------------------------------------------


def _refusing(refuses: Any) -> Any:
    """A `read_catalogue` that fails the listing, as a bridge that crashes on one legal shape does, where a tool's
    definition makes `refuses(tool)` true."""
    read = _catalogue.read_catalogue

    async def listing(session: Any, config: Any) -> list[Any]:
        listed = await read(session, config)
        for tool in listed:
            if refuses(tool):
                raise MCPConnectionError(config.name, f"loading tool {tool.name!r} raised KeyError('$defs')")
        return listed

    return listing


def test_mutant_resolving_no_ref_fails_p0(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that cannot load a tool whose schema uses `$defs` and `$ref` (one shape of a valid server, which no
    other property's tools have) fails P0 on that shape's declared case, and every other property of the era is
    blocked, although its own examples would hold: P0's failure is reported once, under P0."""
    monkeypatch.setattr(_link, "read_catalogue", _refusing(lambda tool: "$defs" in tool.input_schema))
    results = run_contract(ReferenceBridgeAdapter, properties=["P0", "P1", "P2"], eras=["handshake"])
    assert [r.status for r in results] == ["failed", "blocked", "blocked"]
    counterexample = results[0].counterexample or ""
    assert counterexample.startswith("P0 counterexample (declared case 5 of 23)"), counterexample
    assert "('$defs and $ref', 'defs_and_ref')" in counterexample
    assert "the bridge could not connect to a valid server: connection_error(" in counterexample
    assert "KeyError('$defs')" in counterexample
    for blocked in results[1:]:
        assert blocked.mark == "blocked"
        assert (blocked.examples, blocked.passed, blocked.applies) == (0, False, False)
        assert blocked.notes[0].startswith("blocked: the bridge fails P0 (connects to any valid server)")
        assert blocked.counterexample == counterexample
    monkeypatch.undo()  # unbroken, the same properties hold: the block was P0's doing alone
    held = run_contract(ReferenceBridgeAdapter, properties=["P1", "P2"], eras=["handshake"], max_examples=20)
    assert [r.status for r in held] == ["passed", "passed"]


def test_mutant_dropping_long_names_fails_p0_in_the_stateless_era(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that silently leaves out tools with names over 64 characters (a model API's limit, not MCP's) connects,
    but loads a wrong tool set: P0 fails on the 128-character name's declared case."""
    read = _catalogue.read_catalogue

    async def short_names_only(session: Any, config: Any) -> list[Any]:
        return [tool for tool in await read(session, config) if len(tool.name) <= 64]

    monkeypatch.setattr(_link, "read_catalogue", short_names_only)
    counterexample = _check("P0", "stateless")
    assert "the bridge connected but loaded a wrong tool set from a legal catalogue" in counterexample
    assert f"missing ['{'x' * 128}']" in counterexample


# -- P1 ------------------------------------------------------------------------------------------------


async def _partial_listing(session: Any, config: Any) -> list[Any]:
    """The classic naive pager: follows cursors, and on any trouble keeps the tools read so far."""
    tools: list[Any] = []
    cursor = None
    for _ in range(config.max_tool_pages):
        try:
            page = await session.list_tools(cursor)
        except (WireError, RpcError):
            return tools
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    return tools


def test_mutant_loading_a_partial_listing_fails_p1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that keeps the pages it read when the listing breaks is caught by P1 in a few requests."""
    monkeypatch.setattr(_link, "read_catalogue", _partial_listing)
    counterexample = _check("P1")
    assert "loaded a wrong tool set" in counterexample
    assert re.search(r"PageError|MalformedPage|InvalidCursor|EmptyCursor|RepeatCursor|StuckCursor", counterexample)
    assert _requests_in(counterexample) <= 10, counterexample


class _PagesKept:
    """A session that keeps the tools of every page it was given, even of a listing that then failed."""

    kept: ClassVar[list[str]] = []

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def list_tools(self, cursor: str | None) -> Any:
        page = await self._session.list_tools(cursor)
        _PagesKept.kept.extend(tool.name for tool in page.tools)
        return page


class _OffersAFailedListing(ReferenceBridgeAdapter):
    """Reports the failed listing, but still offers its application the tools of the pages read before it."""

    async def list_tools(self) -> list[str]:
        return await super().list_tools() or list(_PagesKept.kept)


def test_mutant_offering_a_failed_listings_pages_fails_p1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that reports a listing failed yet keeps the pages it read usable is caught by P1's second half:
    after a failed connect it must offer nothing."""
    read = _catalogue.read_catalogue

    async def keeping(session: Any, config: Any) -> list[Any]:
        _PagesKept.kept = []
        return await read(_PagesKept(session), config)

    monkeypatch.setattr(_link, "read_catalogue", keeping)
    (result,) = run_contract(_OffersAFailedListing, properties=["P1"], eras=["handshake"])
    assert result.status == "failed", result.counterexample
    assert "after a listing that failed the bridge still offers" in (result.counterexample or "")
    assert "a partial catalogue" in (result.counterexample or "")


def test_mutant_reading_one_page_past_its_limit_fails_p1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose page check is off by one reads 101 pages with a limit of 100; P1 fails it."""
    read = _catalogue.read_catalogue

    async def one_page_more(session: Any, config: Any) -> list[Any]:
        return await read(session, dataclasses.replace(config, max_tool_pages=config.max_tool_pages + 1))

    monkeypatch.setattr(_link, "read_catalogue", one_page_more)
    counterexample = _check("P1")
    assert "the bridge read 101 pages, beyond its limit of 100" in counterexample
    assert "EndlessPages()" in counterexample


# -- P2 ------------------------------------------------------------------------------------------------


def test_mutant_resending_a_write_after_a_drop_fails_p2(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that takes every tool as safe to resend runs a write twice after Drop(after_execution=True)."""
    monkeypatch.setattr(_catalogue.BridgeTool, "resendable", property(lambda self: True))
    counterexample = _check("P2")
    assert "a write ran 2 times for one call" in counterexample
    assert "Drop(after_execution=True)" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


# -- P3 ------------------------------------------------------------------------------------------------


def test_mutant_retrying_a_read_without_bound_fails_p3(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that resends a read for as long as it fails runs it more than 1 + retry times; P3 fails it."""
    init = _link.ServerLink.__init__

    def unbounded(self: Any, config: Any, *args: Any, **kwargs: Any) -> None:
        init(self, dataclasses.replace(config, retry=10**6), *args, **kwargs)

    monkeypatch.setattr(_link.ServerLink, "__init__", unbounded)
    counterexample = _check("P3")
    assert "call ran 4 times, more than 1 + retry" in counterexample
    assert "Drop(after_execution=True)" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


# -- P4 ------------------------------------------------------------------------------------------------


def test_mutant_resending_after_a_401_fails_p4(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that takes a 401 for a lost session really sends the work again with the refused credential."""
    check_status = _handshake._check_status

    def refusal_as_lost_session(response: Any, *, has_session: bool) -> None:
        if response.status_code in (401, 403) and has_session:
            raise SessionGone(404)
        check_status(response, has_session=has_session)

    monkeypatch.setattr(_handshake, "_check_status", refusal_as_lost_session)
    counterexample = _check("P4")
    assert re.search(
        r"after HTTP 40[13] the bridge re-attempted the work \d+ times with the refused credential", counterexample
    )
    assert re.search(r"#\d+ (initialize|tools/call)", counterexample)
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_keeping_a_stale_token_fails_p4(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that reads its credentials once, when built, reconnects after a rotation with the old token."""
    open_session = _link.ServerLink._open

    async def first_credentials_only(self: Any) -> Any:
        if not hasattr(self, "first_environ"):
            self.first_environ = dict(self._environ or {})
        environ, self._environ = self._environ, self.first_environ
        try:
            return await open_session(self)
        finally:
            self._environ = environ

    monkeypatch.setattr(_link.ServerLink, "_open", first_credentials_only)
    counterexample = _check("P4")
    assert "after the rotation the bridge sent stale credentials" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


# -- P5 ------------------------------------------------------------------------------------------------


def test_mutant_reinitializing_with_the_stale_session_id_fails_p5(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that re-initializes carrying the lost session's id is caught by P5."""
    last: dict[str, str | None] = {"id": None}

    class StickySession(McpSession):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.session_id = last["id"]  # the new session starts with the old one's id

        async def initialize(self) -> Any:
            result = await super().initialize()
            last["id"] = self.session_id
            return result

    monkeypatch.setattr(_era_choice, "McpSession", StickySession)
    counterexample = _check("P5")
    assert re.search(r"the new initialize \(#\d+\) carried the stale session id", counterexample)
    assert "LoseSession()" in counterexample or "how='restart'" in counterexample or "lose_session" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


# -- P5s -----------------------------------------------------------------------------------------------


def test_mutant_replaying_a_lost_request_with_its_id_fails_p5s(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that re-issues a read whose stream broke as the very request it sent (same JSON-RPC id) is caught
    by P5s: the stateless era asks for a new id."""
    ids: dict[str, int] = {}
    request = _stateless.StatelessSession._request

    async def replayed(self: Any, method: str, params: dict[str, Any], headers: Any = None) -> dict[str, Any]:
        if method == "tools/call":
            key = repr(sorted(params.items()))
            self._next_id = ids.setdefault(key, self._next_id)  # the same call, the same id
        return await request(self, method, params, headers)

    monkeypatch.setattr(_stateless.StatelessSession, "_request", replayed)
    counterexample = _check("P5s", "stateless")
    assert re.search(r"the server saw the (read|idempotent) call twice with JSON-RPC id \d+", counterexample)
    assert "stateless tools/call tool" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_taking_a_reset_for_a_request_never_sent_fails_p6(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that takes a connection reset for a request that never left reports a write the server ran before
    resetting the connection (ResetPeer) as a plain connection error, not an unknown outcome: P6 fails it (no
    Drop shows it: a dropped connection is another error of httpx2's)."""
    from collections.abc import Iterator

    import httpx2

    from mcp_testkit.bridge import _exchange
    from mcp_testkit.bridge._rpc import ConnectionLost

    original = _exchange.transport_errors

    @contextlib.contextmanager
    def reset_as_unsent() -> Iterator[None]:
        with original():
            try:
                yield
            except httpx2.ReadError:
                raise ConnectionLost("was reset, so taken for never sent", sent=False) from None

    monkeypatch.setattr(_exchange, "transport_errors", reset_as_unsent)
    monkeypatch.setattr(_handshake, "transport_errors", reset_as_unsent)
    counterexample = _check("P6")
    assert "ResetPeer(after_execution=True) at a write call surfaced as connection_error, not outcome_unknown" in (
        counterexample
    )
    assert _requests_in(counterexample) <= 10, counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_taking_a_header_mismatch_for_a_tool_error_fails_p6_in_the_stateless_era(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bridge that reports the server's -32020 (its own headers, as the server read them) as the tool's error
    is caught by P6 in the stateless era."""
    call = _link.ServerLink._call

    async def mismatch_as_tool_error(self: Any, tool: Any, arguments: Any) -> str:
        try:
            return await call(self, tool, arguments)
        except MCPConnectionError as error:
            if "HeaderMismatch (-32020)" in str(error):
                raise MCPToolError(self.config.name, f"tool {tool.bare_name!r} failed: -32020") from None
            raise

    monkeypatch.setattr(_link.ServerLink, "_call", mismatch_as_tool_error)
    counterexample = _check("P6", "stateless")
    assert "HeaderMismatch(header='Mcp-Method') at a read call surfaced as tool_error, not connection_error" in (
        counterexample
    )
    assert _requests_in(counterexample) <= 10, counterexample


# -- P6 ------------------------------------------------------------------------------------------------


def test_mutant_reporting_a_read_timeout_as_a_tool_error_fails_p6(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that reports a read that timed out as the tool's own error is caught by P6."""
    call = _link.ServerLink._call

    async def timeout_as_tool_error(self: Any, tool: Any, arguments: Any) -> str:
        try:
            return await call(self, tool, arguments)
        except MCPConnectionError as error:
            if tool.kind == "read" and "did not answer within" in str(error):
                raise MCPToolError(self.config.name, f"tool {tool.bare_name!r} failed: timeout") from None
            raise

    monkeypatch.setattr(_link.ServerLink, "_call", timeout_as_tool_error)
    counterexample = _check("P6")
    assert "LateAnswer(seconds=1.5) at a read call surfaced as tool_error, not connection_error or outcome_unknown" in (
        counterexample
    )
    assert _requests_in(counterexample) <= 10, counterexample


# -- P7 ------------------------------------------------------------------------------------------------


def test_mutant_rendering_an_error_two_ways_fails_p7(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose error text carries a per-call number renders one error result two ways; P7 fails it."""
    render = _link.render_result
    numbers = itertools.count(1)

    def numbered(result: Any) -> str:
        text = render(result)
        return f"{text} (error #{next(numbers)})" if result.is_error else text

    monkeypatch.setattr(_link, "render_result", numbered)
    counterexample = _check("P7")
    assert "the same result rendered two different ways" in counterexample
    assert "is_error=True" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


# -- P8 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_mutant_sending_a_declined_call_fails_p8(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    """A bridge whose decline still sends the paused call (a "decline" that only hides the answer) fails P8, in
    either era: approvals are the pool's, not the session's."""

    async def decline_that_sends(self: Any, token: str) -> None:
        tool, arguments = self._approvals.take(token)
        await self._run(tool, arguments)

    monkeypatch.setattr(_pool.ToolPool, "decline", decline_that_sends)
    counterexample = _check("P8", era)
    assert re.search(r"a declined approval reached the server \(#\d+\)", counterexample)
    assert "'decline'" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_reusing_an_approval_token_fails_p8(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose approval tokens are not single-use runs an approved call twice when approved twice."""

    def take_and_keep(self: Any, token: str) -> tuple[Any, dict[str, Any]]:
        pending = self._calls.get(token)
        if pending is None:
            raise KeyError("no call waits under this token")
        return pending.tool, pending.arguments

    monkeypatch.setattr(_approval.PendingApprovals, "take", take_and_keep)
    counterexample = _check("P8")
    assert "an approved call ran 2 times, not exactly once" in counterexample
    assert "'approve twice'" in counterexample
    assert _requests_in(counterexample) <= 20, counterexample


# -- P9 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_mutant_caching_without_the_credential_in_the_key_fails_p9(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    """A tool cache keyed by endpoint alone serves one credential's listing to another; P9 fails it, in either
    era: the cache is the pool's, not the session's."""
    key = _cache.cache_key
    monkeypatch.setattr(_pool, "cache_key", lambda config, credentials, transport: key(config, {}, transport))
    counterexample = _check("P9", era)
    assert "a cache hit served credential 'one''s listing to credential 'two'" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_caching_past_the_ttl_fails_p9(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool cache whose entries never expire hides a catalogue change past its TTL; P9 fails it."""

    def never_expires(cls: Any, key: Any) -> list[Any] | None:
        entry = cls._entries.get(key)
        return None if entry is None else list(entry[1])

    monkeypatch.setattr(ToolCache, "get", classmethod(never_expires))
    counterexample = _check("P9")
    assert re.search(
        r"a cache hit hid a catalogue change: it served a listing \d+ s old, past the TTL of 300 s", counterexample
    )
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_listing_again_but_offering_its_first_listing_fails_p9(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that lists the tools again when its cache expires but keeps offering the listing it read first
    fails P9: what it offers after a listing is judged, not that a tools/list went out."""
    first: dict[str, Any] = {}
    listing = _pool.ToolPool._listing

    async def keeps_its_first_listing(self: Any, link: Any, *, refresh: bool, from_cache: bool = True) -> Any:
        listed = await listing(self, link, refresh=refresh, from_cache=from_cache)
        if not self._cache:  # the stale listing is its cache's: a pool without one lists as ever (P0 holds)
            return listed
        return first.setdefault(repr(self._cache_key(link.config)), listed)

    monkeypatch.setattr(_pool.ToolPool, "_listing", keeps_its_first_listing)
    counterexample = _check("P9")
    assert "the bridge listed the tools again but offers another listing than the one it read" in counterexample
    assert _requests_in(counterexample) <= 12, counterexample


# -- P10 -----------------------------------------------------------------------------------------------


def test_mutant_never_telling_the_server_of_an_abandoned_call_fails_p10(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that drops an abandoned call without a word (no notifications/cancelled) fails P10 at once."""

    async def say_nothing(self: Any, request_id: int, method: str) -> None:
        return None

    monkeypatch.setattr(_rpc.RpcSession, "_abandoned", say_nothing)
    counterexample = _check("P10")
    assert "the bridge never told the server: no notifications/cancelled named the abandoned call" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_cancelling_the_wrong_request_fails_p10(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose notifications/cancelled names the next request id instead of the abandoned one fails P10."""
    cancelled = McpSession._cancelled

    async def off_by_one(self: Any, request_id: int, method: str) -> None:
        await cancelled(self, request_id + 1, method)

    monkeypatch.setattr(McpSession, "_cancelled", off_by_one)
    counterexample = _check("P10")
    assert re.search(r"notifications/cancelled named another request \(#\d+ requestId=(\d+) ", counterexample)
    assert "not the abandoned call (id " in counterexample


# -- P14 -----------------------------------------------------------------------------------------------


def test_mutant_ignoring_list_changed_fails_p14(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge deaf to notifications/tools/list_changed keeps the pages it read before the change; P14 fails it."""
    monkeypatch.setattr(_rpc, "LIST_CHANGED", "notifications/never-heard")
    counterexample = _check("P14")
    assert "the bridge offers tools the server no longer lists: list_changed during its listing" in counterexample
    assert "CatalogueChange" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


def test_mutant_caching_past_the_server_s_ttl_ms_fails_p14_in_the_stateless_era(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cache that keeps every listing for its own TTL, whatever the server's ttlMs, fails P14 in 2026-07-28."""
    put = ToolCache.put.__func__  # type: ignore[attr-defined]

    def ignoring_ttl_ms(cls: Any, key: Any, tools: list[Any], ttl_s: float | None = None) -> None:
        put(cls, key, tools)

    monkeypatch.setattr(ToolCache, "put", classmethod(ignoring_ttl_ms))
    counterexample = _check("P14", "stateless")
    assert "a cache hit served a listing past the server's ttlMs" in counterexample
    assert _requests_in(counterexample) <= 10, counterexample


@pytest.mark.parametrize(
    ("era", "stream", "request_line"),
    [
        ("stateless", "subscriptions/listen stream", "subscriptions/listen -> 200"),
        ("handshake", "GET stream", "GET -> 200"),
    ],
)
def test_mutant_deaf_to_its_change_stream_fails_p14(
    monkeypatch: pytest.MonkeyPatch, era: str, stream: str, request_line: str
) -> None:
    """A bridge that opens its change stream (2026-07-28's subscriptions/listen, the handshake's GET stream) but does
    nothing on list_changed keeps offering the tools it listed before the change; P14 fails it, naming the stream."""

    async def deaf(self: Any, link: Any) -> None:
        return None

    monkeypatch.setattr(_pool.ToolPool, "_changed", deaf)
    (result,) = run_contract(ReferenceBridgeAdapter, properties=["P14"], eras=[era], via="socket")
    assert result.status == "failed", result.counterexample
    assert f"notifications/tools/list_changed on the bridge's {stream}" in str(result.counterexample)
    assert request_line in str(result.counterexample)


def test_mutant_approving_against_the_cached_listing_fails_p14(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference bridge's old approval bug: the approval reads the cached listing and sends a removed tool."""
    listing = _pool.ToolPool._listing

    async def always_cached(self: Any, link: Any, *, refresh: bool, from_cache: bool = True) -> Any:
        return await listing(self, link, refresh=refresh)

    monkeypatch.setattr(_pool.ToolPool, "_listing", always_cached)
    counterexample = _check("P14")
    assert "an approval was checked against a stale listing: 'b', which the server no longer lists" in counterexample


# -- P18 -----------------------------------------------------------------------------------------------


def test_mutant_falling_back_on_any_refused_probe_fails_p18(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that takes every JSON-RPC error answering its probe for a handshake-era server's, -32022 included,
    falls back to initialize where the server offered only a version it does not speak; P18 fails it, naming the
    answer that did not allow the fallback. (It still holds where the server is of the handshake era.)"""
    monkeypatch.setattr(_stateless, "MODERN_CODES", frozenset())
    counterexample = _check("P18", "stateless")
    assert re.search(r"the bridge fell back to initialize \(#\d+\) although the probe's -32022 offered only "
                     r"2099-01-01, no handshake-era version", counterexample), counterexample
    assert _requests_in(counterexample) <= 6, counterexample


# -- P19 -----------------------------------------------------------------------------------------------


class _UndeclaredPerCall(PerCallReferenceAdapter):
    """The reference bridge with a session for every call, as langchain-mcp-adapters' default, but an adapter that
    does not say so: the contract takes its sessions for persistent."""

    name: ClassVar[str] = "undeclared-per-call"
    sessions = "persistent"


def test_mutant_opening_a_session_per_call_undeclared_fails_p19() -> None:
    """A bridge that opens a new session for every call, its adapter declaring none, sends a login and the whoami
    after it in two sessions: a server that keeps state in its session forgets the login. P19 fails it, naming the
    two sessions; the same bridge with its per-call sessions declared holds it, saying that the pass rests on that."""
    (result,) = run_contract(_UndeclaredPerCall, properties=["P19"], eras=["handshake"])
    assert result.status == "failed", result.counterexample
    counterexample = str(result.counterexample)
    assert re.search(r"the calls of one connection reached the server in 2 sessions: #\d+ login in session \w{8}, "
                     r"#\d+ whoami in session \w{8}", counterexample), counterexample
    assert _requests_in(counterexample) <= 14, counterexample  # the shortest: a login and a whoami, each its session
    (declared,) = run_contract(PerCallReferenceAdapter, properties=["P19"], eras=["handshake"])
    assert (declared.status, declared.mark) == ("passed", "holds (per-call sessions declared)")


# -- P11 -----------------------------------------------------------------------------------------------


class _WithoutTimeouts:
    """The bridge's `anyio` with `fail_after` doing nothing: the timeouts it configures are never applied."""

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)

    @staticmethod
    def fail_after(*args: Any, **kwargs: Any) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()


def test_mutant_without_a_timeout_fails_p11(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that declares timeouts but never applies them waits for good on a held call; P11 fails it, saying
    the call did not end within the declared waits."""
    monkeypatch.setattr(_link, "anyio", _WithoutTimeouts())
    counterexample = _check("P11")
    assert "did not end within the bridge's declared waits plus a margin" in counterexample


# -- P12 -----------------------------------------------------------------------------------------------


def test_mutant_taking_a_large_result_for_a_lost_connection_fails_p12(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge that takes an answer over its size limit for a broken reply (retried, then a connection error) is
    caught by P12: the result over the declared limit is not reported as its own error (a resent read even reports
    ok)."""

    class NeverRaised(Exception):
        """Stands in for the size error in the link's except clauses, so the generic wire-error path takes it."""

    monkeypatch.setattr(_link, "AnswerTooLarge", NeverRaised)
    counterexample = _check("P12")
    assert "a result over the declared limit was reported as " in counterexample


# -- P13 -----------------------------------------------------------------------------------------------


def test_mutant_failing_every_call_after_one_fault_fails_p13(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge whose session breaks for every call once one call failed (the `ClosedResourceError` family) is
    caught by P13: a call beside the faulted one fails because of it."""
    original = _pool.ToolPool._run

    async def breaking_run(self: Any, tool: Any, arguments: Any) -> str:
        if getattr(self, "_broken", False):
            raise MCPConnectionError(tool.server, "ClosedResourceError")
        try:
            text = await original(self, tool, arguments)
        except MCPBridgeError:
            self._broken = True
            raise
        if getattr(self, "_broken", False):
            raise MCPConnectionError(tool.server, "ClosedResourceError")
        return text

    monkeypatch.setattr(_pool.ToolPool, "_run", breaking_run)
    counterexample = _check("P13")
    assert re.search(r"failed because of a fault on call \d+|the call after the concurrent ones", counterexample)


# -- the unbroken bridge ---------------------------------------------------------------------------------


@pytest.mark.timeout(600)  # every property at 100 examples; P11 waits for the bridge's timeouts by design
@pytest.mark.parametrize(
    "factory",
    [ReferenceBridgeAdapter, PerCallReferenceAdapter],
    ids=["persistent-session", "session-per-call"],
)
def test_unbroken_reference_bridge_holds_every_property(factory: Any) -> None:
    """Under the same checks the reference bridge as shipped holds every property that applies to it, in both eras
    (P5 and P5s in their own): the mutants' failures are theirs. Used with a pool per call it cannot keep a paused
    call, so P8 does not apply there."""
    results = run_contract(factory)
    facts = BridgeFacts.of(factory())
    lacking = {
        pid
        for pid, prop in PROPERTIES.items()
        if prop.requires not in (None, *factory.capabilities) or (prop.needs is not None and prop.needs(facts))
    }
    assert lacking == ({"P8", "P13"} if factory is PerCallReferenceAdapter else set())
    assert [(r.property_id, r.era, r.status) for r in results] == [
        (pid, era, "passed" if era in prop.eras and pid not in lacking else "not_applicable")
        for era in ("handshake", "stateless")
        for pid, prop in PROPERTIES.items()
    ], [r.counterexample for r in results if r.failed or r.error]


def test_every_property_has_a_mutant() -> None:
    """This file keeps a mutant for each property of the contract."""
    caught = {name.split("_fails_")[1].split("_in_")[0] for name in globals() if name.startswith("test_mutant_")}
    assert caught == {pid.lower() for pid in PROPERTIES}


# -- P15 -----------------------------------------------------------------------------------------------


def _giving_up_after_the_first_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge's OAuth authorizes once, then sends every request with the token it holds and hands a 401 back as
    it came: the refresh "never attempted" that bridge users report."""
    from mcp_testkit.bridge import _oauth

    original = _oauth._NamedFailures.async_auth_flow

    async def flow(self: Any, request: Any) -> Any:
        if getattr(self, "authorized", False):
            held = self._provider.async_auth_flow(request)
            try:
                yield await held.__anext__()  # the request with the token held; whatever comes back is the caller's
            finally:
                await held.aclose()
            return
        inner = original(self, request)
        outgoing = await inner.__anext__()
        while True:
            response = yield outgoing
            if response.status_code < 400 and outgoing.url == request.url:
                self.authorized = True
            try:
                outgoing = await inner.asend(response)
            except StopAsyncIteration:
                return

    monkeypatch.setattr(_oauth._NamedFailures, "async_auth_flow", flow)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_mutant_never_refreshing_fails_p15(monkeypatch: pytest.MonkeyPatch, era: str) -> None:
    """A bridge whose OAuth never refreshes: its token expires mid-session and the call is an auth error. P15 fails it
    on its first declared case, saying that no new token was had and the call was not sent again."""
    _giving_up_after_the_first_token(monkeypatch)
    counterexample = _check("P15", era)
    assert "after the 401 the bridge did not send the refused call again (no new token was had)" in counterexample
    assert "refusal='expired'" in counterexample
    assert re.search(r"calls sent: #\d+ with token 1 -> 401$", counterexample, re.M), counterexample
