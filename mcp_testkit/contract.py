"""The resilience contract: properties P1-P7 of a client bridge, checked with Hypothesis through `TestMcpServer`.

Run it three ways:

- pytest: `test_my_bridge = resilience_suite(MyAdapter)` gives one test per property;
- Python: `run_contract(MyAdapter, max_examples=200)` returns a `PropertyResult` per property;
- shell: `mcp-testkit check mypackage.adapters:MyAdapter`.

A failing property comes with its counterexample: the shrunk inputs, the faults that fired and the
journal of every request the bridge sent in that example.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit.adapters import BridgeAdapter, Outcome

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.server import TestMcpServer

__all__ = [
    "PROPERTIES",
    "ContractHarness",
    "ContractViolation",
    "PropertyResult",
    "check_property",
    "resilience_machine",
    "resilience_suite",
    "run_contract",
]

_TOKEN_ONE = "Bearer contract-one"
_TOKEN_TWO = "Bearer contract-two"


@dataclass(frozen=True)
class PropertyResult:
    """One property's verdict for one bridge; `counterexample` is the shrunk trace when it failed."""

    property_id: str
    title: str
    passed: bool
    counterexample: str | None = None
    examples: int = 0
    seconds: float = 0.0


class ContractViolation(AssertionError):
    """A property did not hold; the message is the readable trace of the example."""


class ContractHarness:
    """A `TestMcpServer` and an event loop, shared by every example of a contract run.

    `transport="asgi"` runs the bridge in-process (fast); `"socket"` serves over 127.0.0.1. `server`
    is the server to run on (a replay of a recorded one, say); by default a fresh empty one.
    """

    def __init__(
        self, factory: AdapterFactory, *, transport: str = "asgi", server: TestMcpServer | None = None
    ) -> None:
        if transport not in ("asgi", "socket"):
            raise ValueError(f"transport must be 'asgi' or 'socket', not {transport!r}")
        self.factory = factory
        self.transport = transport
        self._given = server
        self._stack = contextlib.ExitStack()
        self.server: TestMcpServer
        self._loop: _Loop

    def __enter__(self) -> ContractHarness:
        from mcp_testkit.server import TestMcpServer

        # Bridges log every fault they meet; the journal already tells the story, so keep the report clean.
        for name in ("mcp", "mcp_testkit.bridge", "httpx2"):
            logger = logging.getLogger(name)
            self._stack.callback(logger.setLevel, logger.level)
            logger.setLevel(logging.CRITICAL)

        self.server = self._given if self._given is not None else TestMcpServer(name="contract")
        if self.transport == "socket" and not self.server.started:
            self._stack.enter_context(self.server)
        self._loop = self._stack.enter_context(_Loop())
        return self

    @contextlib.contextmanager
    def fresh_loop(self) -> Iterator[None]:
        """A new event loop for what runs inside: a bridge that breaks its loop spoils one property only."""
        with _Loop() as loop:
            previous, self._loop = self._loop, loop
            try:
                yield
            finally:
                self._loop = previous

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @property
    def url(self) -> str:
        return self.server.url if self.transport == "socket" else "http://127.0.0.1/mcp"

    def adapter(self) -> BridgeAdapter:
        """A fresh adapter from the factory, routed in-process when the harness is."""
        transport = None
        if self.transport == "asgi":
            import httpx2

            transport = httpx2.ASGITransport(app=self.server.asgi_app)
        return self.factory(transport=transport)

    def run(self, example: Callable[[ContractHarness, BridgeAdapter], Awaitable[None]], timeout: float = 30) -> None:
        """Run one example on a freshly reset server with a fresh adapter; always closes the adapter."""
        import anyio

        self.server.reset()

        async def body() -> None:
            adapter = self.adapter()
            # Closed inside the very scope it was opened in, with no scope of ours around the close:
            # bridges hold task groups, which must exit in the cancel scope they were entered in.
            with anyio.fail_after(timeout):
                try:
                    await example(self, adapter)
                except ContractViolation:
                    raise
                except Exception as error:
                    raise self.fail(f"the bridge raised {type(error).__name__}: {error}") from error
                finally:
                    await adapter.close()

        self._loop.call(body)

    async def connect(self, adapter: BridgeAdapter, headers: Mapping[str, str] | None = None) -> None:
        """Connect `adapter` to the server, which is healthy at this point: anything but ok is a violation."""
        outcome = await adapter.connect(self.url, dict(headers or {}))
        if outcome.kind != "ok":
            raise self.fail("the bridge could not connect to a healthy server", outcome=outcome)

    def fail(self, what: str, **facts: Any) -> ContractViolation:
        """A violation whose message is `what`, the facts of the example and the journal of the server."""
        lines = [what]
        lines += [f"  {name}: {value}" for name, value in facts.items()]
        fired = [f"#{r.seq} {r.fault!r}" for r in self.server.journal if r.fault is not None]
        lines.append(f"  faults fired: {', '.join(fired) if fired else 'none'}")
        lines.append("  requests the bridge sent:")
        lines += [f"    {line}" for line in self.server.journal.format(limit=40).splitlines()]
        return ContractViolation("\n".join(lines))


