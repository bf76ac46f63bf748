"""Each wrong verdict the contract once gave, as a test: false passes, false failures, the harness's own faults
blamed on the bridge, hangs without a trace, verdicts that depended on what was imported, and the smaller ones."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import anyio
import pytest

from mcp_testkit.adapters import Outcome, PerCallReferenceAdapter, ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import ContractHarness, check_property, run_contract
from mcp_testkit.server import TestMcpServer


class _Wrapper:
    """A user's adapter around the reference bridge; subclasses change one behaviour."""

    name = "wrapper"
    sessions = "persistent"

    def __init__(self, *, transport: Any = None) -> None:
        self.inner = ReferenceBridgeAdapter(transport=transport)
        self.page_limit = self.inner.page_limit
        self.retry = self.inner.retry
        self.timeout_s = self.inner.timeout_s

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return await self.inner.connect(url, headers)

    async def list_tools(self) -> list[str]:
        return await self.inner.list_tools()

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        return await self.inner.call(tool, arguments)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self.inner.set_headers(headers)

    async def close(self) -> None:
        await self.inner.close()


# -- 1. false pass of P2 ---------------------------------------------------------------------------------


class _ResendingAfterDrops(_Wrapper):
    """Like an agent framework's `max_retry_attempts=2`: a call whose answer was lost is sent again, write or not."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        for _ in range(2):
            outcome = await self.inner.call(tool, arguments)
            if outcome.kind not in ("outcome_unknown", "connection_error"):
                return outcome
        return await self.inner.call(tool, arguments)


@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_a_bridge_resending_writes_after_a_drop_fails_p2_at_100_examples(era: str) -> None:
    """A bridge that resends a write whose connection dropped after it ran fails P2 at the default 100 examples,
    in either era."""
    [result] = run_contract(_ResendingAfterDrops, properties=["P2"], eras=[era])
    assert result.status == "failed"
    assert result.era == era
    assert "a write ran 2 times for one call" in (result.counterexample or "")
    assert "declared case" in (result.counterexample or "")


@pytest.mark.parametrize(("era", "declared"), [("handshake", 31), ("stateless", 30)])
def test_p2_always_covers_writes_after_drops_and_late_answers(era: str, declared: int) -> None:
    """P2 always runs a write after Drop(after_execution=True), EndStream, TruncateBody, a late answer, in both
    eras; in the stateless era also after each of its refusals, and never after a session fault."""
    [result] = run_contract(ReferenceBridgeAdapter, properties=["P2"], eras=[era])
    assert result.passed, result.counterexample
    for label in ("Drop(after_execution=True)", "EndStream", "TruncateBody", "LateAnswer"):
        assert result.coverage.get(label, 0) >= 1, label
    stateless_only = ("HeaderMismatch", "UnsupportedVersion", "MissingCapability", "EraDowngrade")
    handshake_only = ("LoseSession", "Restart(404)", "Restart(400)", "BreakStream(1)", "BreakStream(0)")
    for label in stateless_only if era == "stateless" else handshake_only:
        assert result.coverage.get(label, 0) >= 1, label
    for label in handshake_only if era == "stateless" else stateless_only:
        assert label not in result.coverage, label
    assert result.examples == 100
    assert result.declared == declared


# -- 2. false failure of P4 ------------------------------------------------------------------------------


def test_a_bridge_with_a_session_per_call_holds_p4() -> None:
    """A bridge meeting the refusal on initialize (a new session per call) holds P4 in every declared case."""
    [result] = run_contract(PerCallReferenceAdapter, eras=["handshake"], properties=["P4"])
    assert result.status == "passed", result.counterexample
    assert result.declared == 12


# -- 3. the harness blamed the bridge --------------------------------------------------------------------


def test_p5_adapts_to_a_bridge_holding_no_session_between_calls() -> None:
    """P5's lose_session case on a bridge with no session between calls is not an error of the bridge."""
    [result] = run_contract(PerCallReferenceAdapter, eras=["handshake"], properties=["P5"])
    assert result.status == "passed", result.counterexample
    assert result.coverage["lose_session"] >= 3


class _FailingSetHeaders(_Wrapper):
    def set_headers(self, headers: Mapping[str, str]) -> None:
        raise RuntimeError("this adapter cannot rotate credentials")


class _RaisingCall(_Wrapper):
    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        raise KeyError(tool)


