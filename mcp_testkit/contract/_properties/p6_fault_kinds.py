"""P6: each fault surfaces as its own kind of error; `expected_kinds` is its table, one row per fault class."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit.contract._properties._example_steps import place, tool
from mcp_testkit.contract._properties._fault_sets import (
    BYTE_CALL_CASES,
    CALL_KINDS,
    LISTING_CASES,
    by_class,
    call_faults,
    fault_label,
    legal_in,
    may_end_listing,
)
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, OutcomeKind
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY", "expected_kinds"]

Kinds = frozenset["OutcomeKind"]


def _kinds(*kinds: OutcomeKind) -> Callable[[Any, str, str], Kinds]:
    """A row whose kinds depend on neither the fault's fields, the call kind nor the era."""
    chosen: Kinds = frozenset(kinds)
    return lambda fault, kind, era: chosen


def _reached(kind: str) -> Kinds:
    """The request reached the server, which may have run it: a write's outcome is unknown."""
    return frozenset({"outcome_unknown"}) if kind == "write" else frozenset({"connection_error", "outcome_unknown"})


_BARE_404: dict[str, Kinds] = {
    # The server answered 404: it no longer knew the session, so it ran nothing.
    HANDSHAKE: frozenset({"connection_error"}),
    # No session to lose: a bare 404 says the request was not taken, yet no session rule makes it certain.
    STATELESS: frozenset({"connection_error", "outcome_unknown"}),
}
"""What a call answered a bare 404 may end as, in each era."""


def _http_status(fault: Any, kind: str, era: str) -> Kinds:
    return _BARE_404[era] if fault.status == 404 else _reached(kind)


def _era_downgrade(fault: Any, kind: str, era: str) -> Kinds:
    # Refused as a handshake-era server refuses (400, no answer to the request): a read may recover by
    # falling back to the handshake; a write's outcome is unknown, as after any bare 400.
    if kind == "write":
        return frozenset({"outcome_unknown"})
    return frozenset({"ok", "connection_error", "outcome_unknown"})


def _break_stream(fault: Any, kind: str, era: str) -> Kinds:
    # Cut after the answer's event: the bridge has its answer. Cut before any: no event id to resume from.
    return frozenset({"ok"}) if fault.after_events >= 1 else _reached(kind)


def _restart(fault: Any, kind: str, era: str) -> Kinds:
    # Unknown sessions answered 404 after the restart: the server no longer knew the session, so it ran nothing.
    return frozenset({"connection_error"}) if fault.unknown_session_status == 404 else _reached(kind)


_AT_CALL: dict[type[faults.Fault], Callable[[Any, str, str], Kinds]] = {
    faults.ErrorResult: _kinds("tool_error"),
    faults.ProtocolError: _kinds("tool_error"),
    faults.Delay: _kinds("ok"),
    # Every byte of the answer arrives, late, paced, in pieces or before a late close: nothing to report.
    faults.Latency: _kinds("ok"),
    faults.Bandwidth: _kinds("ok"),
    faults.Slice: _kinds("ok"),
    faults.SlowClose: _kinds("ok"),
    # -32020 again after listing the tools again and resending once, or -32022 again after renegotiating
    # once: refused before it ran, and no further resend helps.
    faults.HeaderMismatch: _kinds("connection_error"),
    faults.UnsupportedVersion: _kinds("connection_error"),
    # -32021: this request needs a capability the client lacks; nothing ran, and no resend helps.
    faults.MissingCapability: _kinds("tool_error", "connection_error"),
    faults.EraDowngrade: _era_downgrade,
    faults.LoseSession: _kinds("connection_error"),
    faults.Restart: _restart,
    faults.BreakStream: _break_stream,
    faults.HttpStatus: _http_status,
}
"""What a careful bridge may report for a fault met on every attempt of a call, by the fault's class; a class
without a row reached the server, which may have run the call (`_reached`)."""

_REFUSES_CREDENTIAL: dict[type[faults.Fault], Callable[[Any], bool]] = {
    faults.HttpStatus: lambda fault: fault.status in (401, 403),
}
"""The faults that refuse the bridge's credential, wherever they hit: an `auth_error`."""


