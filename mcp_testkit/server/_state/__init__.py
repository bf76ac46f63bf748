"""Everything a `TestMcpServer` knows at one moment, and the tables it holds; `reset()` swaps in a fresh one.

The bottom layer of the server: the tables (`_sessions.py`, `_listeners.py`, `_tasks.py`, the sessions' kept
stream events `_events.py`, listing cursors `_cursors.py`) live here beside the state that holds them and import
no other part of the server; the methods that read and change them are dispatch's and the eras' above.
"""

from __future__ import annotations

import itertools
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import ERAS
from mcp_testkit.faults import FaultPlan
from mcp_testkit.journal import Journal
from mcp_testkit.resources import Offerings
from mcp_testkit.server._state._listeners import Listeners
from mcp_testkit.server._state._sessions import Session, SessionTable
from mcp_testkit.server._state._tasks import TaskTable

if TYPE_CHECKING:
    from mcp_testkit.server._state._cursors import Cursor
    from mcp_testkit.tools import ScriptedTool

__all__ = ["RequiredHeader", "ServerState", "Session", "SessionTable"]

ResponseMode = Any  # "json" | "sse" | Callable[[Record], str]


@dataclass(frozen=True)
class RequiredHeader:
    """A header every request must carry with exactly this value."""

    name: str
    value: str
    status: int = 401
    rejected: tuple[str, ...] = ()
    """Earlier values that were rotated out; answered like any wrong value."""


@dataclass(eq=False)
class ServerState:
    """The tools, sessions, required headers, journal, faults and ledger of one server."""

    name: str
    version: str
    path: str
    page_size: int | None
    response_mode: ResponseMode
    get_stream: bool
    allow_delete: bool
    allowed_hosts: frozenset[str]
    max_body: int = 4 * 1024 * 1024
    body_timeout_s: float = 60.0
    eras: tuple[str, ...] = ERAS
    """The protocol eras the server speaks."""
    cache_ttl_ms: int = 0
    cache_scope: str = "public"
    resumable: bool = False
    """Whether POST SSE streams of the handshake era keep their events for replay and open with a priming event."""
    retry_ms: int | None = None
    """The `retry:` of the priming event of a resumable stream (None: none)."""
    tools: dict[str, ScriptedTool] = field(default_factory=dict)
    offerings: Offerings = field(default_factory=Offerings)
    """Resources, resource templates, prompts and completion values."""
    required: dict[str, RequiredHeader] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    """The names of the required headers (lower-case), which every repr and export of a record hides."""
    sessions: SessionTable = field(default_factory=SessionTable)
    journal: Journal = field(default_factory=Journal)
    listeners: Listeners = field(default_factory=Listeners)
    """The open `subscriptions/listen` streams (2026-07-28)."""
    tasks: TaskTable = field(default_factory=TaskTable)
    """The tasks of the tasks extension (2026-07-28), by id."""
    executions: Counter[str] = field(default_factory=Counter)
    errors: list[BaseException] = field(default_factory=list)
    event_ids: Callable[[], int] = field(default_factory=lambda: itertools.count(1).__next__)
    plan: FaultPlan = field(default_factory=FaultPlan)
    empty_cursor: Cursor | None = None
    """Where the "" cursor an `EmptyCursor` page handed out in the stateless era leads."""
    initialize_result: dict[str, Any] | None = None
    """What `initialize` answers besides protocolVersion (capabilities, serverInfo...): a replay's recorded
    answer; None for the scripted server's own."""
    discover_result: dict[str, Any] | None = None
    """What `server/discover` answers: a replay's recorded answer; None for the scripted server's own."""
    input_timeout_s: float = 60.0
    """How long a handshake-era input request (elicitation, sampling, roots) waits for the client's answer."""
    referee: str = "observe"
    """What the server does with a client message that breaks a referee rule: `observe` (answer as ever; the
    journal notes it) or `refuse` (answer the JSON-RPC error the spec gives, -32600 or -32602)."""
    cursors_given: set[tuple[str, str]] = field(default_factory=set, repr=False)
    """(listing method, cursor) of every cursor a listing handed out, for the referee's `cursor-not-given`."""
    input_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    """Signs the `requestState` of 2026-07-28 input rounds (`server/_dispatch/_input.py`); new with every state."""
    auth: Any = None
    """The `AuthServer` that protects the MCP endpoint (`TestMcpServer(auth=...)`), None when it is open."""
    auth_scopes: tuple[str, ...] = ()
    """The scopes every request to a protected MCP endpoint needs (`TestMcpServer(scopes=...)`)."""
    _definitions: list[dict[str, Any]] | None = None
    _catalogue_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def server_info(self) -> dict[str, Any]:
        """The serverInfo both eras announce: a replay's recorded one (with any field it had), else name and version."""
        recorded = self.initialize_result.get("serverInfo") if self.initialize_result is not None else None
        return dict(recorded) if isinstance(recorded, dict) else {"name": self.name, "version": self.version}

    def definitions(self) -> list[dict[str, Any]]:
        """The catalogue in wire form, in the order tools were added."""
        definitions = self._definitions
        if definitions is None:
            # Under the lock, so that a change made meanwhile from another thread cannot be cached over.
            with self._catalogue_lock:
                if self._definitions is None:
                    self._definitions = [tool.definition for tool in list(self.tools.values())]
                definitions = self._definitions
        return definitions

    def catalogue_changed(self, quiet: Session | None = None) -> None:
        """Forget the cached catalogue and tell every open session (but `quiet`) its tool list changed."""
        with self._catalogue_lock:
            self._definitions = None
        message = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        for session in self.sessions.alive:
            if session is not quiet:
                session.outbox.put(message)
        self.listeners.publish(message)

    def change_catalogue(self, add: Sequence[str], remove: Sequence[str], quiet: Session | None = None) -> None:
        """Add tools by name (answering 'ok') and remove tools by name, as a `CatalogueChange` does."""
        from mcp_testkit.tools import ScriptedTool

        for name in remove:
            self.tools.pop(name, None)
        for name in add:
            self.tools[name] = ScriptedTool.build(name, description=f"added while listing: {name}", returns="ok")
        self.catalogue_changed(quiet)

    def redacted_headers(self) -> frozenset[str]:
        """The names of the required headers, which exports redact whatever their name."""
        return frozenset(self.required)
