"""The properties P1-P9 and P5s: for each, the inputs it draws, the cases it declares (every fault class
and call kind it covers, run before any random draw), the eras and adapter capability it needs, and the
check of one example.

Every property runs in both protocol eras but P5 (sessions: the handshake era only) and P5s, which
replaces it in the stateless era (2026-07-28). The faults of an era are the ones that mean something
there: no session faults in the stateless era, and its own refusals (-32020, -32021, -32022) instead.
P8 and P9 are about the bridge's pool (approval gates, the tool cache), not its sessions: they run in
both eras, and only for bridges whose adapter declares the capability they need."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit._eras import ERAS, HANDSHAKE, STATELESS

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, OutcomeKind
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["CALL_KINDS", "PROPERTIES", "Property", "expected_kinds", "fault_label", "late_answer", "legal_in", "place"]

CALL_KINDS = ("read", "idempotent", "write")
"""How a tool is called: a read (`readOnlyHint`), an idempotent write (`idempotentHint`), a write (no hints)."""

_TOKEN_ONE = "Bearer contract-one"
_TOKEN_TWO = "Bearer contract-two"

Inputs = dict[str, Any]
Check = Callable[["ContractHarness", "BridgeAdapter", "BridgeFacts", Inputs], Awaitable[None]]


@dataclass(frozen=True)
class Property:
    """A resilience property: its id and title, what it covers, its inputs and how to check one example.

    `cases(facts)` are the declared examples, run first and in order (simplest first); `strategies(facts)`
    the keyword strategies of the random draws after them; `labels(inputs)` the fault classes and call
    kinds an example exercises, counted in the report's coverage line. `facts.era` is the era being
    checked; `eras` the eras the property applies to (elsewhere its verdict is "not applicable").
    """

    property_id: str
    title: str
    name: str
    covers: str
    strategies: Callable[[BridgeFacts], dict[str, SearchStrategy[Any]]]
    cases: Callable[[BridgeFacts], list[Inputs]]
    labels: Callable[[Inputs], list[str]]
    check: Check
    eras: tuple[str, ...] = ERAS
    requires: str | None = None
    """The adapter capability the property needs ("approvals", "tool_cache"); without it, not applicable."""


# -- faults, by class ------------------------------------------------------------------------------


def late_answer(timeout_s: float) -> faults.LateAnswer:
    """The answer of a call that ran, sent well after a client waiting `timeout_s` has given up."""
    return faults.LateAnswer(round(timeout_s * 2 + 0.5, 3))


def fault_label(fault: faults.Fault) -> str:
    """The fault's class as the coverage line counts it: `Drop()`, `Drop(after_execution=True)`, `HttpStatus(503)`."""
    if isinstance(fault, faults.Drop):
        return "Drop(after_execution=True)" if fault.after_execution else "Drop()"
    if isinstance(fault, faults.HttpStatus):
        return f"HttpStatus({fault.status})"
    if isinstance(fault, faults.Restart):
        return f"Restart({fault.unknown_session_status})"
    return type(fault).__name__


_SESSION_FAULTS = (faults.LoseSession, faults.Restart)
_STATELESS_CALL_FAULTS: tuple[faults.Fault, ...] = (
    faults.HeaderMismatch(),
    faults.UnsupportedVersion(),
    faults.MissingCapability(),
    faults.EraDowngrade(),
)
"""The stateless era's own refusals of a call: a -32020 (the bridge's mirrored headers, as the server
reads them; a careful bridge lists again and resends once), a -32022 offering the server's versions
(renegotiated once), a -32021, and a half-upgraded deployment that refuses stateless requests as a
handshake-era server does."""


def legal_in(era: str, fault: faults.Fault) -> bool:
    """Whether `fault` is no fault at all in `era`: an empty-string cursor is a legal page of 2026-07-28."""
    return era == STATELESS and isinstance(fault, faults.EmptyCursor)


def _call_faults(facts: BridgeFacts, *, auth: bool) -> list[faults.Fault]:
    """One fault of every class a `tools/call` can meet in the era checked, simplest first."""
    chosen: list[faults.Fault] = [
        faults.ErrorResult("scripted tool error"),
        faults.ProtocolError(-32603, "scripted failure"),
        faults.Delay(0.001),
        faults.Drop(),
        faults.Drop(after_execution=True),
        faults.TruncateBody(),
        faults.EndStream(),
        faults.MalformedSse(),
        faults.Accepted(),
        faults.WrongContentType("text/html"),
        faults.LoseSession(),
        faults.Restart(),
        faults.Restart(unknown_session_status=400),
        faults.HttpStatus(400),
        faults.HttpStatus(404),
        faults.HttpStatus(429),
        faults.HttpStatus(500),
        faults.HttpStatus(503),
    ]
    if auth:
        chosen += [faults.HttpStatus(401), faults.HttpStatus(403)]
    if facts.timeout_s is not None:
        chosen.append(late_answer(facts.timeout_s))
    if facts.era == STATELESS:
        chosen = [fault for fault in chosen if not isinstance(fault, _SESSION_FAULTS)]
        chosen += _STATELESS_CALL_FAULTS
    return chosen