class _RaisingInATaskGroup(_Wrapper):
    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        async def fails() -> None:
            raise KeyError(tool)

        async with anyio.create_task_group() as group:
            group.start_soon(fails)
        raise AssertionError("unreachable")


class _FailingClose(_Wrapper):
    async def close(self) -> None:
        await self.inner.close()
        raise OSError("close failed")


class _NotAnOutcome(_Wrapper):
    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        return "ok"  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("factory", "property_id", "says"),
    [
        (
            _FailingSetHeaders,
            "P4",
            "the adapter's set_headers raised RuntimeError: this adapter cannot rotate credentials",
        ),
        (_RaisingCall, "P2", "the adapter's call('write') raised KeyError: 'write'"),
        (_RaisingInATaskGroup, "P2", "the adapter's call('write') raised KeyError: 'write' (in an ExceptionGroup)"),
        (_FailingClose, "P7", "the adapter's close raised OSError: close failed"),
        (_NotAnOutcome, "P7", "the adapter's call('tool') returned 'ok', not an Outcome"),
    ],
    ids=["set-headers", "call", "call-in-a-task-group", "close", "not-an-outcome"],
)
def test_an_exception_escaping_an_adapter_is_an_error_not_a_failure(factory: Any, property_id: str, says: str) -> None:
    """An exception escaping an adapter method is reported as an error of the adapter, never as the bridge's failure."""
    [result] = run_contract(factory, eras=["handshake"], properties=[property_id])
    assert result.status == "error"
    assert says in (result.counterexample or "")
    assert "Traceback" in (result.counterexample or "") or "not an Outcome" in says


def test_an_exception_of_the_harness_is_an_error() -> None:
    """An exception raised by the harness itself (here reading an adapter's declared facts) is an error verdict."""

    class BadRetry(_Wrapper):
        def __init__(self, *, transport: Any = None) -> None:
            super().__init__(transport=transport)
            self.retry = "two"  # type: ignore[assignment]

    [result] = run_contract(BadRetry, eras=["handshake"], properties=["P3"])
    assert result.status == "error"
    assert "retry must be an int >= 0, not 'two'" in (result.counterexample or "")


# -- 4. hangs --------------------------------------------------------------------------------------------


def test_a_bridge_that_retries_a_late_read_within_its_long_timeout_is_not_taken_for_a_hung_one() -> None:
    """The reference bridge with timeout_s=30 waits 30 s for a read answered 60.5 s late, then retries it once and
    waits 30 s more: P6 places the fault on every call, so the example's limit counts both attempts and P6 holds
    (it was reported "hung in call('tool') after 55 s")."""

    def factory(**keywords: Any) -> ReferenceBridgeAdapter:
        return ReferenceBridgeAdapter(timeout_s=30, **keywords)

    [result] = run_contract(factory, properties=["P6"], eras=["handshake"])
    assert result.status == "passed", result.counterexample


class _HangingOnImages(_Wrapper):
    """A bridge that never returns from a call whose result holds an image."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await self.inner.call(tool, arguments)
        if "[image:" in (outcome.text or ""):
            self.waiting_on_bridge = True  # the bridge's own hang, after its answer came (else: the adapter's)
            await anyio.sleep_forever()
        return outcome


def test_a_hang_is_its_own_status_with_its_step_runs_faults_and_requests() -> None:
    """A hanging example is the status "hung" (not P7 failing), "hung in <step> after N s" with the handler runs,
    the faults fired and every request."""
    [result] = run_contract(_HangingOnImages, eras=["handshake"], properties=["P7"], example_timeout_s=0.3)
    assert result.status == "hung"
    assert result.mark == "HUNG"
    assert not result.failed
    text = result.counterexample or ""
    assert "hung in call('tool') after 0.3 s" in text
    assert "handler runs: tool 1" in text
    assert "faults fired: none" in text
    assert "tools/call tool -> 200" in text


class _HangingOnEveryCall(_Wrapper):
    """A bridge that never returns from a call, once its answer came."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        await self.inner.call(tool, arguments)
        self.waiting_on_bridge = True  # the bridge's own hang, after its answer came (else: the adapter's)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def test_shrinking_a_hang_stops_at_the_budget_and_says_so() -> None:
    """Shrinking a drawn hang stops when the property's budget is spent, and the verdict says it stopped early."""
    # The first draw hangs, and its hang lasts as long as the whole budget: whatever the load, the budget is spent
    # when the hang is found, so the shrinking that follows stops at its first step (10 s: time enough to reach the
    # first draw on a busy machine). On the real clock: in virtual time a hang spends none of the budget.
    [result] = run_contract(
        _HangingOnEveryCall,
        eras=["handshake"],
        properties=["P7"],
        example_timeout_s=10,
        budget_s=10,
        declared_cases=False,
        clock="real",
    )
    assert result.status == "hung", result.counterexample
    assert "shrinking stopped early: the budget of 10 s ran out" in result.notes
    assert "hung in call('tool') after 10 s" in (result.counterexample or "")
    assert "a shorter counterexample may exist" in (result.counterexample or "")


