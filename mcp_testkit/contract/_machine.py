"""`resilience_machine`: a Hypothesis state machine that interleaves calls, faults, lost sessions,
restarts and credential rotations against one connected bridge, checking the ledger after every step."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit import strategies as mst
from mcp_testkit._renamed import renamed_keywords
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.contract._errors import BridgeFellBack
from mcp_testkit.contract._harness import ContractHarness
from mcp_testkit.contract._properties import place
from mcp_testkit.contract._time_limit import DEFAULT_EXAMPLE_TIMEOUT_S

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory, BridgeAdapter, Outcome

__all__ = ["resilience_machine"]


class _Driver:
    """One adapter kept in one task across many steps, as a stateful test needs (bridges hold task groups)."""

    def __init__(self, harness: ContractHarness) -> None:
        import anyio

        self._harness = harness
        self._send, receive = anyio.create_memory_object_stream[Any](0)
        self._done = harness.loop.spawn(self._drive, receive)

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

    def step(self, step: Callable[[BridgeAdapter], Awaitable[Any]]) -> Any:
        import anyio

        async def go() -> Any:
            reply, answer = anyio.create_memory_object_stream[Any](1)
            with anyio.fail_after(self._harness.example_timeout_s or DEFAULT_EXAMPLE_TIMEOUT_S):
                await self._send.send((step, reply))
                async with answer:
                    result, error = await answer.receive()
            if error is not None:
                raise error
            return result

        return self._harness.loop.call(go)

    def close(self) -> None:
        self._harness.loop.call(self._send.aclose)
        self._harness.loop.join(self._done, self._harness.example_timeout_s or DEFAULT_EXAMPLE_TIMEOUT_S)


@dataclass(frozen=True)
class _Setup:
    """What a machine class is made for: the factory, how the bridge reaches the server, the example timeout, the
    era."""

    factory: AdapterFactory
    via: str
    example_timeout_s: float | None
    era: str


class _MachineSteps:
    """What the machine's steps do, whichever rules of its era call them: one connected bridge, its calls counted
    against the server's handler runs, credentials rotated, the harness closed at teardown."""

    made_for: ClassVar[_Setup]

    def __init__(self) -> None:
        super().__init__()
        setup = self.made_for
        self.harness = ContractHarness(
            setup.factory,
            via=setup.via,
            example_timeout_s=setup.example_timeout_s or DEFAULT_EXAMPLE_TIMEOUT_S,
            era=setup.era,
        ).__enter__()
        # In the stateless era, a bridge that speaks the handshake era to a server of both has no verdict.
        self.fell_back = self.harness.spoken_era()[1]
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

    def _connect(self) -> None:
        if self.fell_back is not None:
            raise BridgeFellBack(f"no verdict in the {self.made_for.era} era: {self.fell_back}")
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

    def _rotate_credentials(self) -> None:
        assert self.driver is not None
        self.token += 1
        self.server.rotate_header("Authorization", self._bearer())
        bearer = self._bearer()

        async def rotate(adapter: BridgeAdapter) -> None:
            adapter.set_headers({"Authorization": bearer})

        self.driver.step(rotate)

    def _check_ledger(self) -> None:
        assert self.server.executions("write") <= self.sent["write"]
        assert self.server.executions("read") <= self.sent["read"] * (1 + self.retry)

    def teardown(self) -> None:
        try:
            if self.driver is not None:
                self.driver.close()
        finally:
            self.harness.__exit__(None, None, None)


@renamed_keywords(example_timeout="example_timeout_s", transport="via")
def resilience_machine(
    factory: AdapterFactory,
    *,
    via: str = "asgi",
    example_timeout_s: float | None = None,
    era: str = HANDSHAKE,
) -> type:
    """A Hypothesis `RuleBasedStateMachine` that interleaves calls, faults, lost sessions, restarts and
    credential rotations against one connected bridge, checking the ledger after every step.

    `era="stateless"` drives the bridge against a server of both eras with the faults of 2026-07-28
    (no sessions to lose: those rules never run); a bridge that falls back to the handshake era there
    fails with `BridgeFellBack` saying so, whatever else it does. Use it as
    `TestMyBridgeMachine = resilience_machine(MyAdapter).TestCase`.
    """
    from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

    has_sessions = era in faults.LoseSession.eras  # a stateless request has no session to lose or restart

    class ResilienceMachine(_MachineSteps, RuleBasedStateMachine):
        made_for = _Setup(factory, via, example_timeout_s, era)

        @initialize()
        def connect(self) -> None:
            self._connect()

        @rule()
        def call_read(self) -> None:
            self._call("read")

        @rule()
        def call_write(self) -> None:
            self._call("write")

        @rule(fault=mst.call_faults(auth=False, era=era), tool=st.sampled_from(["read", "write"]))
        def inject_fault(self, fault: faults.Fault, tool: str) -> None:
            place(self.server, fault, method="tools/call", tool=tool)

        @precondition(lambda self: has_sessions and bool(self.server.sessions.alive))
        @rule()
        def lose_session(self) -> None:
            self.server.lose_session()

        @precondition(lambda self: has_sessions)
        @rule(status=st.sampled_from([404, 400]))
        def restart(self, status: int) -> None:
            self.server.restart(unknown_session_status=status)

        @rule()
        def rotate_credentials(self) -> None:
            self._rotate_credentials()

        @invariant()
        def ledger_within_what_was_sent(self) -> None:
            self._check_ledger()

    ResilienceMachine.__name__ = f"ResilienceMachine_{getattr(factory, 'name', 'bridge')}_{era}"
    return ResilienceMachine


async def _retry_of(adapter: BridgeAdapter) -> int:
    return adapter.retry