def _transient_faults(facts: BridgeFacts) -> list[faults.Fault]:
    """What a resilient bridge resends a read after: lost connections, lost sessions (in the handshake
    era), and timeouts."""
    chosen: list[faults.Fault] = [
        faults.Drop(),
        faults.Drop(after_execution=True),
        faults.EndStream(),
        faults.LoseSession(),
        faults.Restart(),
        faults.Restart(unknown_session_status=400),
    ]
    if facts.era == STATELESS:
        chosen = [fault for fault in chosen if not isinstance(fault, _SESSION_FAULTS)]
    if facts.timeout_s is not None:
        chosen.append(late_answer(facts.timeout_s))
    return chosen


def _tool(server: Any, name: str, kind: str, returns: Any = "ok") -> None:
    """A tool of call kind `kind` (read, idempotent or write) named `name`."""
    server.tool(
        name,
        description=f"a {kind}",
        read_only=True if kind == "read" else None,
        idempotent=True if kind == "idempotent" else None,
        returns=returns,
    )


async def _calls_first(h: ContractHarness, adapter: BridgeAdapter, count: int, before: str, facts_: Any) -> None:
    """`count` calls of "tool" before the fault, each of which must be `ok`, or the example fails saying which."""
    for number in range(1, count + 1):
        outcome = await adapter.call("tool", {})
        if outcome.kind != "ok":
            raise h.fail(f"call {number}, {before}, failed", **facts_, outcome=outcome)


def place(server: Any, fault: faults.Fault, **rule: Any) -> None:
    """Inject `fault`; a fault of one era only hits requests of that era (a bridge may change eras mid-example)."""
    era = fault.eras[0] if len(fault.eras) == 1 else None
    server.inject(fault, **rule, **({"era": era} if era is not None else {}))


def _inject(server: Any, rules: Iterable[faults.Rule]) -> None:
    for rule in rules:
        place(server, rule.fault, method=rule.method, tool=rule.tool, nth=rule.nth, times=rule.times)


# -- P1 --------------------------------------------------------------------------------------------

_LISTING_CASES: list[faults.Fault] = [
    faults.DuplicateTool(1),
    faults.DuplicateTool(2),
    faults.RepeatCursor(2),
    faults.StuckCursor(1),
    faults.EmptyCursor(1),
    faults.PageError(1),
    faults.PageError(2),
    faults.MalformedPage(2),
    faults.InvalidCursor(2),
    faults.EndlessPages(),
]


def _p1_cases(facts: BridgeFacts) -> list[Inputs]:
    three = ["a", "b", "c"]
    cases: list[Inputs] = [{"names": three, "page_size": 1, "listing_faults": []}]
    cases += [{"names": three, "page_size": 1, "listing_faults": [fault]} for fault in _LISTING_CASES]
    if facts.page_limit is not None:
        # Exactly as many pages as the limit: a whole listing the bridge must load.
        cases.append({"names": [f"t{i}" for i in range(facts.page_limit)], "page_size": 1, "listing_faults": []})
    return cases


# Valid names that are easy to get wrong: dots, dashes, underscores, digits first, case, the longest allowed.
_P1_NAMES = ("t0", "a.b", "x-y", "_z", "9n", "T", "t", "A.b-c_d", "get_user.v2", "n" * 128)

# Every detectable listing fault on pages 1-4 but EndlessPages, which has no parameter: its declared case
# says all it can, and drawn again it would cost a whole page limit per example.
_P1_DRAWN: tuple[faults.Fault, ...] = (
    *(faults.RepeatCursor(page) for page in (2, 3, 4)),
    *(kind(page) for kind in (faults.StuckCursor, faults.EmptyCursor, faults.DuplicateTool) for page in (1, 2, 3, 4)),
    *(kind(page) for kind in (faults.PageError, faults.MalformedPage) for page in (1, 2, 3, 4)),
    *(faults.InvalidCursor(page) for page in (2, 3, 4)),
)


def _p1_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Drawn from fixed values rather than built field by field: P1 is about the walk, and its examples must be cheap.
    return {
        "names": st.integers(0, len(_P1_NAMES)).map(lambda count: list(_P1_NAMES[:count])),
        "page_size": st.integers(1, 4),
        "listing_faults": st.lists(st.sampled_from(_P1_DRAWN), max_size=2),
    }


def _p1_labels(inputs: Inputs) -> list[str]:
    return [fault_label(f) for f in inputs["listing_faults"]] or ["no fault"]