def test_a_bridge_retrying_without_end_in_process_is_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bridge resending a dropped read without end never waits on anything in-process; it is still a hang."""
    from mcp_testkit.bridge import _link

    init = _link.ServerLink.__init__

    def unbounded(self: Any, config: Any, *args: Any, **kwargs: Any) -> None:
        init(self, dataclasses.replace(config, retry=10**6), *args, **kwargs)

    monkeypatch.setattr(_link.ServerLink, "__init__", unbounded)
    # 4 s: the shortest limit that does not cut the waits P6's declared late answers cost this bridge.
    [result] = run_contract(ReferenceBridgeAdapter, eras=["handshake"], properties=["P6"], example_timeout_s=4)
    assert result.status == "hung", result.counterexample
    assert "hung in call('tool') after 4 s" in (result.counterexample or "")
    assert "Drop(after_execution=False)" in (result.counterexample or "")
    assert re.search(
        r"faults fired: (#\d+ Drop\(after_execution=False\), ){10}\.\.\. \d+ more", result.counterexample or ""
    )


def test_a_budget_spent_before_the_declared_cases_is_an_error() -> None:
    """A property whose declared cases did not all run cannot hold: it is an error that says why."""
    [result] = run_contract(ReferenceBridgeAdapter, eras=["handshake"], properties=["P6"], budget_s=0.001)
    assert result.status == "error"
    assert result.examples < result.declared + 1
    assert any("ran out after" in note and "declared cases" in note for note in result.notes)


# -- 10. verdicts that depended on what was loaded ---------------------------------------------------------

_VERDICTS = """
import json
from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import run_contract
results = run_contract(ReferenceBridgeAdapter, max_examples=150, properties=["P1", "P7"])
print(json.dumps([[r.property_id, r.status, r.examples, dict(r.coverage)] for r in results]))
"""


def test_derandomized_verdicts_and_draws_are_the_same_from_python_c_and_pytest() -> None:
    """The same derandomized call draws the same examples (same coverage) under pytest and from `python -c`."""
    done = subprocess.run([sys.executable, "-c", _VERDICTS], capture_output=True, text=True, timeout=300, check=True)
    outside = json.loads(done.stdout.strip().splitlines()[-1])
    results = run_contract(ReferenceBridgeAdapter, max_examples=150, properties=["P1", "P7"])
    inside = [[r.property_id, r.status, r.examples, dict(r.coverage)] for r in results]
    assert inside == outside


_DRAWS = """
import hashlib, json
from hypothesis import given, settings, strategies as st
from mcp_testkit.contract._draws import _context_free_draws
values = []

@settings(derandomize=True, max_examples=200, database=None)
@given(st.text(max_size=20))
def collect(value):
    values.append(value)

with _context_free_draws():
    collect()
