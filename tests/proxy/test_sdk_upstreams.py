"""The chaos proxy in front of servers nobody here scripted: the official SDK's `MCPServer` over Streamable HTTP and
over stdio, driven by the SDK `Client`; the journal and the upstream's own count of runs both asserted."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcp_testkit import faults
from mcp_testkit.proxy import ChaosProxy

from .upstream import stdio_command

LIMIT_S = 60.0


def _text(result: object) -> str:
    return result.content[0].text  # type: ignore[attr-defined, no-any-return]


def test_sdk_http_upstream_drop_after_execution_ran_once(sdk_url: str, runs: dict[str, int]) -> None:
    """Drop(after_execution=True) on `bump`: the SDK client's call fails; the upstream's own counter says it ran."""

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(sdk_url) as proxy:
                async with Client(proxy.url, mode="legacy") as client:
                    assert _text(await client.call_tool("add", {"a": 2, "b": 3})) == "5"
                proxy.fail_next_call(faults.Drop(after_execution=True), tool="bump")
                with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK client fails its task group on a drop
                    async with Client(proxy.url, mode="legacy") as client:
                        await client.call_tool("bump", {})
                return proxy

    proxy = anyio.run(go)
    assert runs["bump"] == 1
    bumped = proxy.journal.calls("bump")
    assert len(bumped) == 1
    assert bumped[0].fault == faults.Drop(after_execution=True)
    assert bumped[0].executed is True
    proxy.check(unused_faults=True)


def test_sdk_http_upstream_error_result_never_runs_the_tool(sdk_url: str, runs: dict[str, int]) -> None:
    """ErrorResult on `bump`: the client reads isError, and the upstream's counter did not move."""

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(sdk_url) as proxy, Client(proxy.url, mode="legacy") as client:
                proxy.fail_next_call(faults.ErrorResult("rate limited"), tool="bump")
                result = await client.call_tool("bump", {})
                assert result.is_error
                assert _text(result) == "rate limited"
                assert _text(await client.call_tool("bump", {})) == "bumped 1"

    anyio.run(go)
    assert runs["bump"] == 1


def test_sdk_http_upstream_listing_fault_on_its_second_page(sdk_url: str) -> None:
    """PageError on page 2 of the SDK server's own paging: the walk fails there, the first page came through."""

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(sdk_url) as proxy, Client(proxy.url, mode="legacy") as client:
                proxy.inject(faults.PageError(page=2, code=-32603, message="page two is down"))
                first = await client.list_tools()
                assert [tool.name for tool in first.tools] == ["bump", "add"]
                with pytest.raises(Exception, match="page two is down"):
                    await client.list_tools(cursor=first.next_cursor)
                assert [r.fault for r in proxy.journal.requests("tools/list")][1] == faults.PageError(
                    page=2, code=-32603, message="page two is down"
                )

    anyio.run(go)


def test_sdk_stdio_upstream_through_the_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio SDK server behind the proxy: calls pass, Drop(after_execution=True) ran the tool (its counter file
    says once) while the client never got the answer."""
    counter = tmp_path / "runs.txt"
    monkeypatch.setenv("COUNTER", str(counter))

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(upstream_command=stdio_command()) as proxy:
                async with Client(proxy.url, mode="legacy") as client:
                    assert _text(await client.call_tool("add", {"a": 1, "b": 1})) == "2"
                proxy.fail_next_call(faults.Drop(after_execution=True), tool="bump")
                with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK client fails its task group on a drop
                    async with Client(proxy.url, mode="legacy") as client:
                        await client.call_tool("bump", {})
                return proxy

    proxy = anyio.run(go)
    assert counter.read_text() == "1"
    assert proxy.journal.calls("bump")[0].error == "connection dropped by a fault"
