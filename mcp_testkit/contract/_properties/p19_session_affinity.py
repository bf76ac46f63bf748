"""P19 (the handshake era only): the calls an application makes on one connection reach the server in one session,
so a server that keeps state in its session (a login, a cursor, a transaction) finds it on the next call; or the
adapter declares per-call sessions (`sessions = "per_call"`), and the verdict says the pass rests on that.

Judged from the journal, by what the server saw: the `Mcp-Session-Id` each `tools/call` carried. The server's tools
keep their state in the session (`ToolContext.session_state`): `login` stores a user there and `whoami` answers
from it, so a call in another session finds nobody logged in, as an application of such a server would."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from hypothesis import strategies as st

from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.contract._properties._property import Inputs, Property
from mcp_testkit.tools import ToolContext, ToolError

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness
    from mcp_testkit.journal import Record

__all__ = ["PROPERTY"]

_USERS = ("ann", "bob")
_STEPS = ("login", "whoami", "read", "pair")
"""A login (as one of `_USERS`), a whoami, a call of a tool that keeps no state, two whoami calls in flight at once
(where the adapter can overlap calls)."""
_USER = {"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]}
PER_CALL = "per-call sessions declared"


def _held_as(facts: BridgeFacts) -> str | None:
    return PER_CALL if facts.sessions == "per_call" else None


def _kinds(facts: BridgeFacts) -> tuple[str, ...]:
    return _STEPS if facts.concurrency is not None else _STEPS[:3]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    login, bob, whoami, read, pair = ("login", "ann"), ("login", "bob"), ("whoami", ""), ("read", ""), ("pair", "")
    cases = [
        [login, whoami],  # the state a call left, read by the next
        [whoami, login, whoami],  # nobody before the login, the user after it
        [login, read, whoami],  # a call that keeps no state between them
        [read, read, login, read, read, whoami],
        [login, whoami, bob, whoami, whoami],  # the state replaced, in the same session
        [login, login, bob, whoami],
        [login, *[read] * 6, whoami],  # a longer connection
        [whoami, whoami, login, whoami, read, whoami],
    ]
    if "pair" in _kinds(facts):  # two calls in flight at once: a pool of sessions would spread them
        cases += [[login, pair, whoami], [pair, login, pair], [login, pair, pair, read, whoami]]
    return [{"steps": steps} for steps in cases]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    login = st.tuples(st.just("login"), st.sampled_from(_USERS))
    step = login | st.tuples(st.sampled_from(_kinds(facts)[1:]), st.just(""))
    return {"steps": st.lists(step, min_size=2, max_size=8)}


def _labels(inputs: Inputs) -> list[str]:
    names = {"login": "login", "whoami": "whoami", "read": "stateless call", "pair": "two calls at once"}
    return sorted({names[kind] for kind, _ in inputs["steps"]})


def _serve(server: Any) -> None:
    """The tools of a server that keeps state in its session."""

    def login(arguments: dict[str, Any], context: ToolContext) -> str:
        if context.session_state is None:
            raise ToolError("login needs a session")
        context.session_state["user"] = arguments["user"]
        return f"logged in as {arguments['user']}"

    def whoami(arguments: dict[str, Any], context: ToolContext) -> str:
        user = (context.session_state or {}).get("user")
        if user is None:
            raise ToolError("nobody is logged in on this session")
        return f"user {user}"

    server.tool("login", description="log in for this session", input_schema=_USER, returns=login)
    server.tool("whoami", description="the user logged in on this session", read_only=True, returns=whoami)
    server.tool("read", description="a read that keeps no state", read_only=True, returns="ok")


def _session(record: Record) -> str:
    return str(record.session_id)[:8] if record.session_id else "no session"


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    _serve(server)
    await h.connect(adapter)
    mark = len(server.journal)
    outcomes: list[str] = []

    async def call(tool: str, arguments: dict[str, Any]) -> None:
        outcomes.append(f"{tool}: {await adapter.call(tool, arguments)}")

    for kind, user in inputs["steps"]:
        if kind == "login":
            await call("login", {"user": user})
        elif kind == "pair":
            async with anyio.create_task_group() as group:
                group.start_soon(call, "whoami", {})
                group.start_soon(call, "whoami", {})
        else:
            await call(kind, {})
    if facts.sessions == "per_call":
        return  # the adapter declares a session per call: the pass rests on that (the verdict says so)
    calls = [r for r in server.journal.records[mark:] if r.rpc_method == "tools/call"]
    sessions = {r.session_id for r in calls}
    if len(sessions) > 1:
        first = calls[0]
        moved = next(r for r in calls if r.session_id != first.session_id)
        raise h.fail(
            f"the calls of one connection reached the server in {len(sessions)} sessions: #{first.seq} "
            f"{first.tool} in session {_session(first)}, #{moved.seq} {moved.tool} in session {_session(moved)}; a "
            "server that keeps state in its session (a login, a cursor, a transaction) loses it between them (a "
            'bridge that opens a session for every call says so: sessions = "per_call")',
            calls=", ".join(f"#{r.seq} {r.tool} in {_session(r)}" for r in calls),
            outcomes="; ".join(outcomes),
        )


PROPERTY = Property(
    "P19",
    "The calls of one connection reach the server in one session",
    "session_affinity",
    "a server that keeps state in its session (a login and a whoami), calls that keep none between them, two "
    "calls in flight at once",
    _strategies,
    _cases,
    _labels,
    _check,
    eras=(HANDSHAKE,),
    held_as=_held_as,
    guarantee=(
        "The calls an application makes on one connection reach the server in one session (each `tools/call` "
        "carries the `Mcp-Session-Id` of the first), so a server that keeps state in its session finds it; a "
        'bridge whose adapter declares `sessions = "per_call"` holds it as `holds (per-call sessions declared)`. '
        "Handshake era only: 2026-07-28 has no sessions."
    ),
    breaks="a new session for each call, or a pool of sessions calls are spread over, undeclared",
)