print(hashlib.md5(json.dumps(values).encode()).hexdigest())
"""


def test_contract_draws_do_not_depend_on_the_modules_loaded() -> None:
    """Under the contract, derandomized draws are the same in a bare `python -c` and in pytest with many modules."""
    done = subprocess.run([sys.executable, "-c", _DRAWS], capture_output=True, text=True, timeout=120, check=True)
    namespace: dict[str, Any] = {"__name__": "draws_in_pytest"}
    lines = _DRAWS.replace("print(", "digest = (")
    exec(compile(lines, "draws", "exec"), namespace)
    assert namespace["digest"] == done.stdout.strip()


# -- 11. the smaller ones ----------------------------------------------------------------------------------


class _MisrendersThreeBlocks(_Wrapper):
    """Reports a result of three blocks or more as a tool error: a bug found only by draws."""

    made = 0
    first_failure_at: int | None = None

    def __init__(self, *, transport: Any = None) -> None:
        super().__init__(transport=transport)
        type(self).made += 1
        self.number = type(self).made

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await self.inner.call(tool, arguments)
        if outcome.kind == "ok" and (outcome.text or "").count("\n") >= 2:
            if type(self).first_failure_at is None:
                type(self).first_failure_at = self.number
            return Outcome.tool_error(RuntimeError("misrendered"))
        return outcome


def test_example_counts_exclude_shrinking() -> None:
    """The example count stops at the first failing example: the shrink replays after it are not counted."""
    with ContractHarness(_MisrendersThreeBlocks) as harness:
        assert check_property(harness, "P0", max_examples=1).status == "passed"  # P0 first, as a run has it
        before = _MisrendersThreeBlocks.made
        result = check_property(harness, "P7")
    assert result.status == "failed"
    made, first = _MisrendersThreeBlocks.made, _MisrendersThreeBlocks.first_failure_at
    assert first is not None
    # One adapter is made to read the declared facts (the probe of the era it speaks ran before P0).
    assert result.examples == first - before - 1
    assert made > first  # shrinking ran more examples, which are not counted


class _Chatty(_Wrapper):
    """A bridge that logs through a logger of its own with its own handler, which its adapter names in `loggers`."""

    loggers = ("chatty.bridge",)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        logging.getLogger("chatty.bridge").warning("calling %s the chatty way", tool)
        await self.inner.call(tool, arguments)
        return Outcome.tool_error(RuntimeError("chatty"))


def test_a_declared_bridge_logger_is_captured_and_shown_with_a_failing_example() -> None:
    """A bridge's own non-propagating logger named in `loggers` keeps its handler, which gets none of the records
    logged during an example (no flood); they appear under the failing example instead."""
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logger = logging.getLogger("chatty.bridge")
    handler = Keep()
    logger.addHandler(handler)
    logger.propagate = False
    try:
        [result] = run_contract(_Chatty, eras=["handshake"], properties=["P7"])
        assert logger.handlers == [handler]
        assert logger.propagate is False
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    assert seen == []  # captured: the bridge's own handler had none of its records during the examples
    assert result.status == "failed"
    assert "log records during the example" in (result.counterexample or "")
    assert "WARNING chatty.bridge: calling tool the chatty way" in (result.counterexample or "")


def test_declared_cases_all_run_when_max_examples_is_smaller() -> None:
    """With max_examples below the number of declared cases, all of them run and the result says so."""
    [result] = run_contract(ReferenceBridgeAdapter, eras=["handshake"], properties=["P5"], max_examples=3)
    assert result.status == "passed"
    assert (result.examples, result.declared) == (12, 12)
    assert result.notes == ("all 12 declared cases ran although max_examples is 3",)


def test_sdk_client_adapter_walks_more_pages_than_100() -> None:
    """The SDK client has no page limit, so neither has its adapter: it loads a listing of 150 pages."""
    server = TestMcpServer(page_size=1)
    for index in range(150):
        server.tool(f"t{index}", returns="ok")
    adapter = SdkClientAdapter()
    assert adapter.page_limit is None

    async def load() -> tuple[Outcome, list[str]]:
        import httpx2

        bridge = SdkClientAdapter(transport=httpx2.ASGITransport(app=server.asgi_app))
        with anyio.fail_after(30):
            try:
                outcome = await bridge.connect("http://127.0.0.1/mcp", {})
                return outcome, await bridge.list_tools()
            finally:
                await bridge.close()

    outcome, names = anyio.run(load)
    assert outcome.kind == "ok"
    assert len(names) == 150


# -- issue 21: the wrong verdicts a bridge built to fool the contract got --------------------------------


class _OutboxFlushedAtClose(_Wrapper):
    """Keeps every call whose outcome was unknown and sends it again when it closes: an outbox flushed at shutdown."""

    def __init__(self, *, transport: Any = None) -> None:
        super().__init__(transport=transport)
        self.outbox: list[tuple[str, Mapping[str, Any]]] = []

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await self.inner.call(tool, arguments)
        if outcome.kind in ("outcome_unknown", "connection_error"):
            self.outbox.append((tool, arguments))
        return outcome

    async def close(self) -> None:
        for tool, arguments in self.outbox:
            await self.inner.call(tool, arguments)
        await self.inner.close()


def test_a_write_resent_when_the_bridge_closes_fails_p2() -> None:
    """A bridge that resends, in close(), writes whose outcome was unknown fails P2: the ledger is read after close."""
    [result] = run_contract(_OutboxFlushedAtClose, properties=["P2"], eras=["handshake"])
    assert result.status == "failed"
    text = result.counterexample or ""
    assert "after close(): a write ran 2 times for 1 call" in text
    assert "handler runs after close(): 2" in text


def test_a_write_run_twice_in_another_propertys_example_is_named_as_p2s_broken_promise() -> None:
    """One root cause, one name: the bridge that resends writes fails P6's examples too, and says it breaks P2's
    promise in a P6 example, not a promise of P6's own."""
    property_id = "P6"
    [result] = run_contract(_OutboxFlushedAtClose, properties=[property_id], eras=["handshake"])
    assert result.status == "failed"
    text = result.counterexample or ""
    assert "breaks P2's promise (a write runs at most once, exactly once when reported ok): after close(), " in text
    assert f"in a {property_id} example" in text


