"""`TestMcpServer`: the one object a test scripts, serves and asserts on.

Inside, the server is layers, a folder each; a module imports only from its own layer and those below it (every
import counts: at module level, under `TYPE_CHECKING` and inside functions; the `server-layers` contract of
pyproject.toml). From the top:

- the facade: this module and its parts, which the class composes: its keywords, checked (`ServerSettings`,
  `_settings.py`), the state it answers from now (`_current.py`, which `reset()` swaps), a part per concern a test
  scripts (tools `_tool_scripting.py`, required headers `_header_scripting.py`, what it offers besides tools
  `_offering_scripting.py`, what goes wrong `_fault_scripting.py`), whose verbs it calls through, what a replay
  serves (`Recording`, `_recording.py`), its life on a socket (`mcp_testkit._wire.lifecycle`, shared with the chaos
  proxy), and `effects.py` (the proxy's door to the fault effects);
- `_presets/`: the built-in catalogues, which script a server through its public verbs (`ScriptedServer`), so that
  the facade applying them by name is never imported back;
- `_transport/`: the ASGI app that routes a request to its era (`_app.py`), the HTTP request before and around its
  era (`_http.py`: its record, the checks and the body, 401, 405, the answer to a crash of ours), the heads refused
  before the app (`_refused_heads.py`), and stdio (`_stdio.py`); each is handed a getter of the current state, never
  the facade;
- `_eras/`: the handshake and the stateless 2026-07-28 era, what both do with a request (`_run.py`), which one a
  request is of (`era_of`), and the stateless era's listen stream; each era's `ServedEra` holds what the transport
  routes to and what dispatch asks of it, so that no other layer tests an era;
- `_effects/`: what a fault does to a request, one handler per fault class;
- `_framing/`: the HTTP answer (`Response`: JSON or SSE, event ids, a stream's plan) and the refusal of a request
  before it runs; a layer of its own below the eras and the effects, which both answer through it, so that the
  transport, which routes to the eras, stays above them;
- `_dispatch/`: one function per MCP method, with no HTTP in it, and what it asks of the request's era (`_era.py`);
- `_state/`: the server's state and the tables it holds (sessions, listen streams, tasks, kept stream events,
  cursors), which import nothing above them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._renamed import fault_first, milliseconds, moved_names, renamed_attribute, renamed_keywords
from mcp_testkit._wire.binding import RemoteHostWarning, warn_if_remote
from mcp_testkit._wire.lifecycle import RunnerLifecycle
from mcp_testkit._wire.signatures import delegated, keywords_of
from mcp_testkit.journal import Journal
from mcp_testkit.server._current import CurrentState
from mcp_testkit.server._dispatch._tasks import ask_client, asks_first, declare_task, start_task
from mcp_testkit.server._fault_scripting import FaultScripting
from mcp_testkit.server._header_scripting import HeaderScripting
from mcp_testkit.server._offering_scripting import OfferingScripting, OfferingsView
from mcp_testkit.server._recording import Recording
from mcp_testkit.server._settings import MAX_BODY as MAX_BODY
from mcp_testkit.server._settings import (
    LiveSetting,
    ServerSettings,
    auth_checked,
    cache_ttl_checked,
    get_stream_checked,
    input_timeout_checked,
    page_size_checked,
    response_mode_checked,
)
from mcp_testkit.server._state._sessions import SessionTable
from mcp_testkit.server._tool_scripting import ToolScripting
from mcp_testkit.server._transport._http import ServerCrash
from mcp_testkit.server._transport._mount import MountableMcpApp
from mcp_testkit.server._transport._stdio import StdioServer

if TYPE_CHECKING:
    from pathlib import Path
    from typing import BinaryIO

    from mcp_testkit._wire.runner import Runner
    from mcp_testkit.auth import AuthServer
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session
    from mcp_testkit.tools import ScriptedTool

__all__ = [
    "Recording",
    "RemoteHostWarning",
    "TestMcpServer",
    "ask_client",
    "asks_first",
    "declare_task",
    "serve_stdio",
    "start_task",
]

__getattr__ = moved_names(
    __name__,
    {
        "Effect": ("mcp_testkit.server.effects.Effect", None),
        "effect_of": ("mcp_testkit.server.effects.effect_of", None),
        "stdio_supports": ("mcp_testkit.server.effects.supports_stdio", None),
        "ServerState": (
            "mcp_testkit.server._state.ServerState",
            "it is the server's own state: read a server through TestMcpServer's properties (journal, tools, "
            "offerings, ledger, required_headers...)",
        ),
    },
)
_FAULTS = "_faults"
_HEADERS = "_headers"
_OFFERINGS = "_offerings"
_TOOLS = "_tools"


class TestMcpServer(RunnerLifecycle):
    """A real MCP server (Streamable HTTP) whose tools, answers and failures a test scripts.

    It records every request in `journal` and counts every handler run in a ledger
    (`executions`). Serve it with `with server:` (a uvicorn thread on 127.0.0.1), `async with
    server:` (a task of the running asyncio loop), or use `asgi_app` in-process. Its scripting
    methods may be called from any thread, and from a handler, while traffic flows.
    """

    __test__ = False  # not a pytest test class, whatever its name says
    in_loop_task = True

    header_timeout = renamed_attribute("header_timeout", "header_timeout_s")
    body_timeout = renamed_attribute("body_timeout", "body_timeout_s")
    idle_timeout = renamed_attribute("idle_timeout", "idle_timeout_s")

    @renamed_keywords(
        session_idle_timeout="session_idle_timeout_s",
        header_timeout="header_timeout_s",
        body_timeout="body_timeout_s",
        idle_timeout="idle_timeout_s",
        cache_ttl_ms=("cache_ttl_s", milliseconds),
        retry_ms=("retry_s", milliseconds),
    )
    @keywords_of(ServerSettings)
    def __init__(self, name: str = "test", **keywords: Any) -> None:
        """`eras`: the protocol eras served, 'handshake' (`initialize`, sessions) and 'stateless' (2026-07-28).

        `cache_ttl_s` and `cache_scope` are the cache hints of the stateless era's `server/discover`
        and `tools/list` results (the wire's `ttlMs` is the TTL in whole milliseconds). `resumable` keeps the
        events of every handshake-era POST SSE stream for a GET with `Last-Event-ID` to replay, and opens each
        such stream (from 2025-11-25) with a priming event, which carries `retry:` (`retry_s` in milliseconds)
        when that is set. Every duration is in seconds. A `host` that is not loopback warns
        (`RemoteHostWarning`, as the command line refuses it without `--allow-remote`) unless `allow_remote`.
        `replaying` serves a recording instead of the scripted answers (`mcp_testkit.cassettes.replay` passes one).
        `auth` (an `mcp_testkit.auth.AuthServer`, or True for a default one) makes the MCP endpoint an OAuth
        protected resource and serves that authorization server beside it; `scopes` are the scopes every request
        needs, and a tool's own `scopes=` add to them for its calls (docs/auth.md).
        `referee`: what a client message that breaks MCP's rules gets (`docs/referee.md`): 'observe' (the default)
        answers it as ever and notes each violation in the journal; 'refuse' answers it the JSON-RPC error the spec
        gives (-32600 for the envelope, -32602 for the params).
        The settings are checked here (`server/_settings.py`), ValueError naming the keyword.
        """
        settings = self._settings = ServerSettings(name, **keywords)
        # stacklevel 4: past renamed_keywords, at the caller
        warn_if_remote(settings.host, f"TestMcpServer {name!r}", allow_remote=settings.allow_remote, stacklevel=4)
        self.name = name
        self.host = settings.host
        self._port = settings.port
        self.header_timeout_s = settings.header_timeout_s
        """Seconds a connection may take to send a request's headers (from its first byte, or from opening)."""
        self.body_timeout_s = settings.body_timeout_s
        """Seconds a request may take to send its whole body; then 408."""
        self.idle_timeout_s = settings.idle_timeout_s
        """Seconds a kept-alive connection may wait for its next request; then it is closed."""
        self.max_headers = settings.max_headers
        """Bytes a request's line and headers may take together; then 431, before the app."""
        self.max_header_line = settings.max_header_line
        """Bytes one header line (or the request line) may take; then 431, before the app."""
        self._h11 = False  # uvicorn's h11 parser rather than httptools: the tests of both parsers set it
        state = settings.fresh_state()
        current = self._current = CurrentState(state)
        self._state = state
        self._tools = ToolScripting(current)
        self._headers = HeaderScripting(current)
        self._offerings = OfferingScripting(current)
        self._faults = FaultScripting(current, name)
        self._start_afresh(state)
        self.asgi_app = MountableMcpApp(lambda: current.state)
        """The ASGI app: in-process (`httpx2.ASGITransport(app=...)`), or mounted in a Starlette or FastAPI app."""

    def _start_afresh(self, state: ServerState) -> None:
        """Answer from `state` from now on, scripted as a freshly built server is: by the preset, then the recording."""
        settings = self._settings
        state.journal.writer.hide_headers(state.redacted_headers)
        # The parts read it from `_current`; the server's own modules (the stdio transport, per request) from
        # `_state`, a plain attribute, so that reading it costs a request nothing. Both change here only.
        self._state = self._current.state = state
        if settings.preset is not None:
            from mcp_testkit.server._presets import PRESETS

            PRESETS[settings.preset](self)
        recording = settings.replaying
        if recording is not None:
            state.initialize_result = recording.initialize_result()
            state.discover_result = recording.discover_result(state.eras)
            offerings = recording.offerings()
            if offerings is not None:
                state.offerings = offerings
            self.add_tools(recording.tools())

    @classmethod
    def from_cassette(
        cls, cassette: str | Path | Any, *, match: str | Callable[..., Any] = "exact", **settings: Any
    ) -> TestMcpServer:
        """A server replaying a recorded one: its info, capabilities and catalogue (paged as recorded, or by
        `page_size=`), each `tools/call` answered by the recorded call it matches (`match`: 'exact',
        'in_order', 'by_tool' or a callable), in the eras the recorded server spoke (or was never asked to),
        each answer shaped for the era of its request. Other keywords are `TestMcpServer`'s (`eras=` among
        them). See `mcp_testkit.cassettes`: its `replay` is the same, typed with the cassette's own classes (they
        are not named here, so that the server does not import the cassettes that build on it).
        """
        from mcp_testkit.cassettes import replay

        return replay(cassette, match=match, **settings)

    def __repr__(self) -> str:
        where = self.url if self._runner is not None else "not started"
        journal = self._state.journal
        dropped = journal.dropped
        records = f" journal={len(journal)} ({dropped} dropped, journal_limit={journal.limit})" if dropped else ""
        return f"<TestMcpServer {self.name!r} {where} tools={len(self._state.tools)}{records}>"

    # -- tools: ToolScripting ----------------------------------------------------------------------

    tool = delegated(ToolScripting.tool, via=_TOOLS)
    add_tools = delegated(ToolScripting.add_tools, via=_TOOLS)
    remove_tool = delegated(ToolScripting.remove_tool, via=_TOOLS)

    @property
    def tools(self) -> dict[str, ScriptedTool]:
        """The catalogue, by name, in listing order."""
        return dict(self._state.tools)

    # -- live settings: each lasts until the next reset() ------------------------------------------

    page_size: LiveSetting[int | None] = LiveSetting(
        "page_size", page_size_checked, "Tools per `tools/list` page (None: one page)."
    )
    response_mode: LiveSetting[str | Callable[[Record], str]] = LiveSetting(
        "response_mode", response_mode_checked, "How answers are framed: 'json', 'sse' or a callable of the record."
    )
    get_stream: LiveSetting[bool] = LiveSetting(
        "get_stream", get_stream_checked, "Whether a handshake-era session may open a GET stream (else: 405)."
    )
    cache_ttl_s: LiveSetting[float] = LiveSetting(
        "cache_ttl_ms",
        cache_ttl_checked,
        "The TTL of 2026-07-28 listings (`server/discover`, `tools/list`) in seconds (`ttlMs`: in milliseconds).",
        stored=lambda seconds: round(seconds * 1000),
        shown=lambda ms: ms / 1000,
    )
    input_timeout_s: LiveSetting[float] = LiveSetting(
        "input_timeout_s",
        input_timeout_checked,
        "How long a tool's handshake-era input request (elicitation, sampling, roots) waits for the client's "
        "answer before the ctx call raises `InputUnavailable` (-32001).",
    )

    # -- what it offers besides tools: OfferingScripting -------------------------------------------

    resource = delegated(OfferingScripting.resource, via=_OFFERINGS)
    update_resource = delegated(OfferingScripting.update_resource, via=_OFFERINGS)
    remove_resource = delegated(OfferingScripting.remove_resource, via=_OFFERINGS)
    resource_template = delegated(OfferingScripting.resource_template, via=_OFFERINGS)
    prompt = delegated(OfferingScripting.prompt, via=_OFFERINGS)
    remove_prompt = delegated(OfferingScripting.remove_prompt, via=_OFFERINGS)
    complete = delegated(OfferingScripting.complete, via=_OFFERINGS)

    @property
    def offerings(self) -> OfferingsView:
        """What it offers besides tools now (resources, templates, prompts, completion values), read-only."""
        return self._offerings.view()

    # -- what goes wrong: FaultScripting -----------------------------------------------------------

    inject = delegated(FaultScripting.inject, via=_FAULTS)
    check_rule = delegated(FaultScripting.check_rule, via=_FAULTS)
    add_rule = delegated(FaultScripting.add_rule, via=_FAULTS)
    fail_next_call = fault_first(delegated(FaultScripting.fail_next_call, via=_FAULTS))  # warns at the caller
    lose_session = delegated(FaultScripting.lose_session, via=_FAULTS)
    restart = delegated(FaultScripting.restart, via=_FAULTS)
    pending_faults = delegated(FaultScripting.pending_faults, via=_FAULTS)

    # -- the headers every request must carry: HeaderScripting -------------------------------------

    require_header = delegated(HeaderScripting.require_header, via=_HEADERS)
    rotate_header = delegated(HeaderScripting.rotate_header, via=_HEADERS)

    @property
    def auth(self) -> AuthServer | None:
        """The authorization server protecting the MCP endpoint (`auth=`), None when the endpoint is open."""
        return self._state.auth  # type: ignore[no-any-return]

    def protect(self, auth: AuthServer | bool = True, *, scopes: Sequence[str] = ()) -> AuthServer | None:
        """Make the MCP endpoint a protected resource from now until the next `reset()`, as `auth=` and `scopes=`
        do for a server's whole life: `auth` an `AuthServer` (True: a default one; False: open again), served beside
        the endpoint. Returns the authorization server. What a test that protects only some of its examples uses
        (the contract's OAuth properties do, on the harness's one server); tokens issued before stay with the
        `AuthServer` that issued them."""
        checked, needed = auth_checked(auth, scopes)
        with self._current.lock:
            state = self._current.state
            state.auth, state.auth_scopes = checked, needed
        return checked

    @property
    def required_headers(self) -> tuple[str, ...]:
        """The names of the headers every request must carry (`require_header`), in the order they were added."""
        return self._headers.names()

    # -- state -------------------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the freshly constructed state (tools, headers, sessions, journal, faults); keeps serving."""
        with self._current.lock:
            old = self._state
            self._start_afresh(self._settings.fresh_state())
        for session in old.sessions.alive:
            session.outbox.put(None)
        old.listeners.close_all()

    def check(self, *, unused_faults: bool = False) -> None:
        """Raise the first exception a tool handler raised, if any (the test that caused it fails).

        With `unused_faults`, also fail when a scripted fault never fired: such a test proved nothing.
        """
        errors = self._state.errors
        misplaced = [error for error in errors if isinstance(error, faults.MisplacedFault)]
        if misplaced:
            raise AssertionError(f"server {self.name!r}: {misplaced[0]}")
        if errors:
            first = errors[0]
            if isinstance(first, ServerCrash):
                raise AssertionError(f"server {self.name!r}: {first}") from first.__cause__
            raise AssertionError(
                f"a tool handler of server {self.name!r} raised {type(first).__name__}: {first} "
                f"({len(errors)} handler error{'s' * (len(errors) != 1)} in all)"
            ) from first
        unfired = self._faults.unfired() if unused_faults else None
        if unfired is not None:
            raise AssertionError(f"server {self.name!r}: {unfired}")

    @property
    def eras(self) -> tuple[str, ...]:
        """The protocol eras the server speaks: 'handshake', 'stateless' or both."""
        return self._state.eras

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions of tool handlers (but `ToolError`), crashes of the server and misplaced faults, oldest first."""
        return list(self._state.errors)

    @property
    def journal(self) -> Journal:
        """Every request received since the last reset."""
        return self._state.journal

    @property
    def sessions(self) -> SessionTable:
        """Every session issued since the last reset, alive or ended."""
        return self._state.sessions

    def session(self, session_id: str | None = None) -> Session:
        """A session by id, or the most recently issued one."""
        for session in reversed(list(self._state.sessions)):
            if session_id is None or session.id == session_id:
                return session
        raise LookupError(f"no session {session_id!r}" if session_id else "no session was opened yet")

    def calls(self, tool: str | None = None) -> list[Record]:
        """The `tools/call` records, of one tool or of all."""
        return self._state.journal.calls(tool)

    def executions(self, tool: str | None = None) -> int:
        """How many times a tool's handler actually ran (all tools when `tool` is None)."""
        ledger = self._state.executions
        return ledger[tool] if tool is not None else sum(ledger.values())

    @property
    def ledger(self) -> dict[str, int]:
        """How many times each tool's handler ran, by tool (a copy): the whole ledger `executions()` reads."""
        return dict(self._state.executions)

    @property
    def max_body(self) -> int:
        """Bytes a request's body may take; then 413."""
        return self._settings.max_body

    # -- serving -----------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._runner is None:
            raise RuntimeError(
                f"server {self.name!r} is not started, so it listens on no socket: start it with `with server:` or "
                "`async with server:`, or reach it in-process through `server.asgi_app`"
            )
        return self._runner.port

    @property
    def base_url(self) -> str:
        """`http://host:port`, without the endpoint path."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def path(self) -> str:
        """The endpoint path, e.g. `/mcp`."""
        return self._state.path

    @property
    def url(self) -> str:
        """The MCP endpoint, e.g. `http://127.0.0.1:PORT/mcp`."""
        return self.base_url + self._state.path

    def _new_runner(self) -> Runner:
        if self._runner is not None:
            raise RuntimeError(f"server {self.name!r} is already started at {self.url}")
        from mcp_testkit._wire.runner import HeadLimits, Refused, Runner
        from mcp_testkit.server._transport._refused_heads import journal_refused

        def journal(refused: Refused) -> None:
            journal_refused(self._state, refused)

        limits = HeadLimits(self.max_headers, self.max_header_line, journal)
        return Runner(
            self.asgi_app,
            self.host,
            self._port,
            header_timeout_s=self.header_timeout_s,
            body_timeout_s=self.body_timeout_s,
            idle_timeout_s=self.idle_timeout_s,
            limits=limits,
            h11=self._h11,
        )

    def _runner_name(self) -> str:
        return self.name

    def _closing(self, *, started: bool) -> None:
        """Close the open streams, so that their clients see them end before the socket closes."""
        if started:
            state = self._state
            state.listeners.close_all()
            for session in state.sessions.alive:
                session.outbox.put(None)


async def serve_stdio(server: TestMcpServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve `server` over newline-delimited JSON-RPC on `stdin`/`stdout` (`mcp-testkit serve --stdio`); returns the
    exit status. The transport is handed the server's current state, as the HTTP app is, never the server itself."""
    return await StdioServer(lambda: server._state, stdout).serve(stdin)
