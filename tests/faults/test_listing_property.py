"""Property: for any list of listing faults, the pages a client walks are exactly what the rules say.

A small model of the listing (pages of `page_size` tools, cursors that carry the page number and offset,
and what each listing fault does to the one page it names) predicts every page a naive client is sent;
the server, driven in-process, must send exactly those, with each fault recorded on its page and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.server._state._cursors import Cursor, decode_cursor

from ._support import FRAMINGS, LIMIT_S, Wire, asgi_client, messages, rpc

MAX_REQUESTS = 8
"""How many tools/list requests the client sends at most (stuck and endless walks never end by themselves)."""
NAMES = ("t1", "t2", "t3", "t4", "t5", "t6")
PAGE = st.integers(min_value=1, max_value=4)

LISTING_FAULTS = st.one_of(
    st.builds(faults.RepeatCursor, page=st.integers(min_value=2, max_value=4)),
    st.builds(faults.StuckCursor, page=PAGE),
    st.builds(faults.EmptyCursor, page=PAGE),
    st.builds(faults.DuplicateTool, page=PAGE, name=st.none() | st.sampled_from(NAMES)),
    st.builds(faults.PageError, page=PAGE, code=st.sampled_from([-32603, -32000])),
    st.builds(faults.MalformedPage, page=PAGE),
    st.builds(faults.SlowPage, page=PAGE, seconds=st.just(0)),
    st.just(faults.EndlessPages()),
    st.builds(faults.InvalidCursor, page=PAGE),
    st.builds(
        faults.CatalogueChange,
        page=PAGE,
        add=st.lists(st.sampled_from(["n1", "n2"]), max_size=2, unique=True),
        remove=st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
    ),
    st.builds(faults.ListChanged, page=PAGE),
)


@dataclass
class Step:
    """One tools/list request: the page its cursor names, the fault that hit it, and what came back."""

    page: int | None
    fault: faults.Fault | None
    tools: Any = None
    error: int | None = None
    next: Cursor | str | None = None
    notified: bool = False


@dataclass
class Model:
    """The listing as the rules describe it."""

    catalogue: list[str]
    page_size: int
    rules: list[faults.Fault]
    framing: str
    fired: list[bool] = field(default_factory=list)
    last: int = 0
    """The index of the rule `take` chose last."""

    def take(self, page: int | None) -> faults.Fault | None:
        """The first rule not used up that names this page (EndlessPages names every page and is never used up)."""
        if not self.fired:
            self.fired = [False] * len(self.rules)
        for index, fault in enumerate(self.rules):
            endless = isinstance(fault, faults.EndlessPages)
            if (endless or getattr(fault, "page", None) == page) and not self.fired[index]:
                self.fired[index] = not endless
                self.last = index
                return fault
        return None

    def answer(self, sent: Cursor | str | None) -> Step:
        here = Cursor(1, 0) if sent is None else sent
        page = here.page if isinstance(here, Cursor) else None
        step = Step(page, self.take(page))
        fault = step.fault
        if not isinstance(here, Cursor) or here.offset > len(self.catalogue) or isinstance(fault, faults.InvalidCursor):
            step.error = -32602
            return step
        if isinstance(fault, faults.PageError):
            step.error = fault.code
            return step
        if isinstance(fault, faults.CatalogueChange):
            self.catalogue = [name for name in self.catalogue if name not in fault.remove]
            self.catalogue += [name for name in fault.add if name not in self.catalogue]
            # Announced on the page's own stream (SSE even under JSON framing, as no GET stream is open).
            step.notified = True
        if isinstance(fault, faults.MalformedPage):
            step.tools = "this page is deliberately malformed"
            return step
        start = min(here.offset, len(self.catalogue))
        end = start + self.page_size
        step.tools = self.catalogue[start:end]
        following = Cursor(here.page + 1, end) if end < len(self.catalogue) else None
        if here.stuck:
            following = here
        if isinstance(fault, faults.StuckCursor):
            following = Cursor(here.page + 1, min(end, len(self.catalogue)), stuck=True)
        elif isinstance(fault, faults.RepeatCursor):
            following = here
        elif isinstance(fault, faults.EndlessPages) and following is None:
            following = Cursor(here.page + 1, len(self.catalogue))
        elif isinstance(fault, faults.DuplicateTool):
            name = fault.name if fault.name is not None else next(iter(self.catalogue), None)
            if name in self.catalogue:
                step.tools = [*step.tools, name]
            else:  # nothing to list again: the page as it was, and the rule did not fire (it stays due)
                self.fired[self.last] = False
                step.fault = None
        elif isinstance(fault, faults.ListChanged):
            step.notified = True
        step.next = "" if isinstance(fault, faults.EmptyCursor) else following
        return step

    def walk(self) -> list[Step]:
        steps: list[Step] = []
        sent: Cursor | str | None = None
        for _ in range(MAX_REQUESTS):
            step = self.answer(sent)
            steps.append(step)
            if step.error is not None or step.next is None:
                break
            sent = step.next
        return steps


async def _walk_the_server(server: TestMcpServer) -> list[Step]:
    """Walk the listing in-process, as a client that sends back whatever nextCursor it gets."""
    steps: list[Step] = []
    with anyio.fail_after(LIMIT_S):
        async with asgi_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            cursor: str | None = None
            for request_id in range(1, MAX_REQUESTS + 1):
                response = await wire.post(rpc("tools/list", {} if cursor is None else {"cursor": cursor}, request_id))
                *notes, answer = messages(response)
                record = server.journal.last
                step = Step(None, record.fault)
                step.notified = [n.get("method") for n in notes] == ["notifications/tools/list_changed"]
                if "error" in answer:
                    step.error = answer["error"]["code"]
                else:
                    tools = answer["result"]["tools"]
                    step.tools = [t["name"] for t in tools] if isinstance(tools, list) else tools
                    cursor = answer["result"].get("nextCursor")
                    step.next = cursor if cursor == "" or cursor is None else decode_cursor(cursor)
                sent = (record.params or {}).get("cursor")
                decoded = Cursor(1, 0) if sent is None else decode_cursor(sent)
                step.page = decoded.page if decoded is not None else None
                steps.append(step)
                if step.error is not None or cursor is None:
                    break
    return steps


@settings(max_examples=150, deadline=None)
@given(
    size=st.integers(min_value=1, max_value=len(NAMES)),
    page_size=st.integers(min_value=1, max_value=3),
    rules=st.lists(LISTING_FAULTS, max_size=4),
    framing=st.sampled_from(FRAMINGS),
)
def test_each_listing_fault_fires_on_its_page_and_nowhere_else(
    size: int, page_size: int, rules: list[faults.Fault], framing: str
) -> None:
    """The walk under any listing faults is the model's: same pages, cursors, errors, notifications and faults."""
    server = TestMcpServer("property", page_size=page_size, response_mode=framing)
    for name in NAMES[:size]:
        server.tool(name, returns="ok")
    for fault in rules:
        server.inject(fault)
    expected = Model(list(NAMES[:size]), page_size, rules, framing).walk()
    walked = anyio.run(_walk_the_server, server)
    assert walked == expected
    for step in walked:
        assert step.fault is None or isinstance(step.fault, faults.EndlessPages) or step.fault.page == step.page
    once = [fault for fault in rules if not isinstance(fault, faults.EndlessPages)]
    assert sum(step.fault is not None and step.fault in once for step in walked) <= len(once)