def test_expect_fail_never_turns_a_fallback_into_an_xfail(pytester: pytest.Pytester) -> None:
    """resilience_suite with expect_fail=["P1"] fails P1-stateless of a bridge that falls back, saying it fell back,
    instead of reporting XFAIL."""
    pytester.makepyfile(
        test_fallback="""
        from mcp_testkit.adapters import SdkClientAdapter
        from mcp_testkit.contract import resilience_suite

        test_legacy = resilience_suite(SdkClientAdapter.legacy, eras=["stateless"], expect_fail=["P1"], max_examples=5)
        """
    )
    result = pytester.runpytest("-q", "-p", "no:randomly", "-k", "P1-stateless")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*P1*in the stateless era has no verdict: the bridge fell back to the handshake era*"])


def test_the_state_machine_says_when_a_bridge_fell_back() -> None:
    """resilience_machine in the stateless era fails a bridge that falls back to the handshake era, saying so."""
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    from mcp_testkit.contract import resilience_machine

    machine = resilience_machine(SdkClientAdapter.legacy, era="stateless")
    with pytest.raises(Exception, match="no verdict in the stateless era: the bridge spoke the handshake era"):
        run_state_machine_as_test(machine, settings=settings(max_examples=1, database=None, deadline=None))


class _NeverSendsWrites(_Wrapper):
    """Answers every write outcome_unknown without sending it: nothing a fault could hit ever reaches the server."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        if tool == "write":
            return Outcome.outcome_unknown(TimeoutError("no answer"))
        return await self.inner.call(tool, arguments)


def test_a_bridge_that_never_sends_a_write_does_not_hold_p2_and_its_coverage_lists_no_fault() -> None:
    """A bridge that never sends a write fails P2, its declared faults never fired, and its coverage line lists none
    of them: coverage counts what the server saw fire, not what was drawn."""
    [result] = run_contract(_NeverSendsWrites, properties=["P2"], eras=["handshake"])
    assert result.status == "failed"
    text = result.counterexample or ""
    assert "no fault of this declared case fired" in text
    assert "the bridge never sent what this declared case's faults wait for" in text
    assert "Drop(after_execution=True)" not in result.coverage
    assert set(result.coverage) == {"no fault fired"}


def test_coverage_counts_the_faults_that_fired() -> None:
    """The reference bridge's P2 coverage counts each fault class as fired, and every declared case ran."""
    [result] = run_contract(ReferenceBridgeAdapter, properties=["P2"], eras=["handshake"], max_examples=30)
    assert result.passed, result.counterexample
    assert result.coverage["Drop(after_execution=True)"] >= 2
    assert "no fault fired" not in result.coverage or result.coverage["no fault fired"] < result.examples


