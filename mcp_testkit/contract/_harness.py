"""Where examples run: a `TestMcpServer`, an event loop, a guarded adapter, a time limit per example,
and the trace (inputs, faults fired, requests, captured logs) that every verdict carries."""

from __future__ import annotations

import collections
import contextlib
import inspect
import logging
import traceback
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import httpx2

from mcp_testkit import faults
from mcp_testkit._eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.adapters import CAPABILITIES, BridgeAdapter, Outcome, SessionMode

if TYPE_CHECKING:
    from mcp_testkit.adapters import AdapterFactory
    from mcp_testkit.server import TestMcpServer

__all__ = ["BridgeFacts", "ContractError", "ContractHarness", "ContractViolation", "server_fits_era", "unfit_server"]

DEFAULT_EXAMPLE_TIMEOUT_S = 10.0
_TRACE_HEAD = 40
_TRACE_TAIL = 20
_LOG_LINES = 30
_FAULTS_SHOWN = 10


class ContractViolation(AssertionError):
    """The bridge broke a property; the message is the readable trace of the example."""


class ContractError(Exception):
    """The harness or the adapter itself raised: no verdict about the bridge; the message has the traceback."""


@dataclass(frozen=True)
class BridgeFacts:
    """What the adapter declares about its bridge, read once per property, and the era the run checks:
    the cases are built from them."""

    retry: int
    page_limit: int | None
    timeout_s: float | None
    sessions: SessionMode
    eras: tuple[str, ...] | None = None
    """The eras the factory can be asked to speak (`factory(transport=..., era=...)`); None: the bridge
    negotiates its era by itself, and the harness only observes which one it spoke."""
    era: str = HANDSHAKE
    """The protocol era the run checks: 'handshake' or 'stateless' (2026-07-28)."""
    capabilities: frozenset[str] = frozenset()
    """What the bridge has beyond the core ("approvals", "tool_cache"): the properties that need one apply."""
    cache_ttl_s: float | None = None
    """With "tool_cache": how long its cache keeps a listing."""

    @classmethod
    def of(cls, adapter: Any, era: str = HANDSHAKE) -> BridgeFacts:
        sessions = getattr(adapter, "sessions", "persistent")
        if sessions not in ("persistent", "per_call"):
            raise ContractError(
                f"adapter {_name(adapter)}: sessions must be 'persistent' or 'per_call', not {sessions!r}"
            )
        retry = getattr(adapter, "retry", None)
        if not isinstance(retry, int) or retry < 0:
            raise ContractError(f"adapter {_name(adapter)}: retry must be an int >= 0, not {retry!r}")
        page_limit = getattr(adapter, "page_limit", None)
        if page_limit is not None and (not isinstance(page_limit, int) or page_limit < 1):
            raise ContractError(f"adapter {_name(adapter)}: page_limit must be an int >= 1 or None, not {page_limit!r}")
        timeout_s = getattr(adapter, "timeout_s", None)
        if timeout_s is not None and (not isinstance(timeout_s, (int, float)) or timeout_s <= 0):
            raise ContractError(
                f"adapter {_name(adapter)}: timeout_s must be a positive number or None, not {timeout_s!r}"
            )
        capabilities = _capabilities(adapter)
        cache_ttl_s = getattr(adapter, "cache_ttl_s", None) if "tool_cache" in capabilities else None
        if "tool_cache" in capabilities and (
            not isinstance(cache_ttl_s, (int, float)) or isinstance(cache_ttl_s, bool) or not cache_ttl_s > 0
        ):
            raise ContractError(
                f"adapter {_name(adapter)}: with 'tool_cache', cache_ttl_s must be a positive number, "
                f"not {cache_ttl_s!r}"
            )
        return cls(
            retry,
            page_limit,
            timeout_s,
            "per_call" if sessions == "per_call" else "persistent",
            _declared_eras(adapter),
            era,
            capabilities,
            cache_ttl_s,
        )


_NEEDS = {
    "approvals": ("require_approval", "approve", "decline"),
    "tool_cache": ("use_tool_cache", "advance_cache_clock"),
}
"""The methods each capability promises (see `ApprovalAdapter` and `ToolCacheAdapter`)."""


