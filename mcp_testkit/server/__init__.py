"""`TestMcpServer`: the one object a test scripts, serves and asserts on.

Inside, the server is layers, a folder each; a module imports only from its own layer and those below it (every
import counts: at module level, under `TYPE_CHECKING` and inside functions). From the top:

- the facade: this module, `_scripting.py` and `_fault_scripting.py` (its verbs), `effects.py` (the proxy's door);
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

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio.to_thread
import sniffio

from mcp_testkit import faults
from mcp_testkit._renamed import milliseconds, renamed_attribute, renamed_keywords
from mcp_testkit._wire.binding import RemoteHostWarning, warn_if_remote
from mcp_testkit._wire.eras import ERAS, named_eras
from mcp_testkit._wire.runner import MAX_HEADER_LINE, MAX_HEADERS
from mcp_testkit.journal import Journal
from mcp_testkit.server._dispatch._tasks import ask_client, asks_first, declare_task, start_task
from mcp_testkit.server._effects import Effect, effect_of, supports_stdio  # Effect, effect_of: for the chaos proxy
from mcp_testkit.server._fault_scripting import FaultScripting
from mcp_testkit.server._presets import PRESETS
from mcp_testkit.server._scripting import OfferingScripting
from mcp_testkit.server._state import RequiredHeader, ServerState
from mcp_testkit.server._state._sessions import SessionTable
from mcp_testkit.server._transport._http import ServerCrash
from mcp_testkit.server._transport._mount import MountableMcpApp
from mcp_testkit.server._transport._stdio import StdioServer
from mcp_testkit.tools import ScriptedTool

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType
    from typing import BinaryIO

    import mcp_types

    from mcp_testkit._wire.runner import Runner
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state._sessions import Session

__all__ = ["Effect", "RemoteHostWarning", "ServerState", "TestMcpServer", "ask_client", "asks_first", "declare_task"]
__all__ += ["effect_of", "serve_stdio", "start_task", "stdio_supports"]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_RESPONSE_MODES = ("json", "sse")
MAX_BODY = 4 * 1024 * 1024
"""The default `max_body`: 4 MiB, as the SDK's server allows."""