class _RendersNothing(_Wrapper):
    """Renders every result, error or not, as "": right in kind, and the same every time."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await self.inner.call(tool, arguments)
        return dataclasses.replace(outcome, text="") if outcome.kind in ("ok", "tool_error") else outcome


def test_a_bridge_rendering_every_result_as_empty_fails_p7() -> None:
    """P7 checks content: a bridge that renders every result as "" fails, naming the text it left out."""
    [result] = run_contract(_RendersNothing, properties=["P7"], eras=["handshake"])
    assert result.status == "failed"
    text = result.counterexample or ""
    assert "leaves out what the result says" in text or "rendered the same" in text


def _slow_reference(*, transport: Any = None) -> ReferenceBridgeAdapter:
    """The reference bridge waiting 5 s for an answer, as a careful bridge may."""
    return ReferenceBridgeAdapter(transport=transport, timeout_s=5.0)


def test_a_bridge_with_a_long_timeout_holds_p3_its_limit_follows_the_bridge() -> None:
    """With example_timeout_s left unset, a bridge declaring timeout_s=5 holds P3: declared case 7's two late answers
    (10 s of waiting) get a limit derived from its timeout and retry, not a hang after 10 s."""
    [result] = run_contract(_slow_reference, properties=["P3"], eras=["handshake"], max_examples=1)
    assert result.status == "passed", result.counterexample


def test_an_example_timeout_cutting_the_declared_waits_is_an_error_naming_them() -> None:
    """A user's example_timeout_s shorter than an example's declared waits is an error naming them, never a hang."""
    [result] = run_contract(_slow_reference, properties=["P3"], eras=["handshake"], example_timeout_s=10.0)
    assert result.status == "error"
    text = result.counterexample or ""
    assert "example_timeout_s=10 s cuts the waits this example declares" in text
    assert "LateAnswer(" in text
    assert "Not a verdict on the bridge" in text


class _RaisesThenClosesSlowly(_Wrapper):
    """Its call raises at once; its close then outlasts the example's time limit."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        raise KeyError(tool)

    async def close(self) -> None:
        try:
            await anyio.sleep(5)
        finally:
            with anyio.CancelScope(shield=True):
                await self.inner.close()


def test_an_adapter_exception_wins_over_a_deadline_passed_after_it() -> None:
    """An adapter that raised before the deadline is an error of the adapter, not a hang of the bridge, even when
    closing it then runs past the deadline."""
    [result] = run_contract(_RaisesThenClosesSlowly, properties=["P2"], eras=["handshake"], example_timeout_s=0.5)
    assert result.status == "error", result.counterexample
    assert "the adapter's call('write') raised KeyError" in (result.counterexample or "")


class _RaisesWhileShrinking(_Wrapper):
    """Misrenders results of four blocks or more; once it has, raises on any smaller result with blocks."""

    misrendered = False

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await self.inner.call(tool, arguments)
        lines = (outcome.text or "").count("\n")
        if outcome.kind == "ok" and lines >= 3:
            type(self).misrendered = True
            return Outcome.tool_error(RuntimeError("misrendered"))
        if type(self).misrendered and 1 <= lines < 3:
            raise RuntimeError("the adapter broke on a smaller case")
        return outcome


def test_an_adapter_exception_while_shrinking_keeps_the_counterexample() -> None:
    """An adapter that raises while a failure is being shrunk leaves the failure with the counterexample found so
    far, saying the adapter raised on a smaller case."""
    _RaisesWhileShrinking.misrendered = False
    [result] = run_contract(_RaisesWhileShrinking, properties=["P7"], eras=["handshake"])
    assert result.status == "failed", result.counterexample
    text = result.counterexample or ""
    assert "P7 counterexample (drawn)" in text
    assert "the adapter raised on a smaller case" in text
    assert "the adapter broke on a smaller case" in text


# -- issue 21 item 12: verdicts that say what happened -----------------------------------------------------


class _CannotConnect(_Wrapper):
    """Like smolagents' `KeyError: 'properties'` on a legal schema: the bridge never connects, even to a healthy
    server."""

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        await self.inner.connect(url, headers)
        return Outcome.connection_error(KeyError("properties"))


def test_a_bridge_that_cannot_connect_fails_p0_and_the_rest_are_blocked() -> None:
    """A bridge that cannot connect to a valid server fails P0 once per era, and every other property says "blocked",
    naming P0: never a pass, never "not run", and P0's counterexample is the one it carries."""
    results = run_contract(_CannotConnect, eras=["handshake"], properties=["P0", "P1", "P2", "P6"], max_examples=5)
    assert [r.status for r in results] == ["failed", "blocked", "blocked", "blocked"]
    assert "the bridge could not connect to a valid server: connection_error(" in (results[0].counterexample or "")
    assert "KeyError" in (results[0].counterexample or "")
    for result in results[1:]:
        assert result.mark == "blocked"
        assert result.examples == 0
        assert result.notes[0].startswith("blocked: the bridge fails P0 (connects to any valid server)")
        assert result.counterexample == results[0].counterexample
        assert not result.applies
        assert not result.passed
        assert not result.failed
        assert result.coverage_line().startswith("no examples: blocked: the bridge fails P0")