async def _p1(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    names, page_size = inputs["names"], inputs["page_size"]
    server = h.server
    server.page_size = page_size
    for name in names:
        server.tool(name, returns="ok")
    for fault in inputs["listing_faults"]:
        server.inject(fault)
    outcome = await adapter.connect(h.url, {})
    loaded = await adapter.list_tools() if outcome.kind == "ok" else []
    pages = len(server.journal.requests("tools/list"))
    shown = names if len(names) <= 12 else [*names[:12], f"... {len(names) - 12} more"]
    facts_ = {"catalogue": shown, "page_size": page_size, "outcome": outcome, "loaded": len(loaded)}
    if facts.page_limit is not None and pages > facts.page_limit:
        raise h.fail(f"the bridge read {pages} pages, beyond its limit of {facts.page_limit}", **facts_)
    served = list(server.tools)  # the generated names, and a recorded catalogue's on a replay
    if outcome.kind == "ok" and sorted(loaded) != sorted(served):
        missing = sorted(set(served) - set(loaded))
        extra = sorted({n for n in loaded if loaded.count(n) > 1 or n not in served})
        raise h.fail(f"the bridge loaded a wrong tool set (missing {missing}, extra {extra})", **facts_)
    # A server's own catalogue (a replay's) may take the listing past the page limit: failing it whole is right.
    fits = facts.page_limit is None or -(-max(len(served), 1) // page_size) <= facts.page_limit
    if outcome.kind != "ok" and fits and all(legal_in(facts.era, fault) for fault in h.fired()):
        legal = " (an empty-string cursor is a legal page in the stateless era)" if h.fired() else ""
        raise h.fail(f"the listing failed although no fault fired{legal}", **facts_)


# -- P2 --------------------------------------------------------------------------------------------


def _write_rule(fault: faults.Fault, nth: int = 1) -> faults.Rule:
    return faults.Rule(fault, method="tools/call", tool="write", nth=nth)


def _p2_cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = [{"schedule": [_write_rule(f)], "calls": 1} for f in _call_faults(facts, auth=False)]
    # A fault on the first of two calls: the second must neither repeat the first nor be lost in its wake.
    cases.append({"schedule": [_write_rule(faults.Drop(after_execution=True))], "calls": 2})
    if facts.timeout_s is not None:
        cases.append({"schedule": [_write_rule(late_answer(facts.timeout_s))], "calls": 2})
    return cases


def _p2_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Late answers run as declared cases only: each one costs the adapter's whole timeout.
    return {
        "schedule": mst.fault_schedules(faults=mst.call_faults(auth=False, era=facts.era), tools=["write"], max_size=3),
        "calls": st.integers(1, 3),
    }


def _p2_labels(inputs: Inputs) -> list[str]:
    return [fault_label(rule.fault) for rule in inputs["schedule"]] or ["no fault"]


async def _p2(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    _tool(server, "write", "write", returns="written")
    await h.connect(adapter)
    _inject(server, inputs["schedule"])
    for index in range(inputs["calls"]):
        before = server.executions("write")
        outcome = await adapter.call("write", {"n": index})
        ran = server.executions("write") - before
        facts_ = {"call": index + 1, "outcome": outcome, "handler runs": ran}
        if ran > 1:
            raise h.fail(f"a write ran {ran} times for one call", **facts_)
        if outcome.kind == "ok" and ran != 1:
            raise h.fail("the bridge reported success for a write that did not run", **facts_)


# -- P3 --------------------------------------------------------------------------------------------


def _p3_cases(facts: BridgeFacts) -> list[Inputs]:
    within = max(facts.retry, 1)
    cases: list[Inputs] = []
    for kind in ("read", "idempotent"):
        cases += [{"kind": kind, "transient": [f] * within} for f in _transient_faults(facts)]
        # One more than the budget, each of which ran the handler: the runs must stop at 1 + retry.
        cases.append({"kind": kind, "transient": [faults.Drop(after_execution=True)] * (facts.retry + 1)})
    return cases


def _p3_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "kind": st.sampled_from(["read", "idempotent"]),
        "transient": st.lists(mst.call_faults(transient_only=True, era=facts.era), max_size=facts.retry + 1),
    }


def _p3_labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], *(fault_label(f) for f in inputs["transient"])]


async def _p3(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    kind, transient = inputs["kind"], inputs["transient"]
    server = h.server
    _tool(server, "read", kind, returns="read")
    await h.connect(adapter)
    for fault in transient:
        place(server, fault, method="tools/call", tool="read")
    outcome = await adapter.call("read", {})
    runs = server.executions("read")
    facts_ = {"retry budget": facts.retry, "outcome": outcome, "handler runs": runs}
    if runs > 1 + facts.retry:
        raise h.fail(f"a {kind} call ran {runs} times, more than 1 + retry", **facts_)
    if len(transient) <= facts.retry and outcome.kind != "ok":
        raise h.fail(f"a {kind} call failed after {len(transient)} transient faults, within its budget", **facts_)


# -- P4 --------------------------------------------------------------------------------------------

_AUTH_WORK = ("initialize", "server/discover", "tools/list", "tools/call")


def _p4_cases(facts: BridgeFacts) -> list[Inputs]:
    return [
        {"status": status, "kind": kind, "via": via, "calls_before": 0}
        for via, status, kind in itertools.product(("fault", "rotation"), (401, 403), CALL_KINDS)
    ]


def _p4_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "status": st.sampled_from([401, 403]),
        "kind": st.sampled_from(CALL_KINDS),
        "via": st.sampled_from(["fault", "rotation"]),
        "calls_before": st.integers(0, 2),
    }


def _p4_labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], f"{inputs['status']} by {inputs['via']}"]