def _capabilities(adapter: Any) -> frozenset[str]:
    """The adapter's declared capabilities, checked: known names, and the methods each one needs."""
    declared = getattr(adapter, "capabilities", ())
    if isinstance(declared, str) or not isinstance(declared, Collection) or not all(
        isinstance(name, str) for name in declared
    ):
        raise ContractError(f"adapter {_name(adapter)}: capabilities must be a collection of names, not {declared!r}")
    unknown = sorted(set(declared) - set(CAPABILITIES))
    if unknown:
        raise ContractError(
            f"adapter {_name(adapter)}: unknown capabilities {unknown}; known: {', '.join(CAPABILITIES)}"
        )
    for capability in declared:
        missing = [method for method in _NEEDS[capability] if not callable(getattr(adapter, method, None))]
        if missing:
            raise ContractError(f"adapter {_name(adapter)}: it declares {capability!r} but has no {', '.join(missing)}")
    return frozenset(declared)


def _name(adapter: Any) -> str:
    return repr(getattr(adapter, "name", type(adapter).__name__))


def _takes_keyword(factory: Any, name: str) -> bool:
    """Whether `factory` can be called with `name=`: a wrapper of an adapter that declares `eras` may not pass it
    on, and then gets its adapter made as the wrapper makes it (it is not asked for an era it cannot take)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _declared_eras(adapter: Any) -> tuple[str, ...] | None:
    """The adapter's optional `eras`: those its factory can be asked to speak with `era=`."""
    eras = getattr(adapter, "eras", None)
    if eras is None:
        return None
    if isinstance(eras, str) or not isinstance(eras, (tuple, list)) or not set(eras) <= set(ERAS):
        raise ContractError(
            f"adapter {_name(adapter)}: eras must be None or a tuple of 'handshake' and 'stateless', not {eras!r}"
        )
    return tuple(eras)