class _Loop:
    """Where examples run: an event loop of our own in this thread (no hand-off per example), or, when
    this thread already runs one (an async test called us), a loop in a helper thread."""

    def __enter__(self) -> _Loop:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self._loop: Any = asyncio.new_event_loop()
            self._portal: Any = None
        else:
            from anyio.from_thread import start_blocking_portal

            self._loop = None
            self._portal_cm = start_blocking_portal()
            self._portal = self._portal_cm.__enter__()
        return self

    def call(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        if self._loop is not None:
            return self._loop.run_until_complete(function(*args))
        return self._portal.call(function, *args)

    def spawn(self, function: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        if self._loop is not None:
            return self._loop.create_task(function(*args))
        return self._portal.start_task_soon(function, *args)

    def join(self, handle: Any, timeout: float) -> Any:
        if self._loop is not None:
            import asyncio

            return self._loop.run_until_complete(asyncio.wait_for(handle, timeout))
        return handle.result(timeout)

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is None:
            self._portal_cm.__exit__(None, None, None)
            return
        import asyncio

        loop, self._loop = self._loop, None
        try:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


# -- the properties --------------------------------------------------------------------------------


def _fired(harness: ContractHarness) -> list[Any]:
    return [record.fault for record in harness.server.journal if record.fault is not None]


@dataclass(frozen=True)
class Property:
    """A resilience property: an id, a title, and how to check it against an adapter."""

    property_id: str
    title: str
    build: Callable[[ContractHarness], Callable[[], None]]


def _p1(harness: ContractHarness) -> Callable[[], None]:
    @given(
        names=st.lists(mst.tool_names(max_size=8), max_size=10, unique=True),
        page_size=st.integers(1, 4),
        listing_faults=st.lists(mst.listing_faults(max_page=4, detectable_only=True), max_size=2),
    )
    def listing_is_all_or_nothing(names: list[str], page_size: int, listing_faults: list[faults.Fault]) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.page_size = page_size
            for name in names:
                server.tool(name, returns="ok")
            for fault in listing_faults:
                server.inject(fault)
            outcome = await adapter.connect(h.url, {})
            loaded = await adapter.list_tools() if outcome.kind == "ok" else []
            pages = len(server.journal.requests("tools/list"))
            facts = {"catalogue": names, "page_size": page_size, "outcome": outcome, "loaded": loaded}
            if adapter.page_limit is not None and pages > adapter.page_limit + 1:
                raise h.fail(f"the bridge read {pages} pages, beyond its limit of {adapter.page_limit}", **facts)
            served = list(server.tools)  # the generated names, and a recorded catalogue's on a replay
            if outcome.kind == "ok" and sorted(loaded) != sorted(served):
                missing = sorted(set(served) - set(loaded))
                extra = sorted({n for n in loaded if loaded.count(n) > 1 or n not in served})
                raise h.fail(f"the bridge loaded a wrong tool set (missing {missing}, extra {extra})", **facts)
            if outcome.kind != "ok" and not _fired(h):
                raise h.fail("the listing failed although no fault fired", **facts)

        harness.run(example)

    return listing_is_all_or_nothing


def _p2(harness: ContractHarness) -> Callable[[], None]:
    @given(
        schedule=mst.fault_schedules(faults=mst.call_faults(auth=False), tools=["write"], max_size=3),
        calls=st.integers(1, 3),
    )
    def write_runs_at_most_once(schedule: list[faults.Rule], calls: int) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.tool("write", description="a write: no hints", returns="written")
            await h.connect(adapter)
            for rule in schedule:
                server.inject(rule.fault, method=rule.method, tool=rule.tool, nth=rule.nth, times=rule.times)
            for index in range(calls):
                before = server.executions("write")
                outcome = await adapter.call("write", {"n": index})
                ran = server.executions("write") - before
                facts = {"call": index + 1, "outcome": outcome, "handler runs": ran}
                if ran > 1:
                    raise h.fail(f"a write ran {ran} times for one call", **facts)
                if outcome.kind == "ok" and ran != 1:
                    raise h.fail("the bridge reported success for a write that did not run", **facts)

        harness.run(example)

    return write_runs_at_most_once


def _p3(harness: ContractHarness) -> Callable[[], None]:
    budget = harness.adapter().retry

    @given(transient=st.lists(mst.call_faults(transient_only=True), max_size=budget + 1))
    def read_survives_transient_faults(transient: list[faults.Fault]) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.tool("read", description="a read", read_only=True, returns="read")
            await h.connect(adapter)
            for fault in transient:
                server.inject(fault, method="tools/call", tool="read")
            outcome = await adapter.call("read", {})
            runs = server.executions("read")
            facts = {"retry budget": adapter.retry, "outcome": outcome, "handler runs": runs}
            if runs > 1 + adapter.retry:
                raise h.fail(f"a read ran {runs} times, more than 1 + retry", **facts)
            if len(transient) <= adapter.retry and outcome.kind != "ok":
                raise h.fail(f"a read failed after {len(transient)} transient faults, within its budget", **facts)

        harness.run(example)

    return read_survives_transient_faults


def _p4(harness: ContractHarness) -> Callable[[], None]:
    @given(status=st.sampled_from([401, 403]), read=st.booleans(), via=st.sampled_from(["fault", "rotation"]))
    def auth_refusals_are_final(status: int, read: bool, via: str) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.require_header("Authorization", _TOKEN_ONE, status=status)
            server.tool("tool", description="a tool", read_only=read, returns="ok")
            await h.connect(adapter, {"Authorization": _TOKEN_ONE})
            if via == "fault":
                server.inject(faults.HttpStatus(status, headers={"WWW-Authenticate": "Bearer"}), tool="tool")
            else:
                server.rotate_header("Authorization", _TOKEN_TWO)
            sent_before = len(server.journal)
            outcome = await adapter.call("tool", {})
            calls = [r for r in server.journal.records[sent_before:] if r.rpc_method == "tools/call"]
            facts = {"status": status, "read": read, "via": via, "outcome": outcome}
            if outcome.kind != "auth_error":
                raise h.fail(f"HTTP {status} did not surface as an auth error", **facts)
            if len(calls) != 1:
                raise h.fail(f"the refused call was sent {len(calls)} times", **facts)
            server.rotate_header("Authorization", _TOKEN_TWO)
            adapter.set_headers({"Authorization": _TOKEN_TWO})
            sent_before = len(server.journal)
            outcome = await adapter.call("tool", {})
            stale = [r for r in server.journal.records[sent_before:] if r.headers.get("authorization") != _TOKEN_TWO]
            if stale:
                raise h.fail(f"after the rotation the bridge sent stale credentials (#{stale[0].seq})", **facts)
            if outcome.kind != "ok":
                raise h.fail("the next call with fresh credentials failed", **facts, next_outcome=outcome)

        harness.run(example)

    return auth_refusals_are_final


def _p5(harness: ContractHarness) -> Callable[[], None]:
    @given(how=st.sampled_from(["fault", "lose_session", "restart"]), read=st.booleans())
    def new_session_after_404(how: str, read: bool) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.tool("tool", description="a tool", read_only=read, returns="ok")
            await h.connect(adapter)
            stale = server.session().id
            if how == "fault":
                server.inject(faults.LoseSession(), method="tools/call", tool="tool")
            elif how == "lose_session":
                server.lose_session()
            else:
                server.restart(unknown_session_status=404)
            outcome = await adapter.call("tool", {})
            facts = {"how": how, "read": read, "outcome": outcome, "runs": server.executions("tool")}
            inits = server.journal.requests("initialize")[1:]
            if not inits:
                raise h.fail("after the 404 the bridge did not start a new session", **facts)
            if any(r.headers.get("mcp-session-id") == stale for r in inits):
                raise h.fail("the new initialize carried the stale session id", **facts)
            if outcome.kind != "ok" or server.executions("tool") != 1:
                raise h.fail("the call was not sent once more on the new session", **facts)

        harness.run(example)

    return new_session_after_404


_P6_CASES: list[tuple[str, faults.Fault, str]] = [
    ("call", faults.ErrorResult("scripted"), "tool_error"),
    ("call", faults.ProtocolError(-32000, "scripted"), "tool_error"),
    ("call", faults.HttpStatus(401), "auth_error"),
    ("call", faults.HttpStatus(403), "auth_error"),
    ("call", faults.Drop(after_execution=True), "outcome_unknown"),
    ("call", faults.Drop(), "outcome_unknown"),
    ("call", faults.MalformedSse(), "outcome_unknown"),
    ("connect", faults.PageError(1), "connection_error"),
    ("connect", faults.MalformedPage(1), "connection_error"),
    ("connect", faults.HttpStatus(401), "auth_error"),
]


def _p6(harness: ContractHarness) -> Callable[[], None]:
    @given(case=st.sampled_from(_P6_CASES))
    def each_fault_its_own_error(case: tuple[str, faults.Fault, str]) -> None:
        where, fault, expected = case

        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.tool("write", description="a write: no hints", returns="ok")
            if where == "connect":
                server.inject(fault, method="initialize" if isinstance(fault, faults.HttpStatus) else "tools/list")
            outcome = await adapter.connect(h.url, {})
            if where == "call":
                if outcome.kind != "ok":
                    raise h.fail("the bridge could not connect to a healthy server", outcome=outcome)
                server.inject(fault, method="tools/call", tool="write")
                outcome = await adapter.call("write", {})
            if outcome.kind != expected:
                raise h.fail(f"{fault!r} at {where} surfaced as {outcome.kind}, not {expected}", outcome=outcome)

        harness.run(example)

    return each_fault_its_own_error


def _p7(harness: ContractHarness) -> Callable[[], None]:
    @given(result=mst.call_results(errors=True, max_blocks=4))
    def rendering_is_total_and_deterministic(result: Any) -> None:
        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            server = h.server
            server.tool("tool", description="answers the generated result", read_only=True, returns=result)
            await h.connect(adapter)
            first = await adapter.call("tool", {})
            second = await adapter.call("tool", {})
            expected = "tool_error" if result.is_error else "ok"
            facts = {"result": result, "first": first, "second": second}
            if first.kind != expected or second.kind != expected:
                raise h.fail(f"a valid result did not render as {expected}", **facts)
            if first.text != second.text:
                raise h.fail("the same result rendered two different ways", **facts)

        harness.run(example)

    return rendering_is_total_and_deterministic


PROPERTIES: dict[str, Property] = {
    prop.property_id: prop
    for prop in (
        Property("P1", "Listing is all-or-nothing, within the page limit", _p1),
        Property("P2", "A write runs at most once, exactly once when reported ok", _p2),
        Property("P3", "A read survives up to `retry` transient faults, runs at most 1 + retry times", _p3),
        Property("P4", "401/403 are never retried; the next call sends fresh credentials", _p4),
        Property("P5", "After a 404 the bridge starts a new session and sends the call once more", _p5),
        Property("P6", "Each fault surfaces as its own kind of error", _p6),
        Property("P7", "Rendering is total and deterministic for every valid result", _p7),
    )
}


# -- running ---------------------------------------------------------------------------------------


def _settings(max_examples: int, derandomize: bool) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )


def _counterexample(error: BaseException) -> str:
    notes = [note for note in getattr(error, "__notes__", []) if not note.startswith("You can reproduce")]
    message = str(error) if isinstance(error, AssertionError) else f"{type(error).__name__}: {error}"
    return "\n".join([*notes, message]).strip()


def check_property(
    harness: ContractHarness, property_id: str, *, max_examples: int = 100, derandomize: bool = True
) -> PropertyResult:
    """Check one property with `harness`; never raises for a failing property, returns its verdict."""
    prop = PROPERTIES[property_id]
    test = _settings(max_examples, derandomize)(prop.build(harness))
    examples = 0
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]

    @functools.wraps(inner)
    def counted(*args: Any, **kwargs: Any) -> None:
        nonlocal examples
        examples += 1
        inner(*args, **kwargs)

    test.hypothesis.inner_test = counted  # type: ignore[attr-defined]
    started = time.perf_counter()
    try:
        with harness.fresh_loop():
            test()
    except Exception as error:
        return PropertyResult(
            property_id, prop.title, False, _counterexample(error), examples, time.perf_counter() - started
        )
    return PropertyResult(property_id, prop.title, True, None, examples, time.perf_counter() - started)


