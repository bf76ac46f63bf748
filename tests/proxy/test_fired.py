"""Faults of the upstream's answer through the proxy fire only where they change it: a listing fault gives the listing
the fake gives for the same fault, the journal marks a fault on the answer it changed, `check()` names one that
changed none."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.proxy import ChaosProxy

from ._wire import answer, open_session, request

LIMIT_S = 60.0
TOOLS = ("t1", "t2", "t3", "t4", "t5")


def _catalogue() -> TestMcpServer:
    server = TestMcpServer("upstream", page_size=2)
    for name in TOOLS:
        server.tool(name, returns=f"{name} ran")
    return server


def _walk(client: httpx2.Client, url: str, pages: int = 3) -> list[Any]:
    """The first `pages` pages of a `tools/list` walk through `url`: each page's answer as the client got it."""
    session = open_session(client, url)
    walked: list[Any] = []
    cursor: str | None = None
    for number in range(1, pages + 1):
        got = answer(
            request(client, url, session, "tools/list", None if cursor is None else {"cursor": cursor}, number), number
        )
        walked.append(got)
        cursor = got.get("result", {}).get("nextCursor")
        if cursor is None:
            break
    return walked


def _names(page: Any) -> list[str]:
    return [tool["name"] for tool in page["result"]["tools"]]


def _marked(journal: Any) -> list[Any]:
    """The fault each `tools/list` record of a journal carries, in order."""
    return [record.fault for record in journal.requests("tools/list")]


@pytest.mark.parametrize(
    ("fault", "changed"),
    [
        (faults.DuplicateTool(2, name="t1"), ["t3", "t4", "t1"]),
        (faults.DuplicateTool(2), ["t3", "t4", "t1"]),
        (faults.DuplicateTool(3, name="t5"), ["t5", "t5"]),
        (faults.DuplicateTool(3, name="t2"), ["t5", "t2"]),
    ],
    ids=["named-first-tool", "catalogues-first-tool", "same-page", "earlier-page"],
)
def test_duplicate_tool_gives_the_fakes_page_and_is_journaled_on_it(
    fault: faults.DuplicateTool, changed: list[str]
) -> None:
    """DuplicateTool(2, name="t1") and kin: the page it hits is the fake's through the proxy (t3, t4, t1), and the
    journal marks that page only, as the fake's does."""
    with _catalogue() as upstream, _catalogue() as fake, ChaosProxy(upstream.url) as proxy:
        with httpx2.Client(timeout=LIMIT_S) as client:
            proxy.inject(fault)
            fake.inject(fault)
            proxied = _walk(client, proxy.url)
            direct = _walk(client, fake.url)
        assert [_names(page) for page in proxied] == [_names(page) for page in direct]
        assert _names(proxied[fault.page - 1]) == changed
        marked = [fault if page == fault.page else None for page in (1, 2, 3)]
        assert _marked(proxy.journal) == marked == _marked(fake.journal)
        assert _marked(upstream.journal) == [None, None, None]
        proxy.check(unused_faults=True)
        fake.check(unused_faults=True)


def test_duplicate_tool_of_a_tool_the_proxy_has_not_seen_does_not_fire() -> None:
    """DuplicateTool(1, name="t5") before page 3 passed: page 1 as it was, no record marked, check() names it
    unfired; once t5 passed through, the rule is still due and the next page 1 lists it again."""
    fault = faults.DuplicateTool(1, name="t5")
    with _catalogue() as upstream, ChaosProxy(upstream.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        proxy.inject(fault)
        first = _walk(client, proxy.url)
        assert [_names(page) for page in first] == [["t1", "t2"], ["t3", "t4"], ["t5"]]
        assert _marked(proxy.journal) == [None, None, None]
        with pytest.raises(AssertionError, match=r"never fired:\n  DuplicateTool\(page=1, name='t5'\)"):
            proxy.check(unused_faults=True)
        again = _walk(client, proxy.url, pages=1)
        assert _names(again[0]) == ["t1", "t2", "t5"]
        assert _marked(proxy.journal)[3:] == [fault]
        proxy.check(unused_faults=True)


def test_a_page_fault_on_an_upstream_error_does_not_fire() -> None:
    """ListChanged(1) and DuplicateTool(1) on a page the upstream answers with an error: passed on as it came,
    and neither is journaled as fired."""
    with _catalogue() as upstream, ChaosProxy(upstream.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        for fault in (faults.ListChanged(1), faults.DuplicateTool(1)):
            upstream.inject(faults.PageError(1, message="upstream broke"))
            proxy.inject(fault)
            got = _walk(client, proxy.url, pages=1)[0]
            assert got["error"]["message"] == "upstream broke"
            assert _marked(proxy.journal)[-1] is None
            with pytest.raises(AssertionError, match=type(fault).__name__):
                proxy.check(unused_faults=True)
            proxy.reset()


def test_break_stream_on_an_upstream_error_status_does_not_fire() -> None:
    """BreakStream() on a call the upstream answers 503: the 503 goes on as it came, no record carries the fault,
    and check() names it unfired."""
    with _catalogue() as upstream, ChaosProxy(upstream.url) as proxy, httpx2.Client(timeout=LIMIT_S) as client:
        session = open_session(client, proxy.url)
        upstream.fail_next_call(faults.HttpStatus(503), tool="t1")
        proxy.fail_next_call(faults.BreakStream(), tool="t1")
        got = request(client, proxy.url, session, "tools/call", {"name": "t1", "arguments": {}})
        assert got.status_code == 503
        assert proxy.journal.calls("t1")[0].fault is None
        with pytest.raises(AssertionError, match=r"never fired:\n  BreakStream\("):
            proxy.check(unused_faults=True)
