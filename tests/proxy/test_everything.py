"""The chaos proxy in front of `@modelcontextprotocol/server-everything` from npm (pinned in tests/proxy/everything),
over stdio and over Streamable HTTP, driven by the SDK `Client`, with faults from Python and from the admin API.

The upstream's own effect is seen through its `gzip-file-as-resource` tool: a run registers the resource
`demo://resource/session/NAME` on the session, holding the gzipped data sent, so reading it back afterwards on the
same session shows the tool ran (and what it ran on); a read of a name never registered fails. The session is
continued with the SDK client where it survives the fault, and with raw JSON-RPC over the proxy where the fault
ends the SDK client (a dropped or reset call fails its whole task group).
"""

from __future__ import annotations

import base64
import gzip
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from node_trees import NPM_CI_TIMEOUT_S, EverythingServer, everything_server

from mcp_testkit import faults
from mcp_testkit.proxy import ChaosProxy
from mcp_testkit.standalone._admin import ProxyAdminApp

from ._wire import answer, request

LIMIT_S = 60.0
TOKEN = "everything-admin"
GZIP = "gzip-file-as-resource"
PAYLOAD = b"hello from the chaos proxy's tests"
TOOLS = {"echo", "get-env", "get-sum", "get-tiny-image", GZIP, "get-structured-content"}
"""Some of the tools server-everything lists whatever the client's capabilities."""

# The first test may wait for the `npm ci` of tests/proxy/everything.
pytestmark = pytest.mark.timeout(NPM_CI_TIMEOUT_S + 2 * LIMIT_S)


@pytest.fixture(scope="module")
def everything() -> EverythingServer:
    """server-everything with its locked packages installed (skips without Node.js, fails so under CI=true)."""
    return everything_server()