def run_contract(
    factory: AdapterFactory,
    *,
    max_examples: int = 100,
    properties: Sequence[str] | None = None,
    transport: str = "asgi",
    derandomize: bool = True,
    progress: Callable[[PropertyResult], None] | None = None,
    server: TestMcpServer | None = None,
) -> list[PropertyResult]:
    """Check every property (or those named) against the bridge that `factory` makes.

    `server` runs them on a server of yours, e.g. `TestMcpServer.from_cassette(...)`: each example
    resets it and adds its own tools beside the recorded catalogue.
    """
    chosen = list(properties) if properties is not None else list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"unknown properties {unknown}; known: {', '.join(PROPERTIES)}")
    results = []
    with ContractHarness(factory, transport=transport, server=server) as harness:
        for property_id in chosen:
            result = check_property(harness, property_id, max_examples=max_examples, derandomize=derandomize)
            results.append(result)
            if progress is not None:
                progress(result)
    return results


@contextlib.contextmanager
def _harness(factory: AdapterFactory, transport: str) -> Iterator[ContractHarness]:
    with ContractHarness(factory, transport=transport) as harness:
        yield harness


def resilience_suite(
    factory: AdapterFactory, *, max_examples: int = 100, transport: str = "asgi", expect_fail: Sequence[str] = ()
) -> Callable[[str], None]:
    """A pytest test, one case per property: `test_my_bridge = resilience_suite(MyAdapter)`.

    Properties named in `expect_fail` are marked `xfail(strict=True)`: the suite then documents
    which guarantees a bridge does not give, and tells you when it starts to.
    """
    import pytest

    unknown = [p for p in expect_fail if p not in PROPERTIES]
    if unknown:
        raise ValueError(f"expect_fail names unknown properties {unknown}; known: {', '.join(PROPERTIES)}")
    cases = [
        pytest.param(pid, id=pid, marks=[pytest.mark.xfail(reason=f"{pid} is not held", strict=True)])
        if pid in expect_fail
        else pytest.param(pid, id=pid)
        for pid in PROPERTIES
    ]

    @pytest.mark.parametrize("property_id", cases)
    def test_resilience(property_id: str) -> None:
        with _harness(factory, transport) as harness:
            result = check_property(harness, property_id, max_examples=max_examples)
        if not result.passed:
            raise ContractViolation(f"{property_id} ({result.title}) failed:\n{result.counterexample}")

    test_resilience.__doc__ = f"The resilience contract P1-P7 holds for the bridge {getattr(factory, 'name', '')!r}."
    return test_resilience