def test_a_property_checked_without_p0_is_blocked_by_p0_s_declared_cases() -> None:
    """Asked for P2 alone, the contract still finds P0 first (its declared cases, once per era), so a bridge that
    cannot connect gets "blocked" for P2 with P0's counterexample, never a verdict of its own."""
    results = run_contract(_CannotConnect, properties=["P2"], max_examples=5)
    assert [(r.property_id, r.era, r.status) for r in results] == [
        ("P2", "handshake", "blocked"),
        ("P2", "stateless", "blocked"),
    ]
    assert all((r.counterexample or "").startswith("P0 counterexample (declared case 1 of 23)") for r in results)


@pytest.mark.parametrize("via", ["asgi", "socket"])
@pytest.mark.parametrize("factory", [ReferenceBridgeAdapter, SdkClientAdapter], ids=["reference", "sdk-client"])
def test_a_bridge_that_connects_holds_p0_in_both_eras_and_is_never_blocked(factory: Any, via: str) -> None:
    """The reference bridge and the SDK client load every unusual tool of P0's declared cases and draws, in both
    eras, in-process and over a socket; what comes after P0 runs (its examples, not a block)."""
    results = run_contract(factory, properties=["P0", "P7"], max_examples=30, via=via)
    order = [(pid, era) for era in ("handshake", "stateless") for pid in ("P0", "P7")]
    assert [(r.property_id, r.era) for r in results] == order
    p0 = [r for r in results if r.property_id == "P0"]
    assert [r.status for r in p0] == ["passed", "passed"], [r.counterexample for r in p0]
    assert all(r.declared == 23 and r.examples == 30 for r in p0)
    assert all(r.examples > 0 and not r.blocked for r in results if r.property_id == "P7")


def test_a_suite_for_a_bridge_that_cannot_connect_fails_p0_and_every_blocked_test(pytester: pytest.Pytester) -> None:
    """resilience_suite of a bridge that cannot connect fails P0 and every other test of the era as blocked (never a
    pass or a skip); with P0 in expect_fail, P0 is an xfail and so is each blocked test, which stays no pass."""
    pytester.makepyfile(
        test_unconnected="""
        from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter
        from mcp_testkit.contract import resilience_suite

        class CannotConnect(ReferenceBridgeAdapter):
            async def connect(self, url, headers):
                await super().connect(url, headers)
                return Outcome.connection_error(KeyError("properties"))

        test_it = resilience_suite(CannotConnect, eras=["handshake"], max_examples=3)
        test_expected = resilience_suite(CannotConnect, eras=["handshake"], max_examples=3, expect_fail=["P0", "P2"])
        """
    )
    result = pytester.runpytest("-q", "-p", "no:randomly", "-p", "no:xdist", "-rfx")
    result.assert_outcomes(failed=17, xfailed=17)  # P0-P15 and P19 but P5s, in each suite
    result.stdout.fnmatch_lines(["*P2 (*) in the handshake era is blocked: the bridge fails P0 (connects to any*"])
    result.stdout.fnmatch_lines(["XFAIL*test_expected*P3-handshake*is blocked: the bridge fails P0*"])