async def _p4(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    status, kind, via = inputs["status"], inputs["kind"], inputs["via"]
    server = h.server
    server.require_header("Authorization", _TOKEN_ONE, status=status)
    _tool(server, "tool", kind)
    await h.connect(adapter, {"Authorization": _TOKEN_ONE})
    facts_: dict[str, Any] = {"status": status, "kind": kind, "via": via}
    await _calls_first(h, adapter, inputs["calls_before"], "before any refusal", facts_)
    mark = len(server.journal)
    if via == "fault":
        server.inject(faults.HttpStatus(status, headers={"WWW-Authenticate": "Bearer"}), tool="tool")
    else:
        server.rotate_header("Authorization", _TOKEN_TWO)
    outcome = await adapter.call("tool", {})
    facts_["outcome"] = outcome
    sent = server.journal.records[mark:]
    refused = next((r for r in sent if r.status == status), None)
    if refused is None:
        raise h.fail(f"the call met no HTTP {status}: the bridge sent no request for it", **facts_)
    again = [
        r
        for r in sent
        if r.seq > refused.seq and r.rpc_method in _AUTH_WORK and r.headers.get("authorization") == _TOKEN_ONE
    ]
    if again:
        listed = ", ".join(f"#{r.seq} {r.rpc_method}" for r in again)
        raise h.fail(
            f"after HTTP {status} the bridge re-attempted the work {len(again)} times with the refused credential "
            f"({listed})",
            **facts_,
        )
    if outcome.kind != "auth_error":
        raise h.fail(f"HTTP {status} surfaced as {outcome.kind}, not auth_error", **facts_)
    if via == "fault":
        server.rotate_header("Authorization", _TOKEN_TWO)
    adapter.set_headers({"Authorization": _TOKEN_TWO})
    mark = len(server.journal)
    outcome = await adapter.call("tool", {})
    stale = [r for r in server.journal.records[mark:] if r.headers.get("authorization") != _TOKEN_TWO]
    if stale:
        listed = ", ".join(f"#{r.seq} {r.rpc_method or r.http_method}" for r in stale)
        raise h.fail(f"after the rotation the bridge sent stale credentials ({listed})", **facts_)
    if outcome.kind != "ok":
        raise h.fail("the next call with fresh credentials failed", **facts_, next_outcome=outcome)


# -- P5 --------------------------------------------------------------------------------------------

_LOSSES = ("fault", "lose_session", "restart")


def _p5_cases(facts: BridgeFacts) -> list[Inputs]:
    return [{"how": how, "kind": kind, "calls_before": 0} for how, kind in itertools.product(_LOSSES, CALL_KINDS)]


def _calls_after(key: str, ways: Sequence[Any]) -> dict[str, SearchStrategy[Any]]:
    """The draws of P5 and P5s: one way of losing the answer, a call kind, and up to two calls before it."""
    return {key: st.sampled_from(ways), "kind": st.sampled_from(CALL_KINDS), "calls_before": st.integers(0, 2)}


def _p5_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return _calls_after("how", _LOSSES)


def _p5_labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], inputs["how"]]


async def _p5(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    how, kind = inputs["how"], inputs["kind"]
    server = h.server
    _tool(server, "tool", kind)
    await h.connect(adapter)
    facts_: dict[str, Any] = {"how": how, "kind": kind}
    await _calls_first(h, adapter, inputs["calls_before"], "before the session was lost", facts_)
    ran_before = server.executions("tool")
    stale = {session.id for session in server.sessions}
    if how == "fault":
        server.inject(faults.LoseSession(), method="tools/call", tool="tool")
    elif how == "lose_session":
        if server.sessions.alive:
            server.lose_session()
        else:
            facts_["sessions"] = "the bridge holds no session between calls: none to lose"
    else:
        server.restart(unknown_session_status=404)
    mark = len(server.journal)
    outcome = await adapter.call("tool", {})
    sent = server.journal.records[mark:]
    runs = server.executions("tool") - ran_before
    facts_.update(outcome=outcome, runs=runs)
    reused = [r for r in sent if r.rpc_method == "initialize" and r.headers.get("mcp-session-id") in stale]
    if reused:
        stale_id = str(reused[0].headers.get("mcp-session-id"))[:8]
        raise h.fail(f"the new initialize (#{reused[0].seq}) carried the stale session id {stale_id}", **facts_)
    lost = next((r for r in sent if r.status == 404), None)
    if lost is not None and not any(r.rpc_method == "initialize" and r.seq > lost.seq for r in sent):
        raise h.fail(f"after the 404 (#{lost.seq}) the bridge did not start a new session", **facts_)
    if outcome.kind != "ok" or runs != 1:
        raise h.fail("the call was not sent once more on a new session", **facts_)


# -- P5s (the stateless era's P5) ------------------------------------------------------------------

_BROKEN_STREAMS: tuple[faults.Fault, ...] = (
    faults.EndStream(),
    faults.Drop(),
    faults.Drop(after_execution=True),
    faults.TruncateBody(),
)
"""What breaks a call's response stream: it ends early, the connection drops (before or after the tool
ran), or the body is cut in the middle of the answer's event."""


def _p5s_cases(facts: BridgeFacts) -> list[Inputs]:
    return [
        {"broken_by": fault, "kind": kind, "calls_before": 0}
        for kind, fault in itertools.product(CALL_KINDS, _BROKEN_STREAMS)
    ]


def _p5s_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return _calls_after("broken_by", _BROKEN_STREAMS)


def _p5s_labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], fault_label(inputs["broken_by"])]


