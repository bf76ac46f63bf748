"""Every verdict of the guarantee matrix checked by hand once: for each bridge and property, one probe that
scripts one fault (or none) on a `TestMcpServer`, drives the bridge through its adapter or driver, and judges
from the journal and the execution ledger whether the bridge did what docs/matrix.json says it does.

    python scripts/probe_matrix.py                     # every bridge, in scripts/matrix.py's environments
    python scripts/probe_matrix.py --only langchain    # one bridge (repeatable)
    python scripts/probe_matrix.py --write             # also write docs/matrix-probes.md
    python scripts/probe_matrix.py --ci                # what CI runs: its bridges, against .ci/matrix-expected.json

A probe is not a property: it is one hand-written scenario, with its own judgement, that either shows the
failure the matrix reports (for a FAILS cell: the fault of its shrunk counterexample) or shows the bridge doing
the right thing at the property's main fault (for a "holds" cell). A probe that disagrees with its verdict is a
bug of the contract or of an adapter. Bridges whose first bug masks the others get a second row, probed around
it (smolagents, whose listing crashes on an `inputSchema` without `properties`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TIMEOUT_S = 10.0
"""As the contract's examples: a probe that has not ended by then is a hang."""
WITH_PROPERTIES = {"type": "object", "properties": {}}
"""The input schema of the second smolagents row: the crash of the first is on `{"type": "object"}`."""
_ONE, _TWO = "Bearer probe-one", "Bearer probe-two"