def _seconds_at_least_zero(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def _check_eras(eras: Sequence[str]) -> tuple[str, ...]:
    chosen = named_eras(eras)
    return tuple(era for era in ERAS if era in chosen)


def stdio_supports(fault: faults.Fault) -> bool:
    """Whether `fault` means something over stdio (an HTTP-only fault does not), as the fault's handler says."""
    return supports_stdio(fault)


class TestMcpServer(FaultScripting, OfferingScripting):
    """A real MCP server (Streamable HTTP) whose tools, answers and failures a test scripts.

    It records every request in `journal` and counts every handler run in a ledger
    (`executions`). Serve it with `with server:` (a uvicorn thread on 127.0.0.1), `async with
    server:` (a task of the running asyncio loop), or use `asgi_app` in-process. Its scripting
    methods may be called from any thread, and from a handler, while traffic flows.
    """

    __test__ = False  # not a pytest test class, whatever its name says

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
    def __init__(
        self,
        name: str = "test",
        *,
        page_size: int | None = None,
        response_mode: str | Callable[[Record], str] = "json",
        path: str = "/mcp",
        host: str = "127.0.0.1",
        port: int = 0,
        get_stream: bool = False,
        allow_delete: bool = True,
        allowed_hosts: Sequence[str] = (),
        preset: str | None = None,
        version: str = "0.1.0",
        max_body: int = MAX_BODY,
        max_headers: int = MAX_HEADERS,
        max_header_line: int = MAX_HEADER_LINE,
        journal_limit: int | None = None,
        session_limit: int | None = None,
        session_idle_timeout_s: float | None = None,
        header_timeout_s: float = 60.0,
        body_timeout_s: float = 60.0,
        idle_timeout_s: float = 75.0,
        eras: Sequence[str] = ERAS,
        cache_ttl_s: float = 0,
        cache_scope: str = "public",
        resumable: bool = False,
        retry_s: float | None = None,
        allow_remote: bool = False,
    ) -> None:
        """`eras`: the protocol eras served, 'handshake' (`initialize`, sessions) and 'stateless' (2026-07-28).

        `cache_ttl_s` and `cache_scope` are the cache hints of the stateless era's `server/discover`
        and `tools/list` results (the wire's `ttlMs` is the TTL in whole milliseconds). `resumable` keeps the
        events of every handshake-era POST SSE stream for a GET with `Last-Event-ID` to replay, and opens each
        such stream (from 2025-11-25) with a priming event, which carries `retry:` (`retry_s` in milliseconds)
        when that is set. Every duration is in seconds. A `host` that is not loopback warns
        (`RemoteHostWarning`, as the command line refuses it without `--allow-remote`) unless `allow_remote`.
        """
        eras = _check_eras(eras)
        if not isinstance(resumable, bool):
            raise ValueError(f"resumable must be True or False, not {resumable!r}")
        if retry_s is not None and not _seconds_at_least_zero(retry_s):
            raise ValueError(f"retry_s must be a number of seconds >= 0 or None, not {retry_s!r}")
        if not _seconds_at_least_zero(cache_ttl_s):
            raise ValueError(f"cache_ttl_s must be a number of seconds >= 0, not {cache_ttl_s!r}")
        if cache_scope not in ("public", "private"):
            raise ValueError(f"cache_scope must be 'public' or 'private', not {cache_scope!r}")
        if page_size is not None and (not isinstance(page_size, int) or page_size < 1):
            raise ValueError(f"page_size must be a positive int or None (one page), not {page_size!r}")
        if not callable(response_mode) and response_mode not in _RESPONSE_MODES:
            raise ValueError(f"response_mode must be 'json', 'sse' or a callable, not {response_mode!r}")
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', not {path!r}")
        if preset is not None:
            if preset not in PRESETS:
                raise ValueError(f"unknown preset {preset!r}; choose one of {', '.join(sorted(PRESETS))}")
        for label, size in (("max_body", max_body), ("max_headers", max_headers), ("max_header_line", max_header_line)):
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ValueError(f"{label} must be a positive number of bytes, not {size!r}")
        for label, seconds in (
            ("header_timeout_s", header_timeout_s),
            ("body_timeout_s", body_timeout_s),
            ("idle_timeout_s", idle_timeout_s),
        ):
            if not isinstance(seconds, (int, float)) or seconds <= 0:
                raise ValueError(f"{label} must be a positive number of seconds, not {seconds!r}")
        # stacklevel 4: past renamed_keywords, at the caller
        warn_if_remote(host, f"TestMcpServer {name!r}", allow_remote=allow_remote, stacklevel=4)
        self.name = name
        self.host = host
        self._port = port
        self.header_timeout_s = float(header_timeout_s)
        """Seconds a connection may take to send a request's headers (from its first byte, or from opening)."""
        self.body_timeout_s = float(body_timeout_s)
        """Seconds a request may take to send its whole body; then 408."""
        self.idle_timeout_s = float(idle_timeout_s)
        """Seconds a kept-alive connection may wait for its next request; then it is closed."""
        self.max_headers = max_headers
        """Bytes a request's line and headers may take together; then 431, before the app."""
        self.max_header_line = max_header_line
        """Bytes one header line (or the request line) may take; then 431, before the app."""
        self._limits = (journal_limit, session_limit, session_idle_timeout_s)
        Journal(limit=journal_limit)  # checks the value now, not at the first reset
        SessionTable(limit=session_limit, idle_timeout=session_idle_timeout_s)
        self._settings: dict[str, Any] = {
            "name": name,
            "version": version,
            "path": path,
            "page_size": page_size,
            "response_mode": response_mode,
            "get_stream": get_stream,
            "allow_delete": allow_delete,
            "allowed_hosts": frozenset(name.lower() for name in (*_LOOPBACK_NAMES, host, *allowed_hosts)),
            "max_body": max_body,
            "body_timeout": float(body_timeout_s),
            "eras": eras,
            "cache_ttl_ms": round(cache_ttl_s * 1000),
            "cache_scope": cache_scope,
            "resumable": resumable,
            "retry_ms": None if retry_s is None else round(retry_s * 1000),
        }
        self._preset = preset
        self._h11 = False  # uvicorn's h11 parser rather than httptools: the tests of both parsers set it
        self._runner: Runner | None = None
        self._lock = threading.RLock()
        self._state = self._fresh_state()
        self.asgi_app = MountableMcpApp(lambda: self._state)
        """The ASGI app: in-process (`httpx2.ASGITransport(app=...)`), or mounted in a Starlette or FastAPI app."""

    def _fresh_state(self) -> ServerState:
        journal_limit, session_limit, session_idle_timeout = self._limits
        state = ServerState(
            **self._settings,
            journal=Journal(limit=journal_limit),
            sessions=SessionTable(limit=session_limit, idle_timeout=session_idle_timeout),
        )
        state.journal.writer.hide_headers(state.redacted_headers)
        self._state = state
        if self._preset is not None:
            PRESETS[self._preset](self)
        self.prepare_state(state)
        return state

    def prepare_state(self, state: ServerState) -> None:
        """A subclass's hook, called with each fresh state (when constructed and on `reset()`) once it is scripted:
        `cassettes.CassetteServer` fills it with what it replays. Does nothing here."""

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

    # -- scripting ---------------------------------------------------------------------------------

    def tool(
        self,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | mcp_types.ToolAnnotations | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        returns: Any = None,
        answers: Sequence[Any] | None = None,
        requires: Sequence[str] = (),
        task: str | None = None,
    ) -> ScriptedTool:
        """Add (or replace) a tool; use the result as a decorator to give it a handler.

        `returns` is its answer to every call; `answers` one answer per call, the last repeating.
        An answer is a str, a dict (structured content), a list of content blocks, a
        `CallToolResult`, a `ToolError`, or a callable taking the arguments (and optionally a
        `ToolContext`) that returns one of those, sync or async. `requires` names client
        capabilities a call needs: a 2026-07-28 call whose `_meta` lacks one is refused with
        400 and -32021 (MissingRequiredClientCapability) before the tool runs. `task`: docs/tasks.md.
        """
        tool = ScriptedTool.build(
            name,
            title=title,
            description=description,
            input_schema=input_schema,
            output_schema=output_schema,
            annotations=annotations,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=open_world,
            returns=returns,
            answers=answers,
            requires=requires,
        )
        if task is not None:
            declare_task(tool, task)
        with self._lock:
            state = self._state
            state.tools[name] = tool
            state.catalogue_changed()
        return tool

    def remove_tool(self, name: str) -> None:
        """Take a tool out of the catalogue; KeyError naming the tools there are if it is unknown."""
        with self._lock:
            state = self._state
            if name not in state.tools:
                raise KeyError(f"no tool {name!r}; tools: {', '.join(state.tools) or '(none)'}")
            del state.tools[name]
            state.catalogue_changed()

    @property
    def page_size(self) -> int | None:
        """Tools per `tools/list` page (None: one page); setting it lasts until the next `reset()`."""
        return self._state.page_size

    @page_size.setter
    def page_size(self, value: int | None) -> None:
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"page_size must be a positive int or None (one page), not {value!r}")
        self._state.page_size = value

    @property
    def response_mode(self) -> str | Callable[[Record], str]:
        """How answers are framed: 'json', 'sse' or a callable; setting it lasts until the next `reset()`."""
        return self._state.response_mode  # type: ignore[no-any-return]

    @response_mode.setter
    def response_mode(self, value: str | Callable[[Record], str]) -> None:
        if not callable(value) and value not in _RESPONSE_MODES:
            raise ValueError(f"response_mode must be 'json', 'sse' or a callable, not {value!r}")
        self._state.response_mode = value

    @property
    def tools(self) -> dict[str, ScriptedTool]:
        """The catalogue, by name, in listing order."""
        return dict(self._state.tools)

    def require_header(self, name: str, value: str, *, status: int = 401) -> None:
        """Refuse every request without exactly `name: value`: 401 with a Bearer challenge, or 403."""
        if status not in (401, 403):
            raise ValueError(f"require_header: status must be 401 or 403, not {status}")
        with self._lock:
            state = self._state
            state.required[name.lower()] = RequiredHeader(name, value, status)
            state.hidden = frozenset(state.required)

    def rotate_header(self, name: str, value: str) -> None:
        """Accept only `value` for the required header `name` from now on; the old value is refused."""
        with self._lock:
            required = self._state.required.get(name.lower())
            if required is None:
                raise KeyError(f"rotate_header: {name!r} is not a required header; call require_header first")
            self._state.required[name.lower()] = RequiredHeader(
                required.name, value, required.status, (*required.rejected, required.value)
            )

    # -- state -------------------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the freshly constructed state (tools, headers, sessions, journal, faults); keeps serving."""
        with self._lock:
            old = self._state
            self._fresh_state()
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
        if unused_faults:
            unfired = self._state.plan.unfired()
            if unfired:
                listed = "\n".join(
                    f"  {rule.fault!r} (method={rule.method}, tool={rule.tool}"
                    + (f", name={rule.name})" if rule.name else ")")
                    for rule in unfired
                )
                raise AssertionError(f"server {self.name!r}: {len(unfired)} scripted fault(s) never fired:\n{listed}")

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
        sessions = list(self._state.sessions)
        for session in reversed(sessions):
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

    @property
    def started(self) -> bool:
        return self._runner is not None

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
            header_timeout=self.header_timeout_s,
            body_timeout=self.body_timeout_s,
            idle_timeout=self.idle_timeout_s,
            limits=limits,
            h11=self._h11,
        )

    def start(self) -> None:
        """Serve from a background thread; returns once the server accepts connections."""
        runner = self._new_runner()
        runner.start_thread(self.name)
        self._runner = runner

    def stop(self) -> None:
        """Stop serving: close open streams, the socket and the thread."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._close_streams()
        runner.stop()

    def _close_streams(self) -> None:
        self._state.listeners.close_all()
        for session in self._state.sessions.alive:
            session.outbox.put(None)

    def __enter__(self) -> TestMcpServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> TestMcpServer:
        if sniffio.current_async_library() != "asyncio":
            await anyio.to_thread.run_sync(self.start)
            return self
        runner = self._new_runner()
        await runner.start_task(self.name)
        self._runner = runner
        self._task_mode = True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        runner = self._runner
        if runner is None:
            return
        if getattr(self, "_task_mode", False):
            self._runner = None
            self._task_mode = False
            self._close_streams()
            await runner.stop_task()
            return
        await anyio.to_thread.run_sync(self.stop)


async def serve_stdio(server: TestMcpServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve `server` over newline-delimited JSON-RPC on `stdin`/`stdout` (`mcp-testkit serve --stdio`); returns the
    exit status. The transport is handed the server's current state, as the HTTP app is, never the server itself."""
    return await StdioServer(lambda: server._state, stdout).serve(stdin)
