"""Where examples run: a `TestMcpServer`, an event loop, a fresh adapter per example and the example's steps. One
example's run within its time limit is `_example_run.py`'s, the server each era's column runs on and the probe of the
era a bridge speaks `_era_column.py`'s, the trace every verdict carries `_trace.py`'s."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit._renamed import renamed_attribute, renamed_keywords
from mcp_testkit._wire.eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.contract._era_column import Probed, column_server_eras, server_fits_era, unfit_server
from mcp_testkit.contract._errors import ContractError, ContractViolation, one_line, traceback_text
from mcp_testkit.contract._event_loop import CheckpointedTransport, EventLoop
from mcp_testkit.contract._example_run import Example, ExampleRun
from mcp_testkit.contract._facts import BridgeFacts, declared_eras, takes_keyword
from mcp_testkit.contract._firing import Firing
from mcp_testkit.contract._ledger import CallLedger
from mcp_testkit.contract._log_capture import LogCapture
from mcp_testkit.contract._time_limit import DEFAULT_EXAMPLE_TIMEOUT_S
from mcp_testkit.contract._trace import violation

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory, BridgeAdapter, Outcome
    from mcp_testkit.server import TestMcpServer

__all__ = ["BridgeFacts", "ContractError", "ContractHarness", "ContractViolation"]


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
        clock: str | None = None,
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
        if clock not in (None, "virtual", "real"):
            raise ValueError(f"clock must be 'virtual', 'real' or None (virtual in-process), not {clock!r}")
        if clock == "virtual" and via != "asgi":
            raise ValueError("clock='virtual' needs via='asgi': over a socket the server keeps the real clock")
        self.factory = factory
        self.via = via
        self.clock = clock or ("virtual" if via == "asgi" else "real")
        """The clock examples run on: 'virtual' (in-process: idle time skipped) or 'real'."""
        self.real_clock_reason: str | None = None
        """Why the examples went to the real clock while this harness ran (its bridge keeps time outside the event
        loop's timers), or None."""
        self._unrelated: frozenset[int] = frozenset()
        if server is not None and not server_fits_era(server, era):
            raise ValueError(unfit_server(server, era))
        self.era = era
        self.example_timeout_s = float(example_timeout_s) if example_timeout_s is not None else None
        """The limit the user gave for one example; None: derived per example from the bridge's declared waits."""
        self._given = server
        self.step = "start"
        self.steps: list[tuple[str, float]] = []
        """The adapter steps of the running example and when each began: what a hang report names."""
        self.marks: list[int] = []
        """The journal's length when each of `steps` began (what tells a stalled adapter from a bridge waiting)."""
        self.deadline = float("inf")
        """When the running example's time is up, on the event loop's clock."""
        self.firing = Firing()
        """What fired in the last example, as the server reports it (its journal and its rules)."""
        self.ledger = CallLedger()
        """The write calls of the running example, checked against the handler runs after the adapter's close."""
        self._stack = contextlib.ExitStack()
        self.logs = LogCapture()
        """The log records of the running example, part of its trace."""
        self.property_id: str | None = None
        """The property whose examples run now (set by `check_property`): a check another property owns, met in
        its example, is reported under that property's promise."""
        self.server: TestMcpServer
        self.loop: EventLoop
        """Where examples run (a fresh one inside `fresh_loop()`)."""
        self._asgi: Any = None
        self._takes_era: bool | None = None
        self.own_era = False
        """Whether adapters are made without `era=` whatever their `eras` say, so that the bridge negotiates its era
        by itself (P18 judges that negotiation): set for the property being run."""
        self._probed: Probed | None = None
        self.connects: Any = None
        """P0's verdict in this era (the bridge connects to a valid server), once known: a `PropertyResult`, not
        named here (that import would close a circle). Where it fails, every other property of the era is blocked.
        `check_property` sets it (running P0's declared cases first when another property is checked before P0); a
        harness per property (`resilience_suite`) is given it."""

    # -- the server ----------------------------------------------------------------------------------

    def _server(self) -> TestMcpServer:
        from mcp_testkit.server import TestMcpServer

        if self._given is not None:
            return self._given
        return TestMcpServer(name="contract", eras=column_server_eras(self.era))

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
        import sys

        # Every thread there now, those started without `threading` (execnet's, under pytest-xdist) among them.
        self._unrelated = frozenset(sys._current_frames())
        self.loop = self._stack.enter_context(self._event_loop(self.clock))
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def _event_loop(self, clock: str) -> EventLoop:
        return EventLoop(virtual=clock == "virtual", unrelated=self._unrelated)

    @contextlib.contextmanager
    def fresh_loop(self, clock: str | None = None) -> Iterator[None]:
        """A new event loop for what runs inside: a bridge that breaks its loop spoils one property only. `clock`
        'real' runs it on the real clock whatever the harness's (a counterexample's confirmation)."""
        with self._event_loop(clock or self.clock) as loop:
            previous, self.loop = self.loop, loop
            try:
                yield
            finally:
                self.loop = previous

    @property
    def url(self) -> str:
        return self.server.url if self.via == "socket" else "http://127.0.0.1/mcp"

    @property
    def client_transport(self) -> Any:
        """The `httpx2` transport that reaches the server as the adapters do: in-process, or None over the socket
        (what a property's own client takes, such as the browser it plays for a bridge's OAuth)."""
        return self._asgi

    def adapter(self) -> BridgeAdapter:
        """A fresh adapter from the factory, routed in-process when the harness is, and asked to speak the
        harness's era when the adapter declares it can be (its `eras`), unless `own_era`: then as the factory makes
        it, negotiating its era by itself."""
        if self.own_era:
            return self._make(era=False)
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
            raise ContractError(f"the adapter factory raised {one_line(exc)}\n{traceback_text(exc)}") from exc

    def facts(self) -> BridgeFacts:
        """What the adapter declares (retry, page_limit, timeout_s, sessions, eras), from an adapter never
        connected, and the era this harness checks."""
        return BridgeFacts.of(self.adapter(), self.era)

    def spoken_era(self) -> tuple[str, str | None]:
        """Which era the bridge speaks to this harness's healthy server, and its trace when that is not
        the harness's era: ('stateless', None), or ('handshake', why) when it fell back.

        Found once per harness, by connecting (which also warms a bridge up before the first property's examples:
        its imports, its first client) and, in the stateless era, calling one read: a bridge that answers the
        stateless column in the handshake era (it fell back, or never tried 2026-07-28) gets no stateless verdict.
        A hang or an adapter's error here concludes nothing: each property reports it.
        """
        if self._probed is None:
            self._probed = probe(self)
        return self._probed.spoke, self._probed.fell_back

    # -- running one example -------------------------------------------------------------------------

    @renamed_keywords(timeout="timeout_s")
    def run(self, example: Example, timeout_s: float | None = None) -> None:
        """Run one example on a freshly reset server with a fresh adapter; always closes the adapter.

        Raises `ContractViolation` when the bridge broke the property or hung, `ContractError` when
        the harness or an adapter method raised.
        """
        timeout = timeout_s if timeout_s is not None else self.example_timeout_s or DEFAULT_EXAMPLE_TIMEOUT_S
        clock = self.loop.clock if self.loop.virtual else None
        if clock is None:
            ExampleRun(self, example, timeout).run()
            return
        clock.watch()
        try:
            ExampleRun(self, example, timeout).run()
        except (ContractViolation, ContractError):
            if not self._leaves_virtual_time():
                raise
        else:
            if not self._leaves_virtual_time():
                return
        ExampleRun(self, example, timeout).run()  # once more, on the real clock: what virtual time may have hidden

    def _leaves_virtual_time(self) -> bool:
        """After an example in virtual time: whether its bridge keeps time outside the loop's timers, in which case
        the harness's examples go to the real clock from now on (and the example is run again there)."""
        clock = self.loop.clock
        reason = clock.clock_dependence() if clock is not None else None
        if clock is None or reason is None:
            return False
        clock.stop_skipping()
        self.clock = "real"
        self.real_clock_reason = reason
        return True

    async def connect(self, adapter: BridgeAdapter, headers: Mapping[str, str] | None = None) -> None:
        """Connect `adapter` to the server, which is healthy at this point: anything but ok is a violation."""
        outcome = await adapter.connect(self.url, dict(headers or {}))
        if outcome.kind != "ok":
            raise self.fail("the bridge could not connect to a healthy server", outcome=outcome)

    def began(self, step: str) -> None:
        """Note the journal's length as an adapter step begins (the guard calls it after adding the step)."""
        self.marks.append(len(self.server.journal))

    def called(self, tool: str, arguments: Mapping[str, Any], outcome: Outcome) -> None:
        """Note a call the example made through the adapter, for the ledger checked after close."""
        self.ledger.called(self.server, tool, arguments, outcome)

    def fired(self) -> list[Any]:
        """The faults that fired in this example, in order."""
        return [record.fault for record in self.server.journal if record.fault is not None]

    def fail(self, what: str, **facts: Any) -> ContractViolation:
        """A violation whose message is `what`, the facts of the example, the journal and the captured logs."""
        return violation(self.server, self.logs, what, facts)


def probe(harness: ContractHarness) -> Probed:
    """Connect a fresh adapter to the harness's healthy server and, in the stateless era, call one read: a bridge
    that answers the stateless column in the handshake era (it fell back, or never tried 2026-07-28) gets no
    stateless verdict. A bridge that does not connect, a hang or an adapter's error here concludes nothing: P0 reports
    the first, each property the others."""
    found: dict[str, str] = {}

    async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
        h.server.tool("read", description="a read", read_only=True, returns="ok")
        connected = await adapter.connect(h.url, {})
        if connected.kind != "ok" or h.era != STATELESS:
            return
        called = await adapter.call("read", {})
        work = [r for r in h.server.journal if r.rpc_method in ("tools/list", "tools/call")]
        if work and all(r.era == HANDSHAKE for r in work):
            found["fell_back"] = str(
                h.fail(
                    "the bridge spoke the handshake era to a server of both eras: it fell back, or never tried "
                    "2026-07-28, so it has no verdict in the stateless era",
                    connect=connected,
                    call=called,
                )
            )

    with harness.fresh_loop():
        try:
            harness.run(example)
        except (ContractViolation, ContractError):
            pass  # it hung, or its adapter raised or stalled: no conclusion here; the properties report it
    fell_back = found.get("fell_back")
    return Probed(HANDSHAKE if fell_back is not None else harness.era, fell_back)
