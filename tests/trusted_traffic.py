"""The referee over the whole test suite: what the clients this project vouches for send must be valid MCP.

Issue 39 asks that the official SDK client (both eras), the TypeScript SDK client and the reference bridge produce
no violation across the suite's traffic. `conftest.py` has every test judge the journals of the servers it makes
(those a `reset()` drops, as the contract's examples do, included) and fail at its end, naming each violation,
when a record sent by one of those clients breaks a rule. A client is known by the `clientInfo` it sends: in
`initialize` for its session's requests (handshake era), in each request's `_meta` (2026-07-28). Raw clients of
tests, which send invalid messages on purpose, name themselves otherwise or not at all, and are left out; a test
that makes a trusted client send an invalid message on purpose (a mutant) says so with
`@pytest.mark.sends_invalid_mcp("why")`.

Servers run in other processes (`mcp-testkit serve`) are not seen here. On a server that was reset, the rules of its
state (a cursor it handed out, an id in flight) are not judged: a request sent before the reset and answered after
it breaks them through no fault of its client.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import CLIENT_INFO_KEY

if TYPE_CHECKING:
    import pytest

    from mcp_testkit.journal import Journal, Record

__all__ = ["TRUSTED_CLIENTS", "trusted_violations", "watch_servers"]

TRUSTED_CLIENTS = {
    "mcp": "the official Python SDK client",
    "mcp-testkit-bridge": "the reference bridge",
    "mcp-testkit-driver": "the TypeScript SDK client (drivers/typescript)",
    "mcp-testkit-ts-client": "the TypeScript SDK client (tests/standalone)",
    "mcp-testkit-ts-offerings": "the TypeScript SDK client (tests/standalone)",
}


def _client_name(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    info = params.get("clientInfo")
    if info is None:
        meta = params.get("_meta")
        info = meta.get(CLIENT_INFO_KEY) if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None


SERVER_STATE_RULES = frozenset({"cursor-not-given", "id-in-flight"})
"""The rules judged against what the server held when the request arrived (the cursors it handed out, the ids in
flight). A `reset()` forgets that state: a request a bridge sent before it, answered after it (the contract resets
its server between examples), breaks them through no fault of the bridge, so they are not judged on a server that
was reset."""


def trusted_violations(journals: Iterable[Journal], *, reset: bool = False) -> list[str]:
    """A line for each violation in a record a trusted client sent, in `journals`; with `reset` (their server was
    reset), the rules of its state (`SERVER_STATE_RULES`) left out."""
    lines = []
    for journal in journals:
        sessions: dict[str, str] = {}
        for record in journal.records:
            name = _sender(record, sessions)
            if name not in TRUSTED_CLIENTS:
                continue
            for found in record.violations:
                if reset and found.rule in SERVER_STATE_RULES:
                    continue
                lines.append(
                    f"{TRUSTED_CLIENTS[name]} ({name!r}) broke {found.rule} at {found.path or '$'} in #{record.seq} "
                    f"{record.rpc_method or record.http_method}: {found.message}"
                )
    return lines


def _sender(record: Record, sessions: dict[str, str]) -> str | None:
    """The name of the client that sent `record`, from its own clientInfo or its session's `initialize`."""
    name = _client_name(record.message)
    if name is not None:
        if record.rpc_method == "initialize" and record.session_id:
            sessions[record.session_id] = name
        return name
    return sessions.get(record.session_id or "")


def watch_servers(monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """From now on (until `monkeypatch` undoes it), judge the journal of every state a `TestMcpServer` starts from:
    at construction and at each `reset()`, which judges the journal it drops then; the function returned judges
    those still alive and gives every trusted client's violation found so far.

    It wraps `ServerSettings.fresh_state` rather than the server's `__init__`, whose signature the plugin reads and
    whose warnings point at its caller, and holds journals weakly: a server a test let go is freed as it would be."""
    from mcp_testkit.server._settings import ServerSettings

    found: list[str] = []
    current: dict[int, weakref.ref[Journal]] = {}
    was_reset: set[int] = set()
    fresh = ServerSettings.fresh_state

    def judged(self: ServerSettings) -> Any:
        dropped = current.get(id(self))
        journal = dropped() if dropped is not None else None
        if dropped is not None:
            was_reset.add(id(self))
        if journal is not None:  # a reset: the server drops this journal once the new state is in place
            found.extend(trusted_violations([journal], reset=True))
        state = fresh(self)
        current[id(self)] = weakref.ref(state.journal)
        return state

    def so_far() -> list[str]:
        lines = list(found)
        for key, ref in current.items():
            journal = ref()
            if journal is not None:
                lines += trusted_violations([journal], reset=key in was_reset)
        return lines

    monkeypatch.setattr(ServerSettings, "fresh_state", judged)
    return so_far