@pytest.fixture(scope="module")
def everything_url(everything: EverythingServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """server-everything over Streamable HTTP on 127.0.0.1, stopped after the module's tests."""
    with everything.serving_http(tmp_path_factory.mktemp("everything") / "stderr.txt") as url:
        yield url


def _gzip_call(name: str) -> dict[str, Any]:
    data = "data:text/plain;base64," + base64.b64encode(PAYLOAD).decode()
    return {"name": name, "data": data}


def _ungzipped(contents: Any) -> bytes:
    """The data of the one resource read: what `gzip-file-as-resource` compressed, decompressed."""
    blob = contents[0]["blob"] if isinstance(contents[0], dict) else contents[0].blob
    return gzip.decompress(base64.b64decode(blob))


async def _all_tools(client: Client) -> list[str]:
    """Every tool the upstream lists, page after page, through the proxy."""
    names: list[str] = []
    cursor = None
    for _ in range(50):
        page = await client.list_tools(cursor=cursor)
        names += [tool.name for tool in page.tools]
        cursor = page.next_cursor
        if not cursor:
            return names
    raise AssertionError(f"the listing did not end within 50 pages: {names}")


def _read_on(url: str, session: str, name: str) -> Any:
    """`resources/read` of the session resource `name` with raw JSON-RPC on `session` (the SDK client is gone)."""
    with httpx2.Client(timeout=LIMIT_S) as http:
        uri = f"demo://resource/session/{name}"
        return answer(request(http, url, session, "resources/read", {"uri": uri}, 9), 9)


def test_stdio_pages_and_calls_pass_through_the_proxy(everything: EverythingServer) -> None:
    """Over stdio: the whole listing comes through, two calls answer as server-everything does, all journaled."""

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(upstream_command=everything.stdio_command()) as proxy:
                async with Client(proxy.url, mode="legacy") as client:
                    assert TOOLS <= set(await _all_tools(client))
                    summed = await client.call_tool("get-sum", {"a": 2, "b": 3})
                    assert summed.content[0].text == "The sum of 2 and 3 is 5."  # type: ignore[union-attr]
                    echoed = await client.call_tool("echo", {"message": "through"})
                    assert echoed.content[0].text == "Echo: through"  # type: ignore[union-attr]
                return proxy

    proxy = anyio.run(go)
    assert [r.status for r in proxy.journal.requests("tools/list")] == [200]
    calls = proxy.journal.calls()
    assert [(r.tool, r.status, r.executed, r.fault) for r in calls] == [
        ("get-sum", 200, True, None),
        ("echo", 200, True, None),
    ]
    proxy.check()


def test_stdio_limit_data_loses_an_answer_the_upstream_ran(everything: EverythingServer) -> None:
    """LimitData (a byte fault, over the proxy's real socket) on the gzip call: the SDK client's call fails, its
    session goes on, and the resource the upstream registered holds the data sent."""

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(upstream_command=everything.stdio_command()) as proxy:
                async with Client(proxy.url, mode="legacy") as client:
                    proxy.fail_next_call(faults.LimitData(40), tool=GZIP)
                    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's wording is not ours to assert
                        await client.call_tool(GZIP, _gzip_call("limited.gz"))
                    read = await client.read_resource("demo://resource/session/limited.gz")
                    assert _ungzipped(read.contents) == PAYLOAD
                return proxy

    proxy = anyio.run(go)
    record = proxy.journal.calls(GZIP)[0]
    assert record.fault == faults.LimitData(40)
    assert record.executed is True
    assert "40 bytes" in (record.error or "")
    proxy.check(unused_faults=True)


def test_stdio_error_result_never_reaches_the_upstream(everything: EverythingServer) -> None:
    """ErrorResult on the gzip call: the client reads the error, and the upstream registered no resource."""

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(upstream_command=everything.stdio_command()) as proxy:
                async with Client(proxy.url, mode="legacy") as client:
                    proxy.fail_next_call(faults.ErrorResult("disk full"), tool=GZIP)
                    result = await client.call_tool(GZIP, _gzip_call("never.gz"))
                    assert result.is_error
                    assert result.content[0].text == "disk full"  # type: ignore[union-attr]
                    with pytest.raises(Exception, match=r"never\.gz"):  # the uri asked for, named in the SDK's MCPError
                        await client.read_resource("demo://resource/session/never.gz")
                return proxy

    proxy = anyio.run(go)
    record = proxy.journal.calls(GZIP)[0]
    assert (record.fault, record.executed) == (faults.ErrorResult("disk full"), False)


def test_stdio_drop_after_execution_the_upstream_ran_it(everything: EverythingServer) -> None:
    """Drop(after_execution=True): the SDK client never gets the answer (its session fails), yet the session's
    process ran the call: the resource it registered is read back on the same session."""

    async def go() -> tuple[ChaosProxy, Any]:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(upstream_command=everything.stdio_command()) as proxy:
                proxy.fail_next_call(faults.Drop(after_execution=True), tool=GZIP)
                with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK client fails its task group on a drop
                    async with Client(proxy.url, mode="legacy") as client:
                        await client.call_tool(GZIP, _gzip_call("dropped.gz"))
                session = proxy.journal.calls(GZIP)[0].session_id
                assert session is not None
                read = await anyio.to_thread.run_sync(_read_on, proxy.url, session, "dropped.gz")
                return proxy, read

    proxy, read = anyio.run(go)
    assert _ungzipped(read["result"]["contents"]) == PAYLOAD
    record = proxy.journal.calls(GZIP)[0]
    assert (record.fault, record.executed) == (faults.Drop(after_execution=True), True)
    assert record.error == "connection dropped by a fault"


def _admin(proxy: ChaosProxy, http: httpx2.Client, method: str, route: str, **kwargs: Any) -> Any:
    """One call of the proxy's admin API over HTTP (as `mcp-testkit proxy --admin` serves it)."""
    response = http.request(method, f"{proxy.base_url}/_testkit/{route}",
                            headers={"authorization": f"Bearer {TOKEN}"}, **kwargs)  # fmt: skip
    assert response.status_code in (200, 201), response.text
    return response.json()


def test_http_faults_from_the_admin_api(everything_url: str) -> None:
    """Over Streamable HTTP, faults POSTed to the admin API: a Slice of the listing (its answer written in pieces,
    still whole), a 503 on one call; the journal read back from the admin API says which request each hit."""

    async def go() -> list[str]:
        with anyio.fail_after(LIMIT_S):
            async with Client(everything_url, mode="legacy") as direct:
                return await _all_tools(direct)

    listed = anyio.run(go)
    proxy = ChaosProxy(everything_url)
    proxy.start(ProxyAdminApp(proxy, TOKEN))
    try:
        with httpx2.Client(timeout=LIMIT_S) as http:
            slices = {"fault": {"type": "Slice", "seed": 7, "pieces": 6, "gap_s": 0.001}, "method": "tools/list"}
            _admin(proxy, http, "POST", "faults", json=slices)
            status = {"fault": {"type": "HttpStatus", "status": 503}, "method": "tools/call", "tool": "echo"}
            _admin(proxy, http, "POST", "faults", json=status)

            async def through() -> None:
                with anyio.fail_after(LIMIT_S):
                    async with Client(proxy.url, mode="legacy") as client:
                        assert await _all_tools(client) == listed
                        with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's wording is not ours
                            await client.call_tool("echo", {"message": "first"})
                        echoed = await client.call_tool("echo", {"message": "second"})
                        assert echoed.content[0].text == "Echo: second"  # type: ignore[union-attr]

            anyio.run(through)
            journal = _admin(proxy, http, "GET", "journal", params={"method": "tools/call"})["records"]
            pages = _admin(proxy, http, "GET", "journal", params={"method": "tools/list"})["records"]
            assert _admin(proxy, http, "GET", "faults") == {"rules": []}
    finally:
        proxy.stop()
    assert [(r["status"], r["executed"], (r["fault"] or {}).get("type")) for r in journal] == [
        (503, False, "HttpStatus"),
        (200, True, None),
    ]
    assert pages[0]["fault"]["type"] == "Slice"
    assert pages[0]["error"].startswith("answered in writes of ")


@pytest.mark.parametrize(
    ("rule", "fault_said"),
    [
        ({"type": "Drop", "after_execution": True}, "connection dropped by a fault"),
        (
            {"type": "ResetPeer", "after_execution": True},
            "connection reset (RST) after the request ran by a fault (ResetPeer)",
        ),
    ],
    ids=["drop", "reset-peer"],
)
def test_http_answer_lost_after_the_upstream_ran(everything_url: str, rule: dict[str, Any], fault_said: str) -> None:
    """Over Streamable HTTP, a Drop or a TCP reset after execution, POSTed to the admin API: the SDK client fails,
    the upstream's session holds the resource its run registered, and the journal says the call ran."""
    proxy = ChaosProxy(everything_url)
    proxy.start(ProxyAdminApp(proxy, TOKEN))
    try:
        with httpx2.Client(timeout=LIMIT_S) as http:
            _admin(proxy, http, "POST", "faults", json={"fault": rule, "method": "tools/call", "tool": GZIP})

            async def lose() -> None:
                with anyio.fail_after(LIMIT_S), pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's own
                    async with Client(proxy.url, mode="legacy") as client:
                        await client.call_tool(GZIP, _gzip_call("lost.gz"))

            anyio.run(lose)
            record = _admin(proxy, http, "GET", "journal", params={"method": "tools/call"})["records"][0]
            read = _read_on(proxy.url, record["session_id"], "lost.gz")
    finally:
        proxy.stop()
    assert _ungzipped(read["result"]["contents"]) == PAYLOAD
    assert {key: record["fault"][key] for key in rule} == rule
    assert record["executed"] is True
    assert record["error"] == fault_said


def test_http_python_fault_and_the_upstream_session(everything_url: str) -> None:
    """Over Streamable HTTP, from Python: TruncateBody on the gzip call cuts the answer the upstream gave; the SDK
    client's call fails, its session goes on and reads the resource the run registered."""

    async def go() -> ChaosProxy:
        with anyio.fail_after(LIMIT_S):
            async with ChaosProxy(everything_url) as proxy, Client(proxy.url, mode="legacy") as client:
                proxy.fail_next_call(faults.TruncateBody(), tool=GZIP)
                with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's wording is not ours to assert
                    await client.call_tool(GZIP, _gzip_call("cut.gz"))
                read = await client.read_resource("demo://resource/session/cut.gz")
                assert _ungzipped(read.contents) == PAYLOAD
                return proxy

    proxy = anyio.run(go)
    record = proxy.journal.calls(GZIP)[0]
    assert (record.fault, record.executed) == (faults.TruncateBody(), True)
    proxy.check(unused_faults=True)