async def _p5s(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    fault, kind = inputs["broken_by"], inputs["kind"]
    server = h.server
    server.response_mode = "sse"  # the call's answer travels on a response stream of its own
    _tool(server, "tool", kind)
    await h.connect(adapter)
    facts_: dict[str, Any] = {"broken by": fault, "kind": kind}
    await _calls_first(h, adapter, inputs["calls_before"], "before the stream broke", facts_)
    ran_before = server.executions("tool")
    mark = len(server.journal)
    server.inject(fault, method="tools/call", tool="tool")
    outcome = await adapter.call("tool", {})
    sent = [r for r in server.journal.records[mark:] if r.rpc_method == "tools/call" and r.tool == "tool"]
    facts_.update(outcome=outcome, runs=server.executions("tool") - ran_before, sent=len(sent))
    if kind == "write":
        if len(sent) > 1:
            raise h.fail(f"the bridge re-issued a write after a broken stream ({len(sent)} requests)", **facts_)
        if outcome.kind != "outcome_unknown":
            raise h.fail(f"a write whose stream broke surfaced as {outcome.kind}, not outcome_unknown", **facts_)
        return
    if len(sent) != 2:
        again = "did not re-issue it" if len(sent) < 2 else f"sent it {len(sent)} times"
        raise h.fail(f"after the broken stream of a {kind} call the bridge {again}, not once more", **facts_)
    if sent[0].rpc_id == sent[1].rpc_id:
        raise h.fail(f"the {kind} call was re-issued with the same JSON-RPC id {sent[1].rpc_id!r}", **facts_)
    if outcome.kind != "ok":
        raise h.fail(f"the re-issued {kind} call surfaced as {outcome.kind}, not ok", **facts_)


# -- P6 --------------------------------------------------------------------------------------------

_NOT_RUN = (faults.LoseSession,)
_REFUSED_BEFORE_RUNNING = (faults.HeaderMismatch, faults.UnsupportedVersion)


def expected_kinds(where: str, kind: str, fault: faults.Fault, era: str = HANDSHAKE) -> frozenset[OutcomeKind]:
    """The outcome kinds a careful bridge may report for `fault` met on every attempt (the table of P6).

    `where` is "call" (the fault hits every `tools/call` of a tool of call kind `kind`) or the method
    of a connect it hits ("initialize", "server/discover" or "tools/list"); `era` the era checked.
    At `server/discover` a bridge that falls back to the handshake era may also connect (`ok`, which
    the check of P6 accepts only with the fallback in the journal), but never after a 401 or 403.
    """
    status = fault.status if isinstance(fault, faults.HttpStatus) else None
    if status in (401, 403):
        return frozenset({"auth_error"})
    if where != "call":
        return frozenset({"ok"}) if legal_in(era, fault) else frozenset({"connection_error"})
    if isinstance(fault, (faults.ErrorResult, faults.ProtocolError)):
        return frozenset({"tool_error"})
    if isinstance(fault, faults.Delay):
        return frozenset({"ok"})
    if isinstance(fault, _REFUSED_BEFORE_RUNNING):
        # -32020 again after listing the tools again and resending once, or -32022 again after renegotiating
        # once: refused before it ran, and no further resend helps.
        return frozenset({"connection_error"})
    if isinstance(fault, faults.MissingCapability):
        # -32021: this request needs a capability the client lacks; nothing ran, and no resend helps.
        return frozenset({"tool_error", "connection_error"})
    if isinstance(fault, faults.EraDowngrade):
        # Refused as a handshake-era server refuses (400, no answer to the request): a read may recover by
        # falling back to the handshake; a write's outcome is unknown, as after any bare 400.
        return frozenset({"outcome_unknown"}) if kind == "write" else frozenset(
            {"ok", "connection_error", "outcome_unknown"}
        )
    if status == 404 and era == STATELESS:
        # No session to lose: a bare 404 says the request was not taken, yet no session rule makes it certain.
        return frozenset({"connection_error", "outcome_unknown"})
    if (
        status == 404
        or isinstance(fault, _NOT_RUN)
        or (isinstance(fault, faults.Restart) and fault.unknown_session_status == 404)
    ):
        # The server answered 404: it no longer knew the session, so it ran nothing.
        return frozenset({"connection_error"})
    # The request reached the server, which may have run it: a write's outcome is unknown.
    return frozenset({"outcome_unknown"}) if kind == "write" else frozenset({"connection_error", "outcome_unknown"})


def _connect_faults(era: str) -> list[tuple[str, faults.Fault]]:
    """Faults at connect: on its first request (`initialize`, or the probe of the stateless era), then the listing."""
    opening = "server/discover" if era == STATELESS else "initialize"
    return [
        (opening, faults.HttpStatus(401)),
        (opening, faults.HttpStatus(403)),
        (opening, faults.HttpStatus(500)),
        (opening, faults.HttpStatus(503)),
        (opening, faults.ProtocolError(-32603, "scripted failure")),
        (opening, faults.Drop()),
        ("tools/list", faults.HttpStatus(401)),
        *(("tools/list", fault) for fault in _LISTING_CASES),
    ]


def _p6_cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = [
        {"case": ("call", kind, fault)} for fault in _call_faults(facts, auth=True) for kind in CALL_KINDS
    ]
    cases += [{"case": (where, "-", fault)} for where, fault in _connect_faults(facts.era)]
    return cases


def _p6_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    calls = st.tuples(st.just("call"), st.sampled_from(CALL_KINDS), mst.call_faults(era=facts.era))
    opening = "server/discover" if facts.era == STATELESS else "initialize"
    connects = st.tuples(
        st.just("tools/list"), st.just("-"), mst.listing_faults(max_page=3, detectable_only=True)
    ) | st.tuples(
        st.just(opening), st.just("-"), st.builds(faults.HttpStatus, st.sampled_from([401, 403, 429, 500, 503]))
    )
    return {"case": calls | connects}


def _p6_labels(inputs: Inputs) -> list[str]:
    where, kind, fault = inputs["case"]
    return [kind if where == "call" else f"at {where}", fault_label(fault)]


def _fell_back(h: ContractHarness) -> bool:
    """Whether the bridge answered a refused probe by the handshake: an `initialize` the server accepted."""
    return any(r.rpc_method == "initialize" and r.status == 200 for r in h.server.journal)


async def _p6(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    where, kind, fault = inputs["case"]
    server = h.server
    expected = expected_kinds(where, kind, fault, facts.era)
    if where == "call":
        _tool(server, "tool", kind)
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


# -- P7 --------------------------------------------------------------------------------------------


def _p7_cases(facts: BridgeFacts) -> list[Inputs]:
    import mcp_types

    data = "aGVsbG8="
    blocks: list[Any] = [
        mcp_types.TextContent(type="text", text="hello"),
        mcp_types.ImageContent(type="image", data=data, mime_type="image/png"),
        mcp_types.AudioContent(type="audio", data=data, mime_type="audio/wav"),
        mcp_types.ResourceLink(type="resource_link", uri="file:///report.pdf", name="report", mime_type=None),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.TextResourceContents(uri="memo://x", mime_type="text/plain", text="t")
        ),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.BlobResourceContents(uri="memo://y", mime_type=None, blob=data)
        ),
    ]
    results = [mcp_types.CallToolResult(content=[], structured_content=None, is_error=False)]
    results += [
        mcp_types.CallToolResult(content=[block], structured_content=None, is_error=is_error)
        for is_error in (False, True)
        for block in blocks
    ]
    results += [
        mcp_types.CallToolResult(content=[], structured_content={"b": [1, None], "a": "x"}, is_error=False),
        mcp_types.CallToolResult(content=[blocks[0], blocks[0]], structured_content=None, is_error=True),
    ]
    return [{"result": result} for result in results]