# -- interleavings ---------------------------------------------------------------------------------


class _Driver:
    """One adapter kept in one task across many steps, as a stateful test needs (bridges hold task groups)."""

    def __init__(self, harness: ContractHarness) -> None:
        import anyio

        self._harness = harness
        self._send, receive = anyio.create_memory_object_stream[Any](0)
        self._done = harness._loop.spawn(self._drive, receive)

    async def _drive(self, receive: Any) -> None:
        adapter = self._harness.adapter()
        try:
            async with receive:
                async for step, reply in receive:
                    result: tuple[Any, Exception | None]
                    try:
                        result = (await step(adapter), None)
                    except Exception as error:
                        result = (None, error)
                    async with reply:
                        await reply.send(result)
        finally:
            await adapter.close()

    def step(self, step: Callable[[BridgeAdapter], Awaitable[Any]], timeout: float = 30) -> Any:
        import anyio

        async def go() -> Any:
            reply, answer = anyio.create_memory_object_stream[Any](1)
            with anyio.fail_after(timeout):
                await self._send.send((step, reply))
                async with answer:
                    result, error = await answer.receive()
            if error is not None:
                raise error
            return result

        return self._harness._loop.call(go)

    def close(self, timeout: float = 30) -> None:
        self._harness._loop.call(self._send.aclose)
        self._harness._loop.join(self._done, timeout)


