"""`@pytest.mark.mcp_server(upstream=...)` without a cassette: `mcp_server` is a chaos proxy in front of that live
server, run by pytester; with `cassette=` the same keyword names the server to record from, as before."""

from __future__ import annotations

import pytest

from mcp_testkit import TestMcpServer

TEST = """
import pytest
from mcp_testkit import faults

pytestmark = pytest.mark.anyio


@pytest.mark.mcp_server(upstream={upstream!r})
async def test_through_the_proxy(mcp_client, mcp_server):
    mcp_server.fail_next_call(faults.ErrorResult("injected"), tool="add")
    result = await mcp_client.call_tool("add", {{}})
    assert result.is_error
    ok = await mcp_client.call_tool("add", {{}})
    assert ok.content[0].text == "added"
    assert [r.fault for r in mcp_server.journal.calls("add")] == [faults.ErrorResult("injected"), None]


@pytest.mark.mcp_server(upstream={upstream!r})
async def test_an_unfired_fault_fails(mcp_client, mcp_server):
    mcp_server.fail_next_call(faults.ErrorResult("never"), tool="nobody")
    await mcp_client.call_tool("add", {{}})


@pytest.mark.mcp_server(upstream={upstream!r}, page_size=2)
async def test_scripting_keywords_are_refused(mcp_server):
    pass
"""


@pytest.fixture(autouse=True)
def inner_ini(pytester: pytest.Pytester) -> None:
    """Inner runs get their own ini and run on asyncio."""
    pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def anyio_backend():
            return "asyncio"
        """
    )
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider -p no:unraisableexception -p no:benchmark
        asyncio_default_fixture_loop_scope = function
        """
    )


def test_upstream_marker_puts_the_chaos_proxy_in_front(pytester: pytest.Pytester) -> None:
    """Faults injected on `mcp_server` hit the live server's calls; an unfired one fails the test; TestMcpServer
    keywords beside upstream= are refused, naming them."""
    live = TestMcpServer("live")
    live.tool("add", returns="added")
    with live:
        pytester.makepyfile(TEST.format(upstream=live.url))
        result = pytester.runpytest("-p", "no:randomly")
        assert live.executions("add") == 2  # the two unfaulted calls reached the live server
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*1 scripted fault(s) never fired*"])
    result.stdout.fnmatch_lines(["*page_size script a TestMcpServer*"])


def test_run_contract_on_a_proxy_says_why_it_cannot() -> None:
    """run_contract(server=ChaosProxy(...)) is a ValueError saying the contract's tools and ledger are a fake's."""
    from mcp_testkit import ChaosProxy, run_contract
    from mcp_testkit.adapters import ReferenceBridgeAdapter

    proxy = ChaosProxy("http://127.0.0.1:1/mcp")
    with pytest.raises(ValueError, match=r"scripts its own tools on every example .* Run the contract"):
        run_contract(ReferenceBridgeAdapter, server=proxy)  # type: ignore[arg-type]