def _p7_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {"result": mst.call_results(errors=True, max_blocks=4)}


def _p7_labels(inputs: Inputs) -> list[str]:
    result = inputs["result"]
    kinds = sorted({block.type for block in result.content}) or ["no blocks"]
    return [*kinds, "isError" if result.is_error else "result"]


async def _p7(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    result = inputs["result"]
    server = h.server
    server.tool("tool", description="answers the generated result", read_only=True, returns=result)
    await h.connect(adapter)
    first = await adapter.call("tool", {})
    second = await adapter.call("tool", {})
    expected = "tool_error" if result.is_error else "ok"
    facts_ = {"first": first, "second": second}
    if first.kind != expected or second.kind != expected:
        raise h.fail(f"a valid result did not render as {expected}", **facts_)
    if first.text != second.text:
        raise h.fail(f"the same result rendered two different ways: {first.text!r} and {second.text!r}", **facts_)


# -- P8 --------------------------------------------------------------------------------------------

_DECISIONS = ("approve", "decline", "leave", "approve twice")
"""What happens to a paused call: approved, declined, left unanswered, or approved and its token used again."""
_GATED = ("read", "write")


def _p8_cases(facts: BridgeFacts) -> list[Inputs]:
    cases: list[Inputs] = [
        {"calls": [(tool, decision, 0)], "removed": False} for tool in _GATED for decision in _DECISIONS
    ]
    # Decided in another order than paused: each decision must reach its own call, with its own arguments.
    mixed = [("write", "decline", 1), ("write", "approve", 2), ("read", "leave", 3), ("write", "approve twice", 0)]
    cases.append({"calls": mixed, "removed": False})
    cases.append({"calls": [("write", "approve", 1), ("read", "approve", 0)], "removed": True})
    return cases


def _p8_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # The third item ranks the decisions: calls are decided in rank order, not in the order they were paused.
    call = st.tuples(st.sampled_from(_GATED), st.sampled_from(_DECISIONS), st.integers(0, 3))
    return {"calls": st.lists(call, min_size=1, max_size=4), "removed": st.booleans()}


def _p8_labels(inputs: Inputs) -> list[str]:
    labels = sorted({f"{tool} {decision}" for tool, decision, _ in inputs["calls"]})
    return [*labels, "write removed before the decisions"] if inputs["removed"] else labels


async def _p8(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    calls, removed = inputs["calls"], inputs["removed"]
    order = sorted(range(len(calls)), key=lambda number: calls[number][2])
    server = h.server
    _tool(server, "read", "read", returns="read")
    _tool(server, "write", "write", returns="written")
    gated: Any = adapter
    gated.require_approval(list(_GATED))
    await h.connect(adapter)
    tokens: list[str] = []
    for number, (tool, _, _) in enumerate(calls):
        outcome = await adapter.call(tool, {"n": number})
        if outcome.kind != "approval_required" or not outcome.text:
            raise h.fail(f"call {number} of the gated tool {tool!r} was not paused for approval", outcome=outcome)
        tokens.append(outcome.text)
    sent = [r for r in server.journal if r.rpc_method == "tools/call"]
    if sent:
        raise h.fail(f"{len(sent)} paused call(s) reached the server before any decision (#{sent[0].seq})")
    if removed:
        server.remove_tool("write")
    outcomes: dict[int, list[Any]] = {}
    for number in order:
        decision = calls[number][1]
        if decision == "leave":
            continue
        token = tokens[number]
        if decision == "decline":
            outcomes[number] = [await gated.decline(token)]
        else:
            outcomes[number] = [await gated.approve(token)]
            if decision == "approve twice":
                outcomes[number].append(await gated.approve(token))
    await adapter.close()  # what a bridge sends when it closes counts too
    for number, (tool, decision, _) in enumerate(calls):
        records = [r for r in server.calls(tool) if r.arguments == {"n": number}]
        runs = sum(1 for r in records if r.executed)
        facts_ = {"call": f"{number} ({tool}, {decision})", "outcomes": outcomes.get(number, []), "sent": len(records)}
        if decision in ("decline", "leave") and records:
            said = "a declined" if decision == "decline" else "an unanswered"
            raise h.fail(f"{said} approval reached the server (#{records[0].seq})", **facts_)
        if decision.startswith("approve") and removed and tool == "write":
            if records:
                raise h.fail("an approved call to a tool the server no longer lists reached it", **facts_)
            if any(outcome.kind == "ok" for outcome in outcomes[number]):
                raise h.fail("an approved call to a tool the server no longer lists reported ok, unsent", **facts_)
            continue
        if decision.startswith("approve"):
            if runs != 1:
                raise h.fail(f"an approved call ran {runs} times, not exactly once", **facts_)
            first = outcomes[number][0]
            if first.kind != "ok":
                raise h.fail(f"an approved call to a healthy server reported {first.kind}", **facts_)
            if decision == "approve twice" and outcomes[number][1].kind == "ok":
                raise h.fail("a spent approval token was accepted a second time", **facts_)


# -- P9 --------------------------------------------------------------------------------------------

_CREDENTIALS = {"one": _TOKEN_ONE, "two": _TOKEN_TWO, "none": None}
_AGES = (0.0, 0.5, 0.9, 1.5)
"""How far the cache's clock moves in one step, in TTLs."""


def _p9_cases(facts: BridgeFacts) -> list[Inputs]:
    def steps(*items: Any) -> Inputs:
        return {"steps": list(items)}

    connect = {name: ("connect", name) for name in _CREDENTIALS}
    change, advance = ("change", 0.0), {age: ("advance", age) for age in _AGES}
    return [
        steps(connect["one"], connect["one"]),
        steps(connect["one"], change, connect["two"]),
        steps(connect["one"], change, connect["none"]),
        steps(connect["none"], change, connect["one"]),
        steps(connect["one"], change, advance[1.5], connect["one"]),
        steps(connect["one"], change, advance[0.5], connect["one"], advance[0.9], connect["one"]),
        steps(connect["one"], connect["two"], change, advance[0.9], connect["two"], connect["one"]),
        steps(connect["two"], change, connect["one"], change, connect["two"], connect["one"]),
        steps(connect["one"], advance[0.9], connect["one"], change, advance[0.5], connect["one"]),
    ]


def _p9_strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    step = (
        st.tuples(st.just("connect"), st.sampled_from(list(_CREDENTIALS)))
        | st.tuples(st.just("change"), st.just(0.0))
        | st.tuples(st.just("advance"), st.sampled_from(_AGES))
    )
    return {"steps": st.lists(step, min_size=1, max_size=7)}


def _p9_labels(inputs: Inputs) -> list[str]:
    return sorted({f"{kind} {value}" if kind != "change" else "catalogue change" for kind, value in inputs["steps"]})


async def _p9(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    ttl = facts.cache_ttl_s
    assert ttl is not None
    cached: Any = adapter
    cached.use_tool_cache()
    catalogue = ["a", "b"]
    for name in catalogue:
        server.tool(name, returns="ok")
    now, changes = 0.0, 0
    listed: list[tuple[str, float, list[str]]] = []
    """Each real listing: the credential it was read with, when, and what it held."""
    for kind, value in inputs["steps"]:
        if kind == "change":
            changes += 1
            server.tool(f"c{changes}", returns="ok")
            catalogue = [*catalogue, f"c{changes}"]
            continue
        if kind == "advance":
            cached.advance_cache_clock(value * ttl)
            now += value * ttl
            continue
        token = _CREDENTIALS[value]
        mark = len(server.journal)
        outcome = await adapter.connect(h.url, {"Authorization": token} if token else {})
        if outcome.kind != "ok":
            raise h.fail("the bridge could not connect to a healthy server", outcome=outcome)
        loaded = sorted(await adapter.list_tools())
        if any(r.rpc_method == "tools/list" for r in server.journal.records[mark:]):
            listed.append((value, now, loaded))
        if loaded == sorted(catalogue):
            continue
        facts_ = {"credential": value, "loaded": loaded, "catalogue": catalogue, "clock": f"{now:g} s (TTL {ttl:g} s)"}
        if any(cred == value and names == loaded and now - at <= ttl for cred, at, names in listed):
            continue  # its own listing, within the TTL: a hit may serve it
        others = [cred for cred, at, names in listed if cred != value and names == loaded and now - at <= ttl]
        if others:
            raise h.fail(f"a cache hit served credential {others[-1]!r}'s listing to credential {value!r}", **facts_)
        ages = [now - at for cred, at, names in listed if cred == value and names == loaded]
        if ages:
            raise h.fail(
                f"a cache hit hid a catalogue change: it served a listing {min(ages):g} s old, "
                f"past the TTL of {ttl:g} s",
                **facts_,
            )
        raise h.fail("the bridge loaded a listing the server never gave this credential", **facts_)


PROPERTIES: dict[str, Property] = {
    prop.property_id: prop
    for prop in (
        Property(
            "P1",
            "Listing is all-or-nothing, within the page limit",
            "listing_is_all_or_nothing",
            "every detectable listing fault, a listing of exactly the page limit",
            _p1_strategies,
            _p1_cases,
            _p1_labels,
            _p1,
        ),
        Property(
            "P2",
            "A write runs at most once, exactly once when reported ok",
            "write_runs_at_most_once",
            "writes; every call fault class but 401/403, late answers past the adapter's timeout",
            _p2_strategies,
            _p2_cases,
            _p2_labels,
            _p2,
        ),
        Property(
            "P3",
            "A read survives up to `retry` transient faults, runs at most 1 + retry times",
            "read_survives_transient_faults",
            "reads and idempotent writes; lost connections and sessions, late answers",
            _p3_strategies,
            _p3_cases,
            _p3_labels,
            _p3,
        ),
        Property(
            "P4",
            "401/403 are never retried; the next call sends fresh credentials",
            "auth_refusals_are_final",
            "reads, idempotent writes and writes; 401 and 403 by a fault or a credential rotation",
            _p4_strategies,
            _p4_cases,
            _p4_labels,
            _p4,
        ),
        Property(
            "P5",
            "After a 404 the bridge starts a new session and sends the call once more",
            "new_session_after_404",
            "reads, idempotent writes and writes; a 404 on the call, a session lost or a restart between calls",
            _p5_strategies,
            _p5_cases,
            _p5_labels,
            _p5,
            eras=(HANDSHAKE,),
        ),
        Property(
            "P5s",
            "A broken stream re-issues a read once, with a new id, and never a write",
            "broken_stream_reissues_reads_only",
            "reads, idempotent writes and writes; a stream ended, dropped (before or after the tool ran) or cut",
            _p5s_strategies,
            _p5s_cases,
            _p5s_labels,
            _p5s,
            eras=(STATELESS,),
        ),
        Property(
            "P6",
            "Each fault surfaces as its own kind of error",
            "each_fault_its_own_error",
            "reads, idempotent writes and writes; every call fault class on every attempt; faults at connect",
            _p6_strategies,
            _p6_cases,
            _p6_labels,
            _p6,
        ),
        Property(
            "P7",
            "Rendering is total and deterministic for every valid result",
            "rendering_is_total_and_deterministic",
            "every content block kind, structured content, error results",
            _p7_strategies,
            _p7_cases,
            _p7_labels,
            _p7,
        ),
        Property(
            "P8",
            "A declined or unanswered approval never reaches the server; an approved one runs exactly once",
            "approvals_are_kept",
            "reads and writes gated; approved, declined, left unanswered, approved twice; any order; a tool removed",
            _p8_strategies,
            _p8_cases,
            _p8_labels,
            _p8,
            requires="approvals",
        ),
        Property(
            "P9",
            "A cache hit never serves one credential's tools to another, nor hides a change past its TTL",
            "tool_cache_is_keyed_and_expires",
            "connects with two credentials and none, catalogue changes, the cache's clock moved in TTLs",
            _p9_strategies,
            _p9_cases,
            _p9_labels,
            _p9,
            requires="tool_cache",
        ),
    )
}
