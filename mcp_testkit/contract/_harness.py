"""Where examples run: a `TestMcpServer`, an event loop, a guarded adapter, a time limit per example,
and the trace (inputs, faults fired, requests, captured logs) that every verdict carries."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._renamed import renamed_attribute, renamed_keywords
from mcp_testkit._wire.eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.contract._adapter_guard import HOST_HINT, GuardedAdapter, stalled_adapter
from mcp_testkit.contract._errors import ContractError, ContractViolation, traceback_text
from mcp_testkit.contract._event_loop import CheckpointedTransport, EventLoop
from mcp_testkit.contract._facts import BridgeFacts, declared_eras, declared_loggers, takes_keyword
from mcp_testkit.contract._firing import Firing, firing
from mcp_testkit.contract._hang import BridgeHung
from mcp_testkit.contract._ledger import CallLedger
from mcp_testkit.contract._log_capture import LogCapture
from mcp_testkit.contract._time_limit import DEFAULT_EXAMPLE_TIMEOUT_S

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory, BridgeAdapter, Outcome
    from mcp_testkit.server import TestMcpServer

__all__ = ["BridgeFacts", "ContractError", "ContractHarness", "ContractViolation", "server_fits_era", "unfit_server"]

_TRACE_HEAD = 40
_TRACE_TAIL = 20
_FAULTS_SHOWN = 10


def server_fits_era(server: TestMcpServer, era: str) -> bool:
    """Whether the contract can run `era`'s properties on `server`: a server of the handshake era only for the
    handshake era (a bridge that probes must meet a server from before 2026-07-28), one that speaks the stateless
    era for the stateless era."""
    return tuple(server.eras) == (HANDSHAKE,) if era == HANDSHAKE else STATELESS in server.eras


def unfit_server(server: TestMcpServer, era: str) -> str:
    """What to do when `server` cannot host `era`'s properties (see `server_fits_era`)."""
    spoken = " and ".join(server.eras)
    if era == HANDSHAKE:
        return (
            f"server {server.name!r} speaks the {spoken} eras: the handshake era's properties need a server of the "
            "handshake era only (a bridge that probes would speak 2026-07-28 to it), so give one with "
            "eras=('handshake',), e.g. TestMcpServer.from_cassette(path, eras=('handshake',)), or check the "
            "stateless era only"
        )
    return (
        f"server {server.name!r} speaks the {spoken} era only: the stateless era's properties need a server that "
        "speaks 2026-07-28, so check the handshake era only (eras=('handshake',))"
    )