def expected_kinds(where: str, kind: str, fault: faults.Fault, era: str = HANDSHAKE) -> frozenset[OutcomeKind]:
    """The outcome kinds a careful bridge may report for `fault` met on every attempt (the table of P6).

    `where` is "call" (the fault hits every `tools/call` of a tool of call kind `kind`) or the method
    of a connect it hits ("initialize", "server/discover" or "tools/list"); `era` the era checked.
    At `server/discover` a bridge that falls back to the handshake era may also connect (`ok`, which
    the check of P6 accepts only with the fallback in the journal), but never after a 401 or 403.
    """
    refuses = by_class(_REFUSES_CREDENTIAL, fault)
    if refuses is not None and refuses(fault):
        return frozenset({"auth_error"})
    if where != "call":
        if legal_in(era, fault):
            return frozenset({"ok"})
        if fault.connect_may_succeed:
            # What the bridge read is a whole catalogue (a slow page, a change notice, a change between pages).
            return frozenset({"ok", "connection_error"})
        # A page the bridge may take for the last (an empty cursor in the handshake era): a whole listing, or none.
        return frozenset({"ok", "connection_error"}) if may_end_listing(era, fault) else frozenset({"connection_error"})
    row = by_class(_AT_CALL, fault)
    return row(fault, kind, era) if row is not None else _reached(kind)


_OPENINGS: dict[str, tuple[str, tuple[faults.Fault, ...]]] = {
    HANDSHAKE: ("initialize", ()),
    STATELESS: ("server/discover", (faults.DiscoverError(),)),
}
"""The first request of a connect in each era, and the faults at connect that only it meets."""


def _connect_faults(era: str) -> list[tuple[str, faults.Fault]]:
    """Faults at connect: on its first request (`initialize`, or the probe of the stateless era), then the listing."""
    opening, own = _OPENINGS[era]
    return [
        (opening, faults.HttpStatus(401)),
        (opening, faults.HttpStatus(403)),
        (opening, faults.HttpStatus(500)),
        (opening, faults.HttpStatus(503)),
        (opening, faults.ProtocolError(-32603, "scripted failure")),
        (opening, faults.Drop()),
        *((opening, fault) for fault in own),
        ("tools/list", faults.HttpStatus(401)),
        *(("tools/list", fault) for fault in LISTING_CASES),
    ]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = [
        {"case": ("call", kind, fault)} for fault in call_faults(facts, auth=True) for kind in CALL_KINDS
    ]
    cases += [{"case": ("call", kind, fault)} for kind, fault in BYTE_CALL_CASES]
    cases += [{"case": (where, "-", fault)} for where, fault in _connect_faults(facts.era)]
    return cases


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    calls = st.tuples(st.just("call"), st.sampled_from(CALL_KINDS), mst.call_faults(era=facts.era))
    opening, _ = _OPENINGS[facts.era]
    connects = st.tuples(
        st.just("tools/list"), st.just("-"), mst.listing_faults(max_page=3, detectable_only=True)
    ) | st.tuples(
        st.just(opening), st.just("-"), st.builds(faults.HttpStatus, st.sampled_from([401, 403, 429, 500, 503]))
    )
    return {"case": calls | connects}


def _labels(inputs: Inputs) -> list[str]:
    where, kind, fault = inputs["case"]
    return [kind if where == "call" else f"at {where}", fault_label(fault)]


def _fell_back(h: ContractHarness) -> bool:
    """Whether the bridge answered a refused probe by the handshake: an `initialize` the server accepted."""
    return any(r.rpc_method == "initialize" and r.status == 200 for r in h.server.journal)


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    where, kind, fault = inputs["case"]
    server = h.server
    expected = expected_kinds(where, kind, fault, facts.era)
    if where == "call":
        tool(server, "tool", kind)
        await h.connect(adapter)
        place(server, fault, method="tools/call", tool="tool", times=None)
        outcome = await adapter.call("tool", {})
    else:
        server.page_size = 1
        for name in ("a", "b", "c"):
            server.tool(name, returns="ok")
        server.inject(fault, method=where, times=None)
        outcome = await adapter.connect(h.url, {})
        if where == "server/discover" and outcome.kind == "ok" and "auth_error" not in expected and _fell_back(h):
            return  # the probe failed and the bridge fell back to the handshake era: the spec's way on
    if outcome.kind not in expected:
        wanted = " or ".join(sorted(expected))
        at = f"a {kind} call" if where == "call" else f"connect ({where})"
        raise h.fail(f"{fault!r} at {at} surfaced as {outcome.kind}, not {wanted}", outcome=outcome)


PROPERTY = Property(
    "P6",
    "Each fault surfaces as its own kind of error",
    "each_fault_its_own_error",
    "reads, idempotent writes and writes; every call fault class on every attempt; faults at connect",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee="Each fault surfaces as its own kind of error, as [the table below](#what-p6-expects) says.",
    breaks='one generic error for everything, so the application cannot tell "the tool said no" from "it may have run"',
)