class _LogCapture(logging.Handler):
    """Takes every log record of a run (the bridge's, its libraries', ours) off the user's handlers."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: collections.deque[logging.LogRecord] = collections.deque(maxlen=200)
        self._saved: list[tuple[logging.Logger, list[logging.Handler], bool]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def __enter__(self) -> _LogCapture:
        loggers = [logging.getLogger()] + [
            logger for logger in logging.Logger.manager.loggerDict.values() if isinstance(logger, logging.Logger)
        ]
        for logger in loggers:
            if logger.handlers or not logger.propagate:
                self._saved.append((logger, list(logger.handlers), logger.propagate))
                logger.handlers = []
                logger.propagate = True
        logging.getLogger().handlers = [self]
        return self

    def __exit__(self, *exc_info: object) -> None:
        logging.getLogger().handlers = []
        for logger, handlers, propagate in self._saved:
            logger.handlers = handlers
            logger.propagate = propagate
        self._saved = []

    def lines(self) -> list[str]:
        shown = list(self.records)[-_LOG_LINES:]
        lines = []
        for record in shown:
            try:
                message = record.getMessage()
            except Exception as exc:  # a bridge's bad log call must not hide the verdict
                message = f"(unformattable log record: {exc})"
            lines.append(f"{record.levelname} {record.name}: {message}".splitlines()[0][:200])
        return lines


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

    `transport="asgi"` runs the bridge in-process (fast); `"socket"` serves over 127.0.0.1. Each
    example gets a reset server and a fresh adapter, and must end within `example_timeout` seconds:
    an example that does not is reported as a hang, with the step it hung in and its trace.

    `era="handshake"` serves the handshake era only (a server from before 2026-07-28: a bridge that
    probes falls back); `era="stateless"` serves both eras, as the `mcp` SDK's server does, so a bridge
    may legitimately fall back to the handshake: `spoken_era()` says whether it did. `server` is a
    server of yours to run on (a replay of a recorded one, say) instead of a fresh empty one; it must
    fit the era: the handshake era only for `era="handshake"`, the stateless era among its eras for
    `era="stateless"` (`server_fits_era` says whether it does).
    """

    def __init__(
        self,
        factory: AdapterFactory,
        *,
        transport: str = "asgi",
        example_timeout: float = DEFAULT_EXAMPLE_TIMEOUT_S,
        era: str = HANDSHAKE,
        server: TestMcpServer | None = None,
    ) -> None:
        if transport not in ("asgi", "socket"):
            raise ValueError(f"transport must be 'asgi' or 'socket', not {transport!r}")
        if era not in ERAS:
            raise ValueError(f"era must be 'handshake' or 'stateless' (2026-07-28), not {era!r}")
        if not isinstance(example_timeout, (int, float)) or example_timeout <= 0:
            raise ValueError(f"example_timeout must be a positive number of seconds, not {example_timeout!r}")
        self.factory = factory
        self.transport = transport
        if server is not None and not server_fits_era(server, era):
            raise ValueError(unfit_server(server, era))
        self.era = era
        self.example_timeout = float(example_timeout)
        self._given = server
        self.step = "start"
        self.steps: list[tuple[str, float]] = []
        """The adapter steps of the running example and when each began: what a hang report names."""
        self._stack = contextlib.ExitStack()
        self._logs = _LogCapture()
        self.server: TestMcpServer
        self._loop: _Loop
        self._asgi: Any = None
        self._takes_era: bool | None = None
        self._spoken: tuple[str, str | None] | None = None

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
        self._stack.enter_context(self._logs)
        self.server = self._server()
        if self.transport == "asgi":
            self._asgi = _Checkpointed(self.server.asgi_app)
        elif not self.server.started:  # a server given already serving is the caller's to stop
            self._stack.enter_context(self.server)
        self._loop = self._stack.enter_context(_Loop())
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def fresh_loop(self) -> Iterator[None]:
        """A new event loop for what runs inside: a bridge that breaks its loop spoils one property only."""
        with _Loop() as loop:
            previous, self._loop = self._loop, loop
            try:
                yield
            finally:
                self._loop = previous

    @property
    def url(self) -> str:
        return self.server.url if self.transport == "socket" else "http://127.0.0.1/mcp"

    def adapter(self) -> BridgeAdapter:
        """A fresh adapter from the factory, routed in-process when the harness is, and asked to speak the
        harness's era when the adapter declares it can be (its `eras`)."""
        if self._takes_era is None:
            # The first adapter, made without era=, says whether the factory takes it; when not, it is the one.
            first = self._make(era=False)
            self._takes_era = self.era in (_declared_eras(first) or ()) and _takes_keyword(self.factory, "era")
            if not self._takes_era:
                return first
        return self._make(era=self._takes_era)

    def _make(self, *, era: bool) -> BridgeAdapter:
        try:
            if era:
                return self.factory(transport=self._asgi, era=self.era)  # type: ignore[call-arg]
            return self.factory(transport=self._asgi)
        except Exception as exc:
            raise ContractError(f"the adapter factory raised {type(exc).__name__}: {exc}\n{_tb(exc)}") from exc

    def facts(self) -> BridgeFacts:
        """What the adapter declares (retry, page_limit, timeout_s, sessions, eras), from an adapter never
        connected, and the era this harness checks."""
        return BridgeFacts.of(self.adapter(), self.era)

    def spoken_era(self) -> tuple[str, str | None]:
        """Which era the bridge speaks to this harness's healthy server, and its trace when that is not
        the harness's era: ('stateless', None), or ('handshake', why) when it fell back.

        Found once per harness, by connecting and calling one read: a bridge that answers the stateless
        column in the handshake era (it fell back, or never tried 2026-07-28) gets no stateless verdict.
        Raises `ContractError` when the adapter raises.
        """
        if self._spoken is None:
            self._spoken = (self.era, None)
            if self.era == STATELESS:
                self._spoken = self._probe_era()
        return self._spoken

    def _probe_era(self) -> tuple[str, str | None]:
        spoken: dict[str, str | None] = {}

        async def example(h: ContractHarness, adapter: BridgeAdapter) -> None:
            h.server.tool("read", description="a read", read_only=True, returns="ok")
            connected = await adapter.connect(h.url, {})
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
            except ContractViolation:
                pass  # it hung: no conclusion about its era here; the properties report the hang
        if "handshake" in spoken:
            return HANDSHAKE, spoken["handshake"]
        return self.era, None

    # -- running one example -------------------------------------------------------------------------

    def run(self, example: Callable[[ContractHarness, BridgeAdapter], Awaitable[None]]) -> None:
        """Run one example on a freshly reset server with a fresh adapter; always closes the adapter.

        Raises `ContractViolation` when the bridge broke the property or hung, `ContractError` when
        the harness or an adapter method raised.
        """
        import anyio

        self.server.reset()
        self._logs.records.clear()
        self.step = "start"
        timeout = self.example_timeout

        async def body() -> None:
            adapter: Any = _Guarded(self.adapter(), self)
            started = anyio.current_time()
            self.steps = [("start", started)]
            raised: BaseException | None = None
            # The adapter is closed inside the very scope it was opened in, with no scope of ours around
            # the close: bridges hold task groups, which must exit in the cancel scope they were entered in.
            with anyio.CancelScope(deadline=started + timeout) as scope:
                try:
                    await example(self, adapter)
                except (ContractViolation, ContractError) as exc:
                    raised = exc
                except Exception as exc:
                    raised = ContractError(
                        f"the contract harness raised {type(exc).__name__} in {self.step}: {exc}\n{_tb(exc)}"
                    )
                finally:
                    try:
                        await adapter.close()
                    except ContractError as exc:
                        raised = raised or exc
            if scope.cancel_called:
                # The deadline passed: a hang, even when the bridge ignored the cancellation and went on.
                deadline = started + timeout
                hung_in = [step for step, at in self.steps if at <= deadline][-1]
                overran = anyio.current_time() - deadline
                facts = {"after the deadline": f"it went on for {overran:.1f} s more"} if overran > 1 else {}
                raise self.fail(f"hung in {hung_in} after {timeout:g} s", **facts)
            if raised is not None:
                raise raised
            misplaced = [error for error in self.server.errors if isinstance(error, faults.MisplacedFault)]
            if misplaced:
                raise ContractError(f"the contract harness injected a fault of another era: {misplaced[0]}")

        self._loop.call(body)

    async def connect(self, adapter: BridgeAdapter, headers: Mapping[str, str] | None = None) -> None:
        """Connect `adapter` to the server, which is healthy at this point: anything but ok is a violation."""
        outcome = await adapter.connect(self.url, dict(headers or {}))
        if outcome.kind != "ok":
            raise self.fail("the bridge could not connect to a healthy server", outcome=outcome)

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