def resilience_machine(factory: AdapterFactory, *, transport: str = "asgi") -> type:
    """A Hypothesis `RuleBasedStateMachine` that interleaves calls, faults, lost sessions, restarts and
    credential rotations against one connected bridge, checking the ledger after every step.

    Use it as `TestMyBridgeMachine = resilience_machine(MyAdapter).TestCase`.
    """
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    class ResilienceMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.harness = ContractHarness(factory, transport=transport).__enter__()
            self.server = self.harness.server
            self.server.reset()
            self.token = 1
            self.server.require_header("Authorization", self._bearer())
            self.server.tool("read", description="a read", read_only=True, returns="r")
            self.server.tool("write", description="a write", returns="w")
            self.sent = {"read": 0, "write": 0}
            self.driver: _Driver | None = None
            self.retry = 0

        def _bearer(self) -> str:
            return f"Bearer machine-{self.token}"

        @initialize()
        def connect(self) -> None:
            self.driver = _Driver(self.harness)
            url = self.harness.url
            outcome = self.driver.step(lambda adapter: adapter.connect(url, {"Authorization": self._bearer()}))
            assert outcome.kind == "ok", f"the bridge could not connect to a healthy server: {outcome}"
            self.retry = self.driver.step(_retry_of)

        def _call(self, tool: str) -> Outcome:
            assert self.driver is not None
            before = self.server.executions(tool)
            outcome: Outcome = self.driver.step(lambda adapter: adapter.call(tool, {}))
            self.sent[tool] += 1
            ran = self.server.executions(tool) - before
            limit = 1 if tool == "write" else 1 + self.retry
            assert ran <= limit, f"one call of {tool!r} ran {ran} times ({outcome})\n{self.server.journal.format()}"
            if outcome.kind == "ok":
                assert ran >= 1, f"{tool!r} reported ok but never ran\n{self.server.journal.format()}"
            return outcome

        @rule()
        def call_read(self) -> None:
            self._call("read")

        @rule()
        def call_write(self) -> None:
            self._call("write")

        @rule(fault=mst.call_faults(auth=False), tool=st.sampled_from(["read", "write"]))
        def inject_fault(self, fault: faults.Fault, tool: str) -> None:
            self.server.inject(fault, method="tools/call", tool=tool)

        @precondition(lambda self: bool(self.server.sessions.alive))
        @rule()
        def lose_session(self) -> None:
            self.server.lose_session()

        @rule(status=st.sampled_from([404, 400]))
        def restart(self, status: int) -> None:
            self.server.restart(unknown_session_status=status)

        @rule()
        def rotate_credentials(self) -> None:
            assert self.driver is not None
            self.token += 1
            self.server.rotate_header("Authorization", self._bearer())
            bearer = self._bearer()

            async def rotate(adapter: BridgeAdapter) -> None:
                adapter.set_headers({"Authorization": bearer})

            self.driver.step(rotate)

        @invariant()
        def ledger_within_what_was_sent(self) -> None:
            assert self.server.executions("write") <= self.sent["write"]
            assert self.server.executions("read") <= self.sent["read"] * (1 + self.retry)

        def teardown(self) -> None:
            try:
                if self.driver is not None:
                    self.driver.close()
            finally:
                self.harness.__exit__(None, None, None)

    ResilienceMachine.__name__ = f"ResilienceMachine_{getattr(factory, 'name', 'bridge')}"
    return ResilienceMachine


async def _retry_of(adapter: BridgeAdapter) -> int:
    return adapter.retry