class ContractHarness:
    """A `TestMcpServer` and an event loop, shared by every example of a contract run in one protocol era.

    `via="asgi"` runs the bridge in-process (fast); `via="socket"` serves over 127.0.0.1. Each
    example gets a reset server and a fresh adapter, and must end within its time limit
    (`example_timeout_s` seconds, or when None one derived from the bridge's declared waits): an example
    that does not is reported as a hang, with the step it hung in and its trace. The log records that
    reach the root logger (or a logger the adapter names in `loggers`) while an example runs are part
    of that trace; nothing else of the process's logging is touched.

    `era="handshake"` serves the handshake era only (a server from before 2026-07-28: a bridge that
    probes falls back); `era="stateless"` serves both eras, as the `mcp` SDK's server does, so a bridge
    may legitimately fall back to the handshake: `spoken_era()` says whether it did. `server` is a
    server of yours to run on (a replay of a recorded one, say) instead of a fresh empty one; it must
    fit the era: the handshake era only for `era="handshake"`, the stateless era among its eras for
    `era="stateless"` (`server_fits_era` says whether it does).
    """

    example_timeout = renamed_attribute("example_timeout", "example_timeout_s")
    transport = renamed_attribute("transport", "via")

    @renamed_keywords(example_timeout="example_timeout_s", transport="via")
    def __init__(
        self,
        factory: AdapterFactory,
        *,
        via: str = "asgi",
        example_timeout_s: float | None = None,
        era: str = HANDSHAKE,
        server: TestMcpServer | None = None,
    ) -> None:
        if via not in ("asgi", "socket"):
            raise ValueError(f"via must be 'asgi' or 'socket' (how the bridge reaches the server), not {via!r}")
        if era not in ERAS:
            raise ValueError(f"era must be 'handshake' or 'stateless' (2026-07-28), not {era!r}")
        limit = example_timeout_s
        if limit is not None and (not isinstance(limit, (int, float)) or limit <= 0):
            raise ValueError(
                f"example_timeout_s must be a positive number of seconds or None (it follows the bridge), "
                f"not {example_timeout_s!r}"
            )
        self.factory = factory
        self.via = via
        if server is not None and not server_fits_era(server, era):
            raise ValueError(unfit_server(server, era))
        self.era = era
        self.example_timeout_s = float(example_timeout_s) if example_timeout_s is not None else None
        """The limit the user gave for one example; None: derived per example from the bridge's declared waits."""
        self._given = server
        self.step = "start"
        self.steps: list[tuple[str, float]] = []
        """The adapter steps of the running example and when each began: what a hang report names."""
        self._marks: list[int] = []
        """The journal's length when each of `steps` began."""
        self.deadline = float("inf")
        """When the running example's time is up, on the event loop's clock."""
        self.firing = Firing()
        """What fired in the last example, as the server reports it (its journal and its rules)."""
        self.ledger = CallLedger()
        """The write calls of the running example, checked against the handler runs after the adapter's close."""
        self._stack = contextlib.ExitStack()
        self._logs = LogCapture()
        self.server: TestMcpServer
        self._loop: EventLoop
        self._asgi: Any = None
        self._takes_era: bool | None = None
        self._spoken: tuple[str, str | None] | None = None
        self._unconnected: str | None = None
        self.connect_reported: str | None = None
        """The property whose verdict reported that the bridge cannot connect; the others of the era are not run."""

    # -- the server ----------------------------------------------------------------------------------

    def _server(self) -> TestMcpServer:
        from mcp_testkit.server import TestMcpServer

        if self._given is not None:
            return self._given
        # The handshake column is a server from before 2026-07-28; the stateless column one of both eras,
        # the shape of the SDK's own server, where a bridge's fallback to the handshake is legitimate.
        eras = (HANDSHAKE,) if self.era == HANDSHAKE else (HANDSHAKE, STATELESS)
        return TestMcpServer(name="contract", eras=eras)

    def __enter__(self) -> ContractHarness:
        close = getattr(self.factory, "close", None)
        if not isinstance(self.factory, type) and callable(close):
            # A factory object that owns resources across examples (a driver's processes) is closed with the run.
            self._stack.callback(close)
        self.server = self._server()
        if self.via == "asgi":
            self._asgi = CheckpointedTransport(self.server.asgi_app)
        elif not self.server.started:  # a server given already serving is the caller's to stop
            self._stack.enter_context(self.server)
        self._loop = self._stack.enter_context(EventLoop())
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def fresh_loop(self) -> Iterator[None]:
        """A new event loop for what runs inside: a bridge that breaks its loop spoils one property only."""
        with EventLoop() as loop:
            previous, self._loop = self._loop, loop
            try:
                yield
            finally:
                self._loop = previous

    @property
    def url(self) -> str:
        return self.server.url if self.via == "socket" else "http://127.0.0.1/mcp"

    def adapter(self) -> BridgeAdapter:
        """A fresh adapter from the factory, routed in-process when the harness is, and asked to speak the
        harness's era when the adapter declares it can be (its `eras`)."""
        if self._takes_era is None:
            # The first adapter, made without era=, says whether the factory takes it; when not, it is the one.
            first = self._make(era=False)
            self._takes_era = self.era in (declared_eras(first) or ()) and takes_keyword(self.factory, "era")
            if not self._takes_era:
                return first
        return self._make(era=self._takes_era)

    def _make(self, *, era: bool) -> BridgeAdapter:
        try:
            if era:
                return self.factory(transport=self._asgi, era=self.era)  # type: ignore[call-arg]
            return self.factory(transport=self._asgi)
        except Exception as exc:
            raise ContractError(
                f"the adapter factory raised {type(exc).__name__}: {exc}\n{traceback_text(exc)}"
            ) from exc

    def facts(self) -> BridgeFacts:
        """What the adapter declares (retry, page_limit, timeout_s, sessions, eras), from an adapter never
        connected, and the era this harness checks."""
        return BridgeFacts.of(self.adapter(), self.era)

    def spoken_era(self) -> tuple[str, str | None]:
        """Which era the bridge speaks to this harness's healthy server, and its trace when that is not
        the harness's era: ('stateless', None), or ('handshake', why) when it fell back.

        Found once per harness (in either era, where it also finds whether the bridge connects at all: see
        `cannot_connect`), by connecting and calling one read: a bridge that answers the stateless
        column in the handshake era (it fell back, or never tried 2026-07-28) gets no stateless verdict.
        A hang or an adapter's error here concludes nothing: each property reports it.
        """
        if self._spoken is None:
            self._spoken = self._probe()
        return self._spoken

    def cannot_connect(self) -> str | None:
        """The trace of the bridge failing to connect to this harness's healthy server, or None when it connects
        (or hung or raised there: the properties report that). Found once per harness, with `spoken_era()`."""
        self.spoken_era()
        return self._unconnected

    def _probe(self) -> tuple[str, str | None]:
        spoken: dict[str, str | None] = {}

        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            h.server.tool("read", description="a read", read_only=True, returns="ok")
            connected = await adapter.connect(h.url, {})
            if connected.kind != "ok":
                self._unconnected = str(
                    h.fail(
                        "the bridge could not connect to a healthy server (one tool, no fault placed)",
                        outcome=connected,
                    )
                )
                return
            if self.era != STATELESS:
                return
            called = await adapter.call("read", {}) if connected.kind == "ok" else None
            work = [r for r in h.server.journal if r.rpc_method in ("tools/list", "tools/call")]
            if work and all(r.era == HANDSHAKE for r in work):
                spoken["handshake"] = str(
                    h.fail(
                        "the bridge spoke the handshake era to a server of both eras: it fell back, or never tried "
                        "2026-07-28, so it has no verdict in the stateless era",
                        connect=connected,
                        call=called if called is not None else "(not called)",
                    )
                )

        with self.fresh_loop():
            try:
                self.run(example)
            except (ContractViolation, ContractError):
                pass  # it hung, or its adapter raised or stalled: no conclusion here; the properties report it
        if "handshake" in spoken:
            return HANDSHAKE, spoken["handshake"]
        return self.era, None

    # -- running one example -------------------------------------------------------------------------

    @renamed_keywords(timeout="timeout_s")
    def run(
        self, example: Callable[[ContractHarness, BridgeAdapter], Awaitable[None]], timeout_s: float | None = None
    ) -> None:
        """Run one example on a freshly reset server with a fresh adapter; always closes the adapter.

        Raises `ContractViolation` when the bridge broke the property or hung, `ContractError` when
        the harness or an adapter method raised.
        """
        import anyio

        self.server.reset()
        self._logs.records.clear()
        self.ledger.clear()
        self.step = "start"
        timeout = timeout_s if timeout_s is not None else self.example_timeout_s or DEFAULT_EXAMPLE_TIMEOUT_S

        finished: set[int] = set()
        answered_by_deadline: set[int] = set()
        sent_by_deadline: list[int] = []
        unsubscribe = self.server.journal.subscribe(lambda record: finished.add(record.seq))

        async def body() -> None:
            import asyncio

            adapter: Any = GuardedAdapter(self.adapter(), self)
            started = anyio.current_time()
            self.steps = [("start", started)]
            self._marks = [0]
            self.deadline = started + timeout
            # What the server had answered when time ran out (closing the bridge ends what was still open).
            def time_is_up() -> None:
                answered_by_deadline.update(finished)
                sent_by_deadline.append(len(self.server.journal))

            at_deadline = asyncio.get_running_loop().call_at(self.deadline, time_is_up)
            raised: BaseException | None = None
            raised_at = 0.0
            # The example's logs only: one handler, on the root logger and the adapter's `loggers`, while it runs.
            with self._logs.watching(declared_loggers(adapter)):
                # The adapter is closed inside the very scope it was opened in, with no scope of ours around
                # the close: bridges hold task groups, which must exit in the cancel scope they were entered in.
                with anyio.CancelScope(deadline=started + timeout) as scope:
                    try:
                        await example(self, adapter)
                    except (ContractViolation, ContractError) as exc:
                        raised, raised_at = exc, anyio.current_time()
                    except Exception as exc:
                        raised, raised_at = (
                            ContractError(
                                f"the contract harness raised {type(exc).__name__} in {self.step}: {exc}\n"
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
            at_deadline.cancel()
            self.firing = firing(self.server)
            if isinstance(raised, ContractError) and raised_at <= started + timeout:
                # The adapter raised before the deadline: its error, not a hang of the bridge, even when closing
                # it then ran past the deadline.
                raise raised
            if scope.cancel_called:
                # The deadline passed: a hang, even when the bridge ignored the cancellation and went on.
                deadline = started + timeout
                index = [number for number, (_, at) in enumerate(self.steps) if at <= deadline][-1]
                hung_in = self.steps[index][0]
                end = sent_by_deadline[0] if sent_by_deadline else None
                sent = self.server.journal.records[self._marks[index] : end]
                stalled = stalled_adapter(adapter, hung_in, timeout, sent, answered_by_deadline)
                if stalled is not None:
                    raise stalled
                overran = anyio.current_time() - deadline
                facts = {"handler runs": _handler_runs(self.server)}
                if overran > 1:
                    facts["after the deadline"] = f"it went on for {overran:.1f} s more"
                raise BridgeHung(str(self.fail(f"hung in {hung_in} after {timeout:g} s", **facts)))
            if raised is not None:
                raise raised
            # Every property that calls tools ends here: what the bridge sent when it closed counts too.
            breach = self.ledger.breach(self.server)
            if breach is not None:
                raise self.fail(f"after close(): {breach.what}", **breach.facts)
            misplaced = [error for error in self.server.errors if isinstance(error, faults.MisplacedFault)]
            if misplaced:
                raise ContractError(f"the contract harness injected a fault of another era: {misplaced[0]}")

        try:
            self._loop.call(body)
        except (ContractViolation, ContractError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            # A cancellation or a task group's error that escaped the example's scope: an adapter that left a task
            # group of its bridge open in the contract's task. No verdict about the bridge, and never an escape.
            what = f"the example ended with {type(exc).__name__} in {self.step}: {exc}"
            raise ContractError(f"{what} ({HOST_HINT})\n{traceback_text(exc)}") from exc
        finally:
            unsubscribe()

    async def connect(self, adapter: BridgeAdapter, headers: Mapping[str, str] | None = None) -> None:
        """Connect `adapter` to the server, which is healthy at this point: anything but ok is a violation."""
        outcome = await adapter.connect(self.url, dict(headers or {}))
        if outcome.kind != "ok":
            raise self.fail("the bridge could not connect to a healthy server", outcome=outcome)

    def began(self, step: str) -> None:
        """Note the journal's length as an adapter step begins (the guard calls it after adding the step)."""
        self._marks.append(len(self.server.journal))

    def called(self, tool: str, arguments: Mapping[str, Any], outcome: Outcome) -> None:
        """Note a call the example made through the adapter, for the ledger checked after close."""
        self.ledger.called(self.server, tool, arguments, outcome)

    def fired(self) -> list[Any]:
        """The faults that fired in this example, in order."""
        return [record.fault for record in self.server.journal if record.fault is not None]

    def fail(self, what: str, **facts: Any) -> ContractViolation:
        """A violation whose message is `what`, the facts of the example, the journal and the captured logs."""
        lines = [what]
        lines += [f"  {name}: {value}" for name, value in facts.items()]
        fired = [f"#{r.seq} {r.fault!r}" for r in self.server.journal if r.fault is not None]
        if len(fired) > _FAULTS_SHOWN:
            fired = [*fired[:_FAULTS_SHOWN], f"... {len(fired) - _FAULTS_SHOWN} more"]
        lines.append(f"  faults fired: {', '.join(fired) if fired else 'none'}")
        lines.append("  requests the bridge sent:")
        lines += [f"    {line}" for line in _requests(self.server)]
        logs = self._logs.lines()
        if logs:
            lines.append(f"  log records during the example (last {len(logs)}):")
            lines += [f"    {line}" for line in logs]
        return ContractViolation("\n".join(lines))


def _handler_runs(server: TestMcpServer) -> str:
    """How often each tool's handler ran in the example so far: `write 1, read 0`, or `none`."""
    runs = {name: server.executions(name) for name in server.tools}
    return ", ".join(f"{name} {count}" for name, count in runs.items() if count) or "none"


def _requests(server: TestMcpServer) -> list[str]:
    records = server.journal.records
    if not records:
        return ["(none)"]
    if len(records) <= _TRACE_HEAD + _TRACE_TAIL:
        return [r.summary() for r in records]
    skipped = len(records) - _TRACE_HEAD - _TRACE_TAIL
    return [
        *(r.summary() for r in records[:_TRACE_HEAD]),
        f"... {skipped} more requests ...",
        *(r.summary() for r in records[-_TRACE_TAIL:]),
    ]