class _EndAtEmptyCursor:
    """A session whose pages say `nextCursor: None` where the server said "": a bridge reading "" as the end."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def list_tools(self, cursor: str | None) -> Any:
        page = await self._session.list_tools(cursor)
        return page.model_copy(update={"next_cursor": None}) if page.next_cursor == "" else page


@pytest.mark.parametrize(("era", "status"), [("handshake", "passed"), ("stateless", "failed")])
def test_empty_cursor_read_as_the_end_holds_in_the_handshake_era_only(
    monkeypatch: pytest.MonkeyPatch, era: str, status: str
) -> None:
    """A bridge taking `nextCursor: ""` for the end holds P1 and P6 in the handshake era (2025-11-25 allows it) and
    fails P1 in the stateless era, where "" is a cursor."""
    from mcp_testkit import faults
    from mcp_testkit.bridge import _catalogue, _link
    from mcp_testkit.contract import expected_kinds

    read = _catalogue.read_catalogue

    async def ending(session: Any, config: Any) -> list[Any]:
        return await read(_EndAtEmptyCursor(session), config)

    monkeypatch.setattr(_link, "read_catalogue", ending)
    results = run_contract(ReferenceBridgeAdapter, eras=[era], properties=["P1", "P6"], max_examples=60)
    assert [r.status for r in results][: 1 if era == "stateless" else 2] == [status] * (1 if era == "stateless" else 2)
    if era == "stateless":
        assert "EmptyCursor" in (results[0].counterexample or "")
    assert expected_kinds("tools/list", "-", faults.EmptyCursor(1), "handshake") == {"ok", "connection_error"}


def test_the_default_budget_runs_every_declared_case_then_draws_for_its_own_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no budget given every declared case runs, however long, and the draws' budget starts after them; the
    note says how many examples ran in it."""
    from mcp_testkit.contract import _run as _runner

    monkeypatch.setattr(_runner, "DEFAULT_BUDGET_S", 1e-6)
    [result] = run_contract(ReferenceBridgeAdapter, eras=["handshake"], properties=["P6"])
    assert result.status == "passed", result.counterexample
    assert result.examples >= result.declared > 70
    assert any(note.startswith("the budget of 1e-06 s ran out after") for note in result.notes)


def test_a_hang_in_the_suite_is_a_failure_never_an_xfail(pytester: pytest.Pytester) -> None:
    """resilience_suite fails a hung case with its trace, even for a property in expect_fail: a hang says nothing
    about what the property promises, so it is never the expected failure."""
    pytester.makepyfile(
        test_hanging="""
        import anyio
        from mcp_testkit.adapters import ReferenceBridgeAdapter
        from mcp_testkit.contract import resilience_suite

        class Hangs(ReferenceBridgeAdapter):
            waiting_on_bridge = True  # its bridge's hang, not the adapter's

            async def call(self, tool, arguments):
                await anyio.sleep_forever()

        test_it = resilience_suite(Hangs, eras=["handshake"], expect_fail=["P7"], max_examples=3, example_timeout_s=0.5)
        """
    )
    result = pytester.runpytest("-q", "-p", "no:randomly", "-p", "no:xdist", "-k", "P7-handshake")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*P7*in the handshake era: the bridge hung:*", "*hung in call('tool') after 0.5 s*"])


def test_a_property_about_bounded_waits_fails_on_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    """A property declaring hang_fails (a bounded-wait property, where a wait without end is the failure) reports a
    hang as "failed", with the same trace; any other property reports it as "hung"."""
    from mcp_testkit.contract import PROPERTIES

    monkeypatch.setitem(PROPERTIES, "P7", dataclasses.replace(PROPERTIES["P7"], hang_fails=True))
    [result] = run_contract(_HangingOnImages, eras=["handshake"], properties=["P7"], example_timeout_s=0.3)
    assert result.status == "failed"
    assert "hung in call('tool') after 0.3 s" in (result.counterexample or "")


@pytest.mark.parametrize("names", [[], ["a", "b", "c"]])
def test_two_empty_cursors_in_the_stateless_era_may_be_refused_as_a_repeated_cursor(
    monkeypatch: pytest.MonkeyPatch, names: list[str]
) -> None:
    """One `""` cursor is a page like any other in 2026-07-28, but a second one repeats the cursor `""`: a bridge that
    refuses a repeated cursor as a loop fails that listing rightly, and P1 must not call it "failed although no fault
    fired" (a false failure the reference met once the draws changed)."""
    from mcp_testkit import faults
    from mcp_testkit.contract._properties import PROPERTIES

    twice = {"names": names, "page_size": 1, "listing_faults": [faults.EmptyCursor(1), faults.EmptyCursor(2)]}
    monkeypatch.setitem(PROPERTIES, "P1", dataclasses.replace(PROPERTIES["P1"], cases=lambda facts: [twice]))
    [result] = run_contract(ReferenceBridgeAdapter, eras=["stateless"], properties=["P1"], max_examples=1)
    assert result.status == "passed", result.counterexample
    assert result.examples >= 1