def _matrix_script() -> Any:
    """scripts/matrix.py, whose bridges, environments and column names the probes share."""
    if "_matrix_script" in sys.modules:
        return sys.modules["_matrix_script"]
    spec = importlib.util.spec_from_file_location("_matrix_script", ROOT / "scripts" / "matrix.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["_matrix_script"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Finding:
    """What one probe saw: whether the property held in it (None: the adapter or driver broke), and the evidence."""

    holds: bool | None
    saw: str


class Probe:
    """One hand-written scenario for a property: what it scripts (`label`) and how it judges (`body`)."""

    def __init__(
        self, pid: str, label: str, body: Callable[[Probing], Awaitable[Finding]], *, part: bool = False
    ) -> None:
        self.pid = pid
        self.label = label
        self.body = body
        self.part = part
        """A probe of one case among others the verdict stands for: holding where the property fails is no
        disagreement (another case fails), failing where it holds is."""


class Probing:
    """One probe's run: the harness's server and URL, the adapter, and the input schema its tools get."""

    def __init__(self, harness: Any, adapter: Any, schema: Mapping[str, Any] | None) -> None:
        self.server = harness.server
        self.url = harness.url
        self.facts = harness.facts()
        """What the adapter declares, with the contract's defaults where it declares nothing (P11's waits)."""
        self.adapter = adapter
        self.schema = schema
        self.transport = harness.client_transport
        """How a client of the probe's own reaches the server as the adapter does (None: over the socket)."""

    def tool(self, name: str, kind: str = "read", returns: Any = "ok") -> None:
        """A tool of call kind `kind`: a read (`readOnlyHint`), an idempotent write, or a write (no hints)."""
        self.server.tool(
            name,
            read_only=True if kind == "read" else None,
            idempotent=True if kind == "idempotent" else None,
            returns=returns,
            input_schema=self.schema,
        )

    async def connect(self, headers: Mapping[str, str] | None = None) -> Finding | None:
        """Connect to the healthy server; a failing Finding if the bridge could not."""
        outcome = await self.adapter.connect(self.url, dict(headers or {}))
        if outcome.kind == "ok":
            return None
        return Finding(False, f"could not connect to a healthy server: {_said(outcome)}")

    def fired(self) -> str:
        records = [r for r in self.server.journal if r.fault is not None]
        return ", ".join(f"{type(r.fault).__name__} on #{r.seq} {r.rpc_method}" for r in records) or "no fault fired"


def _said(outcome: Any) -> str:
    """An outcome in a table cell: its kind and the start of its text or error."""
    text = str(outcome)
    return text if len(text) <= 72 else text[:69] + "..."


# -- the probes, by property -------------------------------------------------------------------------


def connects(schema: Mapping[str, Any] | None = None) -> Probe:
    """P0: one read whose inputSchema is `{"type": "object"}` (legal: a tool without parameters), or `schema`; no
    fault: the bridge connects and lists it."""
    shown = json.dumps(schema or {"type": "object"})

    async def body(p: Probing) -> Finding:
        p.server.tool("lookup", read_only=True, returns="ok", input_schema=schema)
        outcome = await p.adapter.connect(p.url, {})
        loaded = await p.adapter.list_tools() if outcome.kind == "ok" else []
        pages = len(p.server.journal.requests("tools/list"))
        saw = f"connect {_said(outcome)}; loaded {loaded}; {pages} tools/list sent"
        return Finding(outcome.kind == "ok" and loaded == ["lookup"], saw)

    return Probe("P0", f"one tool, inputSchema {shown}, no fault", body)


def listing(fault: Any = None) -> Probe:
    """P1: a, b, c one per page, with `fault` on the listing; whole or failed, within the page limit."""

    async def body(p: Probing) -> Finding:
        p.server.page_size = 1
        for name in ("a", "b", "c"):
            p.tool(name)
        if fault is not None:
            p.server.inject(fault)
        outcome = await p.adapter.connect(p.url, {})
        loaded = await p.adapter.list_tools() if outcome.kind == "ok" else []
        pages = len(p.server.journal.requests("tools/list"))
        saw = f"connect {_said(outcome)}; loaded {loaded}; {pages} tools/list sent; {p.fired()}"
        limit = p.adapter.page_limit
        if limit is not None and pages > limit:
            return Finding(False, f"{saw}; beyond its page limit {limit}")
        if outcome.kind == "ok":
            return Finding(Counter(loaded) == Counter("abc"), saw)
        # Failing whole is right when a fault fired; a listing that fails with none is a bridge that cannot list.
        return Finding(any(r.fault is not None for r in p.server.journal), saw)

    return Probe("P1", f"a, b, c one per page, {fault!r}" if fault is not None else "a, b, c one per page", body)


def as_row(pid: str, probe: Probe, why: str) -> Probe:
    """`probe` as the probe of another property's cell, whose counterexample breaks `probe`'s promise."""
    return Probe(pid, f"{probe.label} ({why})", probe.body, part=probe.part)


def write_once(fault: Any) -> Probe:
    """P2: one call of a write meeting `fault`: the ledger has it run at most once, and once if reported ok."""

    async def body(p: Probing) -> Finding:
        p.tool("write", "write", returns="written")
        if (failed := await p.connect()) is not None:
            return failed
        p.server.inject(fault, method="tools/call", tool="write")
        outcome = await p.adapter.call("write", {})
        runs = p.server.executions("write")
        sent = len(p.server.calls("write"))
        saw = f"call {_said(outcome)}; tools/call sent {sent}x; handler ran {runs}x"
        return Finding(runs <= 1 and (outcome.kind != "ok" or runs == 1), saw)

    return Probe("P2", f"a write, {fault!r} on its call", body)


def read_within_budget(fault: Any, *then: Any) -> Probe:
    """P3: a read meeting `fault` on max(retry, 1) attempts (or `fault` and then each of `then`, one attempt each):
    ok if within the budget, never more than 1 + retry runs."""

    async def body(p: Probing) -> Finding:
        retry = p.adapter.retry
        count = max(retry, 1) if not then else 1 + len(then)
        p.tool("read", "read", returns="read")
        if (failed := await p.connect()) is not None:
            return failed
        if then:
            for each in (fault, *then):
                p.server.inject(each, method="tools/call", tool="read", times=1)
        else:
            p.server.inject(fault, method="tools/call", tool="read", times=count)
        outcome = await p.adapter.call("read", {})
        runs = p.server.executions("read")
        sent = len(p.server.calls("read"))
        saw = f"retry {retry}, {count} fault(s); call {_said(outcome)}; tools/call sent {sent}x; handler ran {runs}x"
        return Finding(runs <= 1 + retry and (count > retry or outcome.kind == "ok"), saw)

    faults = f"{fault!r}, then {', '.join(map(repr, then))}" if then else f"{fault!r} on max(retry, 1) attempts"
    return Probe("P3", f"a read, {faults}", body)


def auth_final(status: int = 401) -> Probe:
    """P4: `status` on a read's call, then a rotation: never resent with the refused token; the next call is fresh."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults

        server = p.server
        server.require_header("Authorization", _ONE, status=status)
        p.tool("tool", "read")
        if (failed := await p.connect({"Authorization": _ONE})) is not None:
            return failed
        mark = len(server.journal)
        server.inject(faults.HttpStatus(status, headers={"WWW-Authenticate": "Bearer"}), tool="tool")
        first = await p.adapter.call("tool", {})
        sent = server.journal.records[mark:]
        refused = next((r for r in sent if r.status == status), None)
        if refused is None:
            return Finding(False, f"call {_said(first)}; it met no {status}: no request was sent")
        work = ("initialize", "tools/list", "tools/call")
        again = [
            r for r in sent if r.seq > refused.seq and r.rpc_method in work and r.headers.get("authorization") == _ONE
        ]
        server.rotate_header("Authorization", _TWO)
        p.adapter.set_headers({"Authorization": _TWO})
        mark = len(server.journal)
        second = await p.adapter.call("tool", {})
        stale = [r for r in server.journal.records[mark:] if r.headers.get("authorization") != _TWO]
        saw = (
            f"{status} on #{refused.seq}; sent again with the refused token {len(again)}x; call {_said(first)}; "
            f"after the rotation: {_said(second)}, {len(stale)} request(s) with a stale token"
        )
        holds = not again and first.kind == "auth_error" and not stale and second.kind == "ok"
        return Finding(holds, saw)

    return Probe("P4", f"a read, HTTP {status} on its call, then a rotation", body)


def new_session() -> Probe:
    """P5: a read's call answered 404 (session lost): a new `initialize` without the stale id, then the call again."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults

        server = p.server
        p.tool("tool", "read")
        if (failed := await p.connect()) is not None:
            return failed
        stale = {session.id for session in server.sessions}
        server.inject(faults.LoseSession(), method="tools/call", tool="tool")
        mark = len(server.journal)
        outcome = await p.adapter.call("tool", {})
        sent = server.journal.records[mark:]
        lost = next((r for r in sent if r.status == 404), None)
        after = [r for r in sent if lost is not None and r.seq > lost.seq]
        fresh = [r for r in after if r.rpc_method == "initialize" and r.headers.get("mcp-session-id") not in stale]
        resent = [r for r in after if r.rpc_method == "tools/call"]
        runs = server.executions("tool")
        where = f"404 on #{lost.seq}" if lost is not None else "no 404 met"
        saw = (
            f"{where}; then {len(fresh)} new initialize, {len(resent)} tools/call; "
            f"call {_said(outcome)}; handler ran {runs}x"
        )
        return Finding(lost is not None and bool(fresh) and outcome.kind == "ok" and runs == 1, saw)

    return Probe("P5", "a read, its call answered 404 (LoseSession)", body)


def kind_at_call(kind: str, fault: Any, expected: frozenset[str]) -> Probe:
    """P6: `fault` on every call of a tool of call kind `kind`: the outcome is one of `expected`."""

    async def body(p: Probing) -> Finding:
        p.tool("tool", kind)
        if (failed := await p.connect()) is not None:
            return failed
        p.server.inject(fault, method="tools/call", tool="tool", times=None)
        outcome = await p.adapter.call("tool", {})
        saw = f"call {_said(outcome)}; wanted {' or '.join(sorted(expected))}; {p.fired()}"
        return Finding(outcome.kind in expected, saw)

    return Probe("P6", f"a {kind}, {fault!r} on its call", body)


def kind_at_connect(fault: Any) -> Probe:
    """P6: `fault` on the listing of a, b, c (one per page): connect fails as connection_error."""

    async def body(p: Probing) -> Finding:
        p.server.page_size = 1
        for name in ("a", "b", "c"):
            p.tool(name)
        p.server.inject(fault, method="tools/list", times=None)
        outcome = await p.adapter.connect(p.url, {})
        return Finding(outcome.kind == "connection_error", f"connect {_said(outcome)}; wanted connection_error")

    return Probe("P6", f"{fault!r} at connect", body)


def render(what: str) -> Probe:
    """P7: a read answering one valid result, called twice: ok (tool_error for isError) both times, the same text,
    showing the text of every text block."""

    async def body(p: Probing) -> Finding:
        import mcp_types

        result = _results()[what]
        p.tool("tool", "read", returns=result)
        if (failed := await p.connect()) is not None:
            return failed
        first = await p.adapter.call("tool", {})
        second = await p.adapter.call("tool", {})
        expected = "tool_error" if result.is_error else "ok"
        same = "the same text" if first.text == second.text else "two different texts"
        texts = [block.text for block in result.content if isinstance(block, mcp_types.TextContent)]
        lost = [text for text in texts if text not in (first.text or "")]
        saw = f"{_said(first)}, then {second.kind}: {same}" + (f", without {lost!r}" if lost else "")
        saw += f"; wanted {expected}"
        return Finding(first.kind == second.kind == expected and first.text == second.text and not lost, saw)

    return Probe("P7", f"a result of {what}", body)


def refused_or_failed() -> Probe:
    """P4: HTTP 401 on one call of a write and HTTP 500 on the next (a write, so that no retry hides the 500): what the
    bridge's caller receives for each (the error's type and message), and whether the 401 alone is an `auth_error`
    (a bridge that raises the same error for both cannot report a refusal)."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults

        p.tool("tool", "write")
        if (failed := await p.connect()) is not None:
            return failed
        received = []
        for status in (401, 500):
            p.server.inject(faults.HttpStatus(status), tool="tool")
            outcome = await p.adapter.call("tool", {})
            raised = outcome.error
            told = f"{type(raised).__name__}: {raised}" if raised is not None else f"{outcome.kind} {outcome.text!r}"
            received.append((outcome, told))
        (refused, told_401), (failed_, told_500) = received
        same = told_401 == told_500  # the whole error, before it is shortened for the table

        def shown(told: str) -> str:
            return told if len(told) <= 72 else told[:69] + "..."

        saw = (
            f"401: the caller receives {shown(told_401)} ({refused.kind}); 500: {shown(told_500)} ({failed_.kind})"
            + ("; the same message for both" if same else "; two different messages")
        )
        # Told apart by the outcome's kind: by the message, or by what else the error carries (a status attribute:
        # the TypeScript SDK's `StreamableHTTPError.code`).
        return Finding(refused.kind == "auth_error" and failed_.kind != "auth_error", saw)

    return Probe("P4", "a write, HTTP 401 on one call, HTTP 500 on the next: what its caller receives", body)


def reissue_after_broken_stream(kind: str = "read") -> Probe:
    """P5s (the stateless era): a call whose response stream ends before its answer (`EndStream`): a read re-issued
    once, with a new id, and answered (a bridge declaring retry=0: not re-issued, and reported as a loss); a write
    never re-issued."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults

        p.tool("tool", kind)
        if (failed := await p.connect()) is not None:
            return failed
        p.server.inject(faults.EndStream(), tool="tool")
        outcome = await p.adapter.call("tool", {})
        calls = p.server.calls("tool")
        ids = [r.rpc_id for r in calls]
        saw = f"call {_said(outcome)}; tools/call sent {len(calls)}x (ids {ids}); {p.fired()}"
        if kind == "write":
            return Finding(len(calls) == 1, saw)
        if getattr(p.adapter, "retry", 0) == 0:
            # The retry rule (docs/contract.md): a bridge declaring retry=0 re-issues nothing and reports the loss.
            saw += "; retry 0"
            return Finding(len(calls) == 1 and outcome.kind in ("connection_error", "outcome_unknown"), saw)
        return Finding(len(calls) == 2 and len(set(ids)) == 2 and outcome.kind == "ok", saw)

    return Probe("P5s", f"a {kind}, its response stream ended before the answer (EndStream)", body)


async def _abandoned(p: Probing, name: str) -> Any:
    """Call `name` and abandon it with the application's cancel scope as soon as the server journals the call."""
    import anyio

    outcome: list[Any] = ["(abandoned by the application)"]

    async def call() -> None:
        outcome[0] = await p.adapter.call(name, {})

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            with anyio.move_on_after(5):
                while not p.server.journal.calls(name) and isinstance(outcome[0], str):  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            p.adapter.abandoning = True  # the contract's guard lets this cancellation through
            group.cancel_scope.cancel()
    finally:
        p.adapter.abandoning = False
    return outcome[0]


def cancelled(how: str = "scope") -> Probe:
    """P10: a read the tool holds 2 s (or, `how="timeout"`, past the bridge's timeout), abandoned by the application's
    cancel scope (or ended by the bridge's timeout): the server gets the cancel naming it; the next call gets its
    own answer."""

    async def body(p: Probing) -> Finding:
        import anyio

        hold_s = 2.0 if how == "scope" else 2.5 * (p.adapter.timeout_s or 1.0)

        async def slow(arguments: dict[str, Any]) -> str:
            await anyio.sleep(hold_s)
            return "the late answer"

        p.tool("slow", "read", returns=slow)
        p.tool("read", "read", returns="the next answer")
        if (failed := await p.connect()) is not None:
            return failed
        abandoned = await (_abandoned(p, "slow") if how == "scope" else p.adapter.call("slow", {}))
        sent = p.server.journal.calls("slow")
        if not sent:
            return Finding(False, f"the call was never sent; {_said(abandoned)}")
        after = await p.adapter.call("read", {})
        with anyio.move_on_after(2.0):
            while not p.server.journal.cancelled(request_id=sent[0].rpc_id, tool="slow"):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        named = p.server.journal.cancelled(request_id=sent[0].rpc_id, tool="slow")
        how_told = ", ".join(f"#{r.seq} {r.rpc_method or 'stream closed'}" for r in named) or "nothing"
        saw = f"abandoned #{sent[0].seq} id={sent[0].rpc_id!r}: {_said(abandoned)}; cancel: {how_told}; "
        saw += f"next {_said(after)}"
        return Finding(bool(named) and after.kind == "ok" and "the next answer" in (after.text or ""), saw)

    what = "the application's cancel scope" if how == "scope" else "the bridge's own timeout"
    return Probe("P10", f"a read held by its tool, abandoned by {what}", body, part=how != "scope")


def bounded_wait(fault: Any, where: str = "call", kind: str = "read") -> Probe:
    """P11: `fault` holds the call of a tool of call kind `kind` (or the connect's `where` request): it ends within
    the bridge's declared waits (1 + retry attempts of `timeout_s` for a read, one for a write, or
    `connect_timeout_s`) x 1.25 + 1 s, and not as ok."""

    async def body(p: Probing) -> Finding:
        import time

        import anyio

        adapter = p.adapter
        attempts = 1 + adapter.retry if kind == "read" else 1
        # The waits the adapter declares, or the contract's defaults (an undeclared timeout is 30 s a request).
        declared = p.facts.connect_wait_s if where != "call" else attempts * p.facts.wait_s
        limit_s = 1.25 * declared + 1.0
        p.tool("slow", kind, returns="done")
        outcome: Any = None
        if where == "call" and (failed := await p.connect()) is not None:
            return failed
        p.server.inject(fault, method="tools/call" if where == "call" else where, times=None)
        started = time.perf_counter()
        adapter.abandoning = True
        try:
            with anyio.move_on_after(limit_s):
                outcome = await (adapter.call("slow", {}) if where == "call" else adapter.connect(p.url, {}))
        finally:
            adapter.abandoning = False
        took = time.perf_counter() - started
        ended = "still waiting" if outcome is None else _said(outcome)
        saw = f"declared {declared:g} s, limit {limit_s:g} s; after {took:.2f} s: {ended}; {p.fired()}"
        return Finding(outcome is not None and outcome.kind != "ok", saw)

    return Probe("P11", f"{fault!r} on the {f'call of a {kind}' if where == 'call' else where}", body)


def large_result(size: int, sse: bool, kind: str = "read") -> Probe:
    """P12: a call of a tool of call kind `kind` answered with `size` bytes (SSE or JSON): over a declared limit a
    tool_error naming the size; without one, an end within P11's bounds that is no auth error; either way the next
    call works, and a write ran at most once per call."""

    async def body(p: Probing) -> Finding:
        import time

        import anyio

        from mcp_testkit import faults

        adapter = p.adapter
        limit = getattr(adapter, "max_result_bytes", None)
        bound_s = 1.25 * (1 + adapter.retry) * (adapter.timeout_s or 0.0) + 1.0
        p.tool("big", kind, returns="small")
        if (failed := await p.connect()) is not None:
            return failed
        p.server.inject(faults.HugeResult(size, sse=sse), method="tools/call", tool="big", times=1)
        started = time.perf_counter()
        outcome: Any = None
        adapter.abandoning = True
        try:
            with anyio.move_on_after(bound_s if limit is None else 60):
                outcome = await adapter.call("big", {})
        finally:
            adapter.abandoning = False
        took = time.perf_counter() - started
        after = await adapter.call("big", {})
        if kind == "write":
            await adapter.close()  # what it sends when it closes counts too (the ledger after close)
        runs = p.server.executions("big")
        ended = "still waiting" if outcome is None else _said(outcome)
        saw = f"{kind}: handler ran {runs}x for 2 calls; {size} bytes ({'SSE' if sse else 'JSON'}), limit {limit}; "
        saw += f"after {took:.2f} s: {ended}; "
        saw += f"next {_said(after)}"
        if outcome is None or after.kind != "ok" or (kind == "write" and runs > 2):
            return Finding(False, saw)
        if limit is not None and size > limit:
            return Finding(outcome.kind == "tool_error" and _names_size(outcome.text or "", limit), saw)
        return Finding(outcome.kind not in ("auth_error", "approval_required"), saw)

    return Probe("P12", f"a {kind} answered with {size} bytes ({'SSE' if sse else 'JSON'})", body)


def _names_size(text: str, limit: int) -> bool:
    """Whether `text` names a size at or over `limit` (in bytes, or with a unit), as P12 asks of the error."""
    import re

    numbers = [int(re.sub(r"[_,]", "", found)) for found in re.findall(r"\d[\d_,]*", text)]
    return any(number >= limit for number in numbers) or re.search(r"\d+(\.\d+)? ?[KMG]i?B", text) is not None


def concurrent(fault: Any, calls: int = 4) -> Probe:
    """P13: `calls` reads in flight at once, `fault` on one of them: every other gets its own answer, none another's,
    and the next call works."""

    async def body(p: Probing) -> Finding:
        import anyio

        async def echo(arguments: dict[str, Any]) -> str:
            await anyio.sleep(0.2)  # all in flight together
            return f"answer {arguments.get('n')}"

        p.server.tool("echo", read_only=True, returns=echo, input_schema=p.schema)
        if (failed := await p.connect()) is not None:
            return failed
        p.server.inject(fault, method="tools/call", tool="echo", times=1)
        outcomes: dict[int, Any] = {}

        async def one(n: int) -> None:
            outcomes[n] = await p.adapter.call("echo", {"n": n})

        async with anyio.create_task_group() as group:
            for n in range(calls):
                group.start_soon(one, n)
        after = await p.adapter.call("echo", {"n": 99})
        failed_ = [n for n, o in sorted(outcomes.items()) if o.kind != "ok"]
        wrong = [n for n, o in sorted(outcomes.items()) if o.kind == "ok" and f"answer {n}" not in (o.text or "")]
        saw = (
            f"{calls} calls, {p.fired()}; failed {failed_ or 'none'}; another's answer {wrong or 'none'}; "
            f"next {_said(after)}"
        )
        own = after.kind == "ok" and "answer 99" in (after.text or "")
        return Finding(len(failed_) <= 1 and not wrong and own, saw)

    return Probe("P13", f"{calls} reads in flight, {fault!r} on one", body)


def approval_after_removal() -> Probe:
    """P14: a call paused for approval, its tool removed at the server, then approved: nothing is sent."""

    async def body(p: Probing) -> Finding:
        adapter = p.adapter
        adapter.use_tool_cache()
        p.tool("gated", "write")
        adapter.require_approval(["gated"])
        if (failed := await p.connect()) is not None:
            return failed
        paused = await adapter.call("gated", {})
        if paused.kind != "approval_required":
            return Finding(False, f"the call was not paused: {_said(paused)}")
        p.server.remove_tool("gated")
        approved = await adapter.approve(paused.text)
        sent = p.server.journal.calls("gated")
        saw = f"paused, tool removed, approved: {_said(approved)}; tools/call sent {len(sent)}x"
        return Finding(not sent and approved.kind != "ok", saw)

    return Probe("P14", "a call paused for approval, its tool removed, then approved", body)


def fallback() -> Probe:
    """P18: a handshake-era server (its probe answered 404 without a body, every other stateless request refused as
    such a server refuses one): the bridge falls back to initialize, then lists and calls in the handshake era."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults

        p.tool("read")
        p.server.inject(faults.DiscoverError(404, None), method="server/discover", times=None)
        p.server.inject(faults.EraDowngrade())
        connected = await p.adapter.connect(p.url, {})
        called = await p.adapter.call("read", {}) if connected.kind == "ok" else None
        records = list(p.server.journal)
        probes = sum(1 for r in records if r.rpc_method == "server/discover")
        initialized = any(r.rpc_method == "initialize" and r.status == 200 for r in records)
        eras = sorted({r.era for r in records if r.rpc_method in ("tools/list", "tools/call") and r.status == 200})
        runs = p.server.executions("read")
        saw = (
            f"{probes} server/discover (404); initialize {'answered' if initialized else 'not sent'}; listing and "
            f"call in {', '.join(eras) or 'no era'}; connect {_said(connected)}; call {_said(called)}; ran {runs}x"
        )
        ok = called is not None and called.kind == "ok" and initialized and eras == ["handshake"] and runs == 1
        return Finding(ok, saw)

    return Probe("P18", "a handshake-era server: the probe answered 404, stateless requests refused", body)


def affinity() -> Probe:
    """P19: a login whose user the server keeps in the session, then a whoami answered from it; no fault: both calls
    in one session, the user found; or per-call sessions, which the adapter declares."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import ToolError

        def login(arguments: dict[str, Any], context: Any) -> str:
            context.session_state["user"] = arguments["user"]
            return "logged in"

        def whoami(arguments: dict[str, Any], context: Any) -> str:
            if "user" not in (context.session_state or {}):
                raise ToolError("nobody is logged in on this session")
            return f"user {context.session_state['user']}"

        user = {"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]}
        p.server.tool("login", returns=login, input_schema=user)
        p.server.tool("whoami", read_only=True, returns=whoami, input_schema=p.schema)
        if (failed := await p.connect()) is not None:
            return failed
        await p.adapter.call("login", {"user": "ann"})
        answer = await p.adapter.call("whoami", {})
        calls = p.server.journal.calls()
        sessions = {r.session_id for r in calls}
        declared = p.facts.sessions == "per_call"
        saw = f"login, whoami: {len(calls)} tools/call in {len(sessions)} session(s); whoami {_said(answer)}"
        if declared:
            saw += "; per-call sessions declared"
        return Finding(declared or (len(sessions) == 1 and "user ann" in (answer.text or "")), saw)

    return Probe("P19", "a login kept in the session, then a whoami; no fault", body)


def refreshed_once() -> Probe:
    """P15: a protected server; a write whose token expires on its second call: one new token, the refused call sent
    once more with it, and the write run once for each call made."""

    async def body(p: Probing) -> Finding:
        from mcp_testkit import faults
        from mcp_testkit.auth import AuthServer, Browserless

        server = p.server
        server.protect(AuthServer())
        p.tool("tool", "write")
        browser = Browserless(transport=p.transport)
        p.adapter.use_oauth(browser.redirect_handler, browser.callback_handler)
        if (failed := await p.connect()) is not None:
            return failed
        first = await p.adapter.call("tool", {})
        mark = len(server.auth.grants)  # type: ignore[union-attr]
        server.inject(faults.ExpireToken(), tool="tool")
        second = await p.adapter.call("tool", {})
        calls = server.journal.calls()
        tokens = server.journal.tokens
        sent = ", ".join(f"#{r.seq} {tokens.get(r.seq)} -> {r.status}" for r in calls)
        new = len(server.auth.grants) - mark  # type: ignore[union-attr]
        runs = server.executions("tool")
        statuses = [r.status for r in calls]
        saw = f"calls {_said(first)}, {_said(second)}; sent {sent}; {new} new token(s); the write ran {runs}x"
        holds = second.kind == "ok" and statuses == [200, 401, 200] and new == 1 and runs == 2
        return Finding(holds, saw)

    return Probe("P15", "a write whose token expires on its second call (ExpireToken)", body)


def _results() -> dict[str, Any]:
    import mcp_types

    return {
        "one audio block": mcp_types.CallToolResult(
            content=[mcp_types.AudioContent(type="audio", data="aGVsbG8=", mime_type="audio/wav")], is_error=False
        ),
        "one text block, isError": mcp_types.CallToolResult(
            content=[mcp_types.TextContent(type="text", text="hello")], is_error=True
        ),
        "two text blocks, isError": mcp_types.CallToolResult(
            content=[
                mcp_types.TextContent(type="text", text="store unavailable"),
                mcp_types.TextContent(type="text", text="retry after 5 s"),
            ],
            is_error=True,
        ),
    }


def probes_for(column: str, era: str = "handshake") -> dict[str, Probe]:
    """The probes for `column`, by row: for each property its main fault, or the fault a FAILS cell's counterexample
    names where the bridge breaks the property some other way (chosen by hand, from docs/matrix.md); and for every
    bridge a second P4 row, a 401 and a 500, showing what its caller receives for each. In the stateless era P5
    (no sessions) gives way to P5s."""
    from mcp_testkit import faults as f

    error_result = f.ErrorResult("probe tool error")
    transient = frozenset({"connection_error", "outcome_unknown"})
    chosen = {
        "P0": connects(),
        "P1": listing(f.DuplicateTool(1)),
        "P2": write_once(f.Drop(after_execution=True)),
        "P3": read_within_budget(f.Drop(after_execution=True)),
        "P4": auth_final(401),
        "P4 (401, 500)": refused_or_failed(),
        "P5": new_session(),
        "P6": kind_at_connect(f.DuplicateTool(1)),
        "P7": render("one audio block"),
        "P10": cancelled(),
        "P11": bounded_wait(f.NeverAnswer()),
        "P12": large_result(8 * 1024 * 1024, sse=True),
        "P13": concurrent(f.Drop()),
        "P14": approval_after_removal(),
        "P15": refreshed_once(),
        "P19": affinity(),
    }
    if era == "stateless":
        chosen["P18"] = fallback()  # a bridge of 2026-07-28 meeting an older server: the stateless column's
    drops_is_error = {
        "P2": write_once(error_result),
        "P6": kind_at_call("read", error_result, frozenset({"tool_error"})),
        "P7": render("one text block, isError"),
    }
    # P10: these fail it when the application abandons a call, and cancel one their own timeout ends (docs/matrix.md).
    own_timeout = {"P10 (own timeout)": cancelled("timeout")}
    overrides: dict[str, dict[str, Probe]] = {
        "openai-agents": own_timeout,
        "openai-agents-invoke": {**drops_is_error, **own_timeout},
        # P11, P12: it resends a write too (max_retry_attempts), so a held write waits 3 timeouts and runs again.
        "openai-agents-retrying": {
            "P3": read_within_budget(f.LoseSession()),
            "P11": bounded_wait(f.NeverAnswer(), kind="write"),
            "P12": large_result(8 * 1024 * 1024, sse=True, kind="write"),
            # P13's counterexample is P2's promise met in a P13 example: the write dropped after it ran is resent.
            "P13": as_row("P13", write_once(f.Drop(after_execution=True)), "P2's promise, met in P13's example"),
            **own_timeout,
        },
        "llama-index": {"P1": listing(), **drops_is_error, **own_timeout},
        "pydantic-ai": {"P6": kind_at_call("read", f.Drop(), transient)},
        # P7: fastmcp's ToolError keeps only the first block's text (docs/matrix.md, Changes).
        "fastmcp": {"P7": render("two text blocks, isError")},
        "langchain-mcp-adapters": {
            "P2": write_once(f.TruncateBody()),
            "P3": read_within_budget(f.EndStream()),
            "P6": kind_at_call("read", f.TruncateBody(), transient),
        },
        "smolagents": {"P1": listing(), "P6": kind_at_call("read", error_result, frozenset({"tool_error"}))},
        # Around the crash: the findings it masks (first page only, isError dropped, hangs on HTTP errors).
        "smolagents (schema with properties)": {
            "P0": connects(WITH_PROPERTIES),
            "P1": listing(),
            **drops_is_error,
            "P6": kind_at_call("read", f.HttpStatus(500), transient),
        },
    }
    probes = {**chosen, **overrides.get(column, {})}
    if era == "stateless":
        del probes["P5"], probes["P19"]  # sessions: the handshake era's only
        probes["P5s"] = reissue_after_broken_stream()
        stateless: dict[str, dict[str, Probe]] = {
            # No session to lose in 2026-07-28; its retries resend a write after a broken stream too.
            "openai-agents-retrying": {
                "P3": read_within_budget(f.Drop(after_execution=False), f.EndStream()),
                "P5s": reissue_after_broken_stream("write"),
            },
        }
        probes.update(stateless.get(column, {}))
    return probes


# -- running the probes of one column, in the bridge's environment ------------------------------------


def probe_column(
    factory: Any,
    column: str,
    schema: Mapping[str, Any] | None = None,
    properties: Collection[str] | None = None,
    era: str = "handshake",
) -> list[dict[str, Any]]:
    """Run each property's probe (or those of `properties`) for `column` against the adapters `factory` makes, in
    `era`; one row per probe, its column marked as scripts/matrix.py marks a column of the stateless era. None in
    the stateless era for a bridge that falls back to the handshake there (it has no column of that era)."""
    from mcp_testkit.contract import ContractError, ContractHarness, ContractViolation

    rows: list[dict[str, Any]] = []
    named = column + (_matrix_script().STATELESS_COLUMN if era == "stateless" else "")
    with ContractHarness(factory, via="socket", example_timeout_s=EXAMPLE_TIMEOUT_S, era=era) as harness:
        if harness.spoken_era()[0] != era:
            print(f"  {named}: falls back to the handshake era: no probes", flush=True)
            return rows
        facts = harness.facts()
        for probe in probes_for(column, era).values():
            pid = probe.pid
            if properties is not None and pid not in properties:
                continue
            if (reason := _not_applicable(pid, facts)) is not None:
                print(f"  {named} {pid}: n/a ({reason})", flush=True)
                continue
            box: dict[str, Finding] = {}

            async def example(h: Any, adapter: Any, probe: Probe = probe, box: dict[str, Finding] = box) -> None:
                box["finding"] = await probe.body(Probing(h, adapter, schema))

            harness.own_era = _own_era(pid)  # P18's bridge negotiates its era by itself, as the contract makes it
            try:
                harness.run(example)
                finding = box["finding"]
            except ContractViolation as exc:  # the harness's deadline: the bridge hung
                finding = Finding(False, str(exc).splitlines()[0])
            except ContractError as exc:
                finding = Finding(None, f"adapter error: {str(exc).splitlines()[0]}")
            rows.append({"column": named, "property": pid, "probe": probe.label, **asdict(finding), "part": probe.part})
            print(f"  {named} {pid}: {'holds' if finding.holds else 'fails'}: {finding.saw}", flush=True)
    return rows


def _own_era(pid: str) -> bool:
    """Whether the contract makes the adapters of property `pid` without `era=` (`Property.own_era`)."""
    from mcp_testkit.contract._properties import PROPERTIES

    prop = PROPERTIES.get(pid)
    return prop is not None and prop.own_era


def _not_applicable(pid: str, facts: Any) -> str | None:
    """Why property `pid` does not apply to a bridge of these facts (as the contract says n/a), or None."""
    from mcp_testkit.contract._properties import PROPERTIES

    prop = PROPERTIES.get(pid)
    if prop is None:
        return None
    if prop.requires is not None and prop.requires not in facts.capabilities:
        return f"no {prop.requires!r} capability"
    return prop.needs(facts) if prop.needs is not None else None


def child(args: argparse.Namespace) -> int:
    """Probe the adapters named by spec, or the driver, here; write the rows as JSON to `args.out`."""
    from mcp_testkit.adapters import DriverAdapter
    from mcp_testkit.contract._cli._adapter_specs import label, load_factory

    rows: list[dict[str, Any]] = []
    schema = WITH_PROPERTIES if args.with_properties else None
    suffix = " (schema with properties)" if args.with_properties else ""
    for era in args.era.split(","):
        if args.driver:
            factory = DriverAdapter.factory(args.driver)
            rows += probe_column(factory, factory.hello["bridge"] + suffix, schema, era=era)
        for spec in args.specs:
            factory = load_factory(spec)
            rows += probe_column(factory, label(factory, spec) + suffix, schema, era=era)  # as `check` names it
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return 0


# -- the orchestration: each bridge's environment, the verdicts, the table -----------------------------


def _verdicts(path: Path, matrix: Any) -> dict[str, dict[str, str]]:
    """The verdicts by column name (no version) and property: of docs/matrix.json, or of CI's expected file."""
    published = json.loads(path.read_text(encoding="utf-8"))
    verdicts: dict[str, dict[str, str]] = {}
    for label, result in published.items():
        if label.startswith("_"):
            continue
        if "properties" in result:
            verdicts[matrix.column(label)] = {pid: cell["status"] for pid, cell in result["properties"].items()}
        else:
            verdicts[label] = dict(result)
    return verdicts


def _agreement(verdict: str | None, holds: bool | None, part: bool = False) -> str:
    if verdict is None:
        return "(no verdict)"
    if verdict == "blocked":  # not checked: the bridge fails P0, whose row says what the probe saw
        return "blocked by P0"
    if holds is None or verdict == "error":
        return "no check"
    if part and holds and verdict == "failed":
        return "right (another case fails)"
    return "right" if (verdict == "passed") == holds else "WRONG"


def table(rows: list[dict[str, Any]], verdicts: Mapping[str, Mapping[str, str]]) -> list[str]:
    mark = {"passed": "holds", "failed": "FAILS", "error": "ERROR", "blocked": "blocked", "hung": "HANGS"}
    lines = [
        "| bridge | property | verdict | probe | what the journal and ledger show | probe says | verdict is |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        verdict = verdicts.get(row["column"], {}).get(row["property"])
        says = {True: "holds", False: "FAILS", None: "no result"}[row["holds"]]
        cells = [
            f"`{row['column']}`",
            row["property"],
            mark.get(verdict or "", "-"),
            row["probe"].replace("|", "/"),
            row["saw"].replace("|", "/"),
            says,
            _agreement(verdict, row["holds"], row.get("part", False)),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="a bridge of scripts/matrix.py (repeatable)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mcp-testkit-matrix")
    parser.add_argument("--verdicts", type=Path, default=ROOT / "docs" / "matrix.json")
    parser.add_argument("--write", action="store_true", help="write docs/matrix-probes.md")
    parser.add_argument(
        "--ci", action="store_true", help="the CI bridges of scripts/matrix.py, against .ci/matrix-expected.json"
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--driver", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--with-properties", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--era", default="handshake", help=argparse.SUPPRESS)
    parser.add_argument("specs", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.write and (args.only or args.ci):
        parser.error("--write writes the whole table of docs/matrix-probes.md: run it for every bridge, without --only")
    matrix = _matrix_script()
    chosen = [b for b in matrix.BRIDGES if (b.in_ci if args.ci else (not args.only or b.key in args.only))]
    verdicts = _verdicts(matrix.EXPECTED if args.ci else args.verdicts, matrix)
    out = args.cache / "probes"
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for bridge in chosen:
        python, driver = matrix.prepare(bridge, args.cache)
        target = ["--driver", driver] if driver else list(bridge.specs)
        runs = [[], ["--with-properties"]] if bridge.key == "smolagents" else [[]]
        for extra in runs:
            report = out / f"{bridge.key}{'-properties' if extra else ''}.json"
            eras = ["--era", ",".join(bridge.eras)]
            command = [str(python), str(Path(__file__).resolve()), "--child", "--out", str(report), *eras, *extra]
            command += target
            env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
            print("+", " ".join(command), flush=True)
            done = subprocess.run(command, cwd=ROOT, env=env, check=False)
            if done.returncode != 0:
                print(f"::: the probes of {bridge.key} ended with status {done.returncode}", flush=True)
                continue
            rows += json.loads(report.read_text(encoding="utf-8"))
    lines = table(rows, verdicts)
    print("\n".join(lines))
    agreements = Counter(
        _agreement(verdicts.get(r["column"], {}).get(r["property"]), r["holds"], r.get("part", False)) for r in rows
    )
    print("probes: " + ", ".join(f"{count} {what}" for what, count in sorted(agreements.items())))
    if args.write:
        write_page(lines, ROOT / "docs" / "matrix-probes.md")
    return 1 if agreements.get("WRONG") or agreements.get("no check") else 0


def write_page(lines: list[str], path: Path) -> None:
    head = [
        "# The matrix, checked by hand",
        "",
        "Each verdict of [the guarantee matrix](matrix.md) checked once with a one-fault probe: a hand-written",
        "scenario on `TestMcpServer` that scripts one fault (or none), drives the bridge through its adapter or",
        "driver, and judges from the journal and the execution ledger. For a FAILS cell the probe scripts the fault",
        "of the shrunk counterexample; for a cell that holds, the property's main fault. Regenerate with",
        "`python scripts/probe_matrix.py --write`.",
        "",
        "Each bridge that speaks 2026-07-28 is probed in both eras, as the matrix checks it: its rows of the",
        "stateless era (against a server of both eras) are marked `[2026-07-28]`, and there P5s takes the place",
        "of P5. A second P4 row for every bridge scripts a 401 on one call of a write and a 500 on the next,",
        "and shows what the bridge's caller receives for each: a bridge that raises the same error for both",
        "cannot report a refused credential, whatever its adapter could have seen on the wire.",
        "",
    ]
    path.write_text("\n".join([*head, *lines, ""]), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
