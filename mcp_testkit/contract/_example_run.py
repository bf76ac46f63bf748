"""One example as the harness runs it: on a freshly reset server with a fresh guarded adapter, within its time
limit, the adapter always closed inside the scope it was opened in; and how it ended: held, a violation or a hang
of the bridge (in the step that was running at the deadline), or an error of the adapter or the harness."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from mcp_testkit import faults
from mcp_testkit.contract._adapter_guard import HOST_HINT, GuardedAdapter, stalled_adapter
from mcp_testkit.contract._errors import ContractError, ContractViolation, traceback_text
from mcp_testkit.contract._facts import declared_loggers
from mcp_testkit.contract._firing import firing
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._trace import handler_runs

if TYPE_CHECKING:
    from mcp_testkit.adapters import BridgeAdapter, Outcome
    from mcp_testkit.contract._event_loop import EventLoop
    from mcp_testkit.contract._facts import BridgeFacts
    from mcp_testkit.contract._firing import Firing
    from mcp_testkit.contract._ledger import CallLedger
    from mcp_testkit.contract._log_capture import LogCapture
    from mcp_testkit.server import TestMcpServer

__all__ = ["Example", "ExampleRun", "Harness"]

Example = Callable[[Any, "BridgeAdapter"], Awaitable[None]]
"""What a property runs on the harness (a `ContractHarness`) and a fresh adapter."""


class Harness(Protocol):
    """What one example's run reads and writes of the harness running it (a `ContractHarness`)."""

    server: TestMcpServer
    loop: EventLoop
    logs: LogCapture
    ledger: CallLedger
    firing: Firing
    step: str
    steps: list[tuple[str, float]]
    marks: list[int]
    deadline: float
    property_id: str | None

    def adapter(self) -> BridgeAdapter: ...

    def facts(self) -> BridgeFacts: ...

    def fail(self, what: str, **facts: Any) -> ContractViolation: ...

    def began(self, step: str) -> None: ...

    def called(self, tool: str, arguments: Mapping[str, Any], outcome: Outcome) -> None: ...


class ExampleRun:
    """One run of `example` on `harness` within `timeout_s` seconds; `run()` raises `ContractViolation` when the bridge
    broke the property or hung, `ContractError` when the harness or an adapter method raised."""

    def __init__(self, harness: Harness, example: Example, timeout_s: float) -> None:
        self.harness = harness
        self.example = example
        self.timeout_s = timeout_s
        self._finished: set[int] = set()
        self.answered: set[int] = set()
        """The requests the server had answered when the example's time ran out (closing the bridge afterwards ends
        what was still open, which must not hide what it was waiting on)."""
        self.sent: int | None = None
        """The journal's length when the example's time ran out; None while it has not."""

    def run(self) -> None:
        h = self.harness
        h.server.reset()
        h.logs.records.clear()
        h.ledger.clear()
        h.step = "start"
        unsubscribe = h.server.journal.subscribe(lambda record: self._finished.add(record.seq))
        try:
            h.loop.call(self._body)
        except (ContractViolation, ContractError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            # A cancellation or a task group's error that escaped the example's scope: an adapter that left a task
            # group of its bridge open in the contract's task. No verdict about the bridge, and never an escape.
            what = f"the example ended with {type(exc).__name__} in {h.step}: {exc}"
            raise ContractError(f"{what} ({HOST_HINT})\n{traceback_text(exc)}") from exc
        finally:
            unsubscribe()

    def _time_is_up(self) -> None:
        self.answered.update(self._finished)
        self.sent = len(self.harness.server.journal)

    async def _body(self) -> None:
        import asyncio

        import anyio

        h = self.harness
        adapter: Any = GuardedAdapter(h.adapter(), h)
        started = anyio.current_time()
        h.steps = [("start", started)]
        h.marks = [0]
        h.deadline = started + self.timeout_s
        timer = asyncio.get_running_loop().call_at(h.deadline, self._time_is_up)
        raised, raised_at, cancelled = await self._attempt(adapter)
        timer.cancel()
        h.firing = firing(h.server)
        if isinstance(raised, ContractError) and raised_at <= h.deadline:
            # The adapter raised before the deadline: its error, not a hang of the bridge, even when closing
            # it then ran past the deadline.
            raise raised
        if cancelled:
            # The deadline passed: a hang, even when the bridge ignored the cancellation and went on.
            raise self._hang(adapter)
        if raised is not None:
            raise raised
        self._after_close()

    async def _attempt(self, adapter: Any) -> tuple[BaseException | None, float, bool]:
        """Run the example until its deadline and close the adapter: what it raised and when, and whether the
        deadline cut it."""
        import anyio

        h = self.harness
        raised: BaseException | None = None
        raised_at = 0.0
        # The example's logs only: one handler, on the root logger and the adapter's `loggers`, while it runs.
        with h.logs.watching(declared_loggers(adapter)):
            # The adapter is closed inside the very scope it was opened in, with no scope of ours around
            # the close: bridges hold task groups, which must exit in the cancel scope they were entered in.
            with anyio.CancelScope(deadline=h.deadline) as scope:
                try:
                    await self.example(h, adapter)
                except (ContractViolation, ContractError) as exc:
                    raised, raised_at = exc, anyio.current_time()
                except Exception as exc:
                    raised, raised_at = (
                        ContractError(
                            f"the contract harness raised {type(exc).__name__} in {h.step}: {exc}\n"
                            f"{traceback_text(exc)}"
                        ),
                        anyio.current_time(),
                    )
                finally:
                    try:
                        await adapter.close()
                    except ContractError as exc:
                        if raised is None:
                            raised, raised_at = exc, anyio.current_time()
        return raised, raised_at, scope.cancel_called

    def _hang(self, adapter: Any) -> ContractError | BridgeHung:
        """What an example that ran past its deadline is: an adapter that stalled while its bridge waited on
        nothing, or else the bridge's hang, in the step that was running at the deadline."""
        import anyio

        h = self.harness
        index = [number for number, (_, at) in enumerate(h.steps) if at <= h.deadline][-1]
        hung_in = h.steps[index][0]
        sent = h.server.journal.records[h.marks[index] : self.sent]
        stalled = stalled_adapter(adapter, hung_in, self.timeout_s, sent, self.answered)
        if stalled is not None:
            return stalled
        overran = anyio.current_time() - h.deadline
        facts = {"handler runs": handler_runs(h.server)}
        if overran > 1:
            facts["after the deadline"] = f"it went on for {overran:.1f} s more"
        return BridgeHung(str(h.fail(f"hung in {hung_in} after {self.timeout_s:g} s", **facts)))

    def _after_close(self) -> None:
        """Every property that calls tools ends here: what the bridge sent when it closed counts too."""
        h = self.harness
        breach = h.ledger.breach(h.server)
        if breach is not None:
            owner = h.property_id
            if owner in (None, "P2"):
                raise h.fail(f"after close(): {breach.what}", **breach.facts)
            # One root cause, one name: a write run twice is P2's broken promise, whichever property's example met it.
            raise h.fail(
                f"breaks P2's promise (a write runs at most once, exactly once when reported ok): after close(), "
                f"{breach.what}, in a {owner} example",
                **breach.facts,
            )
        misplaced = [error for error in h.server.errors if isinstance(error, faults.MisplacedFault)]
        if misplaced:
            raise ContractError(f"the contract harness injected a fault of another era: {misplaced[0]}")