def _tb(error: BaseException) -> str:
    return "".join(traceback.format_exception(type(error), error, error.__traceback__)).rstrip()


class _Checkpointed(httpx2.AsyncBaseTransport):
    """The in-process transport, with a checkpoint per request.

    An in-process request may complete without ever suspending, so a bridge that retries without end
    would never hand the event loop the moment to enforce the example's deadline; a checkpoint per
    request lets the deadline, and so the hang report, through.
    """

    def __init__(self, app: Any) -> None:
        self._inner = httpx2.ASGITransport(app=app)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        await anyio.lowlevel.checkpoint()
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Guarded:
    """The adapter as the properties see it: it tracks the step in progress for hang reports, and turns
    an exception escaping an adapter method, or a value that is not an `Outcome`, into a `ContractError`."""

    def __init__(self, adapter: BridgeAdapter, harness: ContractHarness) -> None:
        self._adapter = adapter
        self._harness = harness
        self._closed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    async def _step(self, step: str, work: Callable[[], Awaitable[Any]]) -> Any:
        import anyio

        self._harness.step = step
        self._harness.steps.append((step, anyio.current_time()))
        try:
            result = await work()
        except Exception as exc:
            raise ContractError(
                f"the adapter's {step} raised {type(exc).__name__}: {exc} (an adapter maps its bridge's "
                f"exceptions to outcomes; one that escapes is an error of the adapter)\n{_tb(exc)}"
            ) from exc
        self._harness.step = f"after {step}"
        return result

    def _outcome(self, step: str, value: Any) -> Outcome:
        if not isinstance(value, Outcome):
            raise ContractError(f"the adapter's {step} returned {value!r}, not an Outcome")
        return value

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return self._outcome("connect", await self._step("connect", lambda: self._adapter.connect(url, headers)))

    async def list_tools(self) -> list[str]:
        names = await self._step("list_tools", self._adapter.list_tools)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ContractError(f"the adapter's list_tools returned {names!r}, not a list of tool names")
        return names

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        step = f"call({tool!r})"
        return self._outcome(step, await self._step(step, lambda: self._adapter.call(tool, arguments)))

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self._sync("set_headers", headers)

    async def approve(self, token: str) -> Outcome:
        adapter: Any = self._adapter
        return self._outcome("approve", await self._step("approve", lambda: adapter.approve(token)))

    async def decline(self, token: str) -> Outcome:
        adapter: Any = self._adapter
        return self._outcome("decline", await self._step("decline", lambda: adapter.decline(token)))

    def require_approval(self, tools: Any) -> None:
        self._sync("require_approval", tools)

    def use_tool_cache(self) -> None:
        self._sync("use_tool_cache")

    def advance_cache_clock(self, seconds: float) -> None:
        self._sync("advance_cache_clock", seconds)

    def _sync(self, method: str, *args: Any) -> None:
        try:
            getattr(self._adapter, method)(*args)
        except Exception as exc:
            raise ContractError(f"the adapter's {method} raised {type(exc).__name__}: {exc}\n{_tb(exc)}") from exc

    async def close(self) -> None:
        """Close the adapter, once: a property that closes it itself to look at what closing sent is not
        followed by a second close."""
        if not self._closed:
            self._closed = True
            await self._step("close", self._adapter.close)


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
