"""Errors of the adapter, never verdicts about the bridge (issue 21 item 10): an adapter that enters the SDK `Client`
in `connect()` and meets a `Drop()`, one that raises an exception group or a cancellation, one that does not answer
although the server answered its bridge, and a factory that does not make an adapter; and notes that are true."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from mcp_testkit import faults
from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter, SdkErrorClassifier
from mcp_testkit.contract import ContractError, ContractHarness, ContractViolation, run_contract

HINT = "host it in a task of its own with mcp_testkit.adapters.TaskHost"


class ClientInConnect:
    """The obvious adapter of a bridge built on the SDK `Client`: it enters the client in `connect()`, so in the
    contract's own task, which the SDK cancels when its transport fails."""

    name = "client-in-connect"
    page_limit = None
    retry = 0
    timeout_s = 1.0

    def __init__(self, *, transport: Any = None) -> None:
        self._transport = transport
        self._stack = contextlib.AsyncExitStack()
        self._client: Any = None
        self._tools: list[str] = []

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        http = await self._stack.enter_async_context(httpx2.AsyncClient(transport=self._transport))
        client = Client(streamable_http_client(url, http_client=http), mode="legacy", read_timeout_seconds=1.0)
        self._client = await self._stack.enter_async_context(client)
        self._tools = [tool.name for tool in (await self._client.list_tools()).tools]
        return Outcome.ok()

    async def list_tools(self) -> list[str]:
        return list(self._tools)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        try:
            result = await self._client.call_tool(tool, dict(arguments))
        except MCPError as exc:
            return SdkErrorClassifier().outcome(exc, at="call")
        if result.is_error:
            return Outcome.tool_error(RuntimeError("isError"))
        return Outcome.ok()

    def set_headers(self, headers: Mapping[str, str]) -> None: ...

    async def close(self) -> None:
        await self._stack.aclose()


class Raises(ReferenceBridgeAdapter):
    """The reference bridge (which connects and lists as it should: P0 holds), its adapter's `call` raising what
    `raised()` makes."""

    name = "raises"

    def raised(self) -> BaseException:
        raise NotImplementedError

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        raise self.raised()


class RaisesAGroup(Raises):
    def raised(self) -> BaseException:
        return BaseExceptionGroup("unhandled errors in a TaskGroup", [anyio.get_cancelled_exc_class()()])  # noqa: F821


class RaisesACancellation(Raises):
    def raised(self) -> BaseException:
        return anyio.get_cancelled_exc_class()("Cancelled via cancel scope 7f00")


def test_an_adapter_entering_the_sdk_client_in_connect_gets_an_error_naming_the_host() -> None:
    """The SDK cancels the contract's task on a Drop(): run_contract returns an adapter error naming the call and
    TaskHost, instead of letting the CancelledError end the run without a verdict."""
    # Bounded by the contract's own per-example limit, as is every run_contract below.
    [result] = run_contract(ClientInConnect, properties=["P2"], eras=["handshake"], max_examples=1)
    assert result.status == "error"
    said = result.counterexample or ""
    assert said.startswith("the adapter's call('write') raised CancelledError")
    assert HINT in said
    assert not any("declared cases ran" in note for note in result.notes)


@pytest.mark.parametrize(
    ("factory", "raised"),
    [(RaisesAGroup, "CancelledError (in a BaseExceptionGroup)"), (RaisesACancellation, "CancelledError")],
)
def test_an_adapter_raising_a_base_exception_is_its_error(factory: type[Raises], raised: str) -> None:
    """An exception group or a cancellation (not the example's deadline) escaping an adapter method is an error of
    the adapter naming the method and the hint (a group by what it holds), never an escape from run_contract; no
    note claims cases ran."""
    [result] = run_contract(factory, properties=["P2"], eras=["handshake"], max_examples=5)
    assert result.status == "error"
    said = result.counterexample or ""
    assert said.startswith(f"the adapter's call('write') raised {raised}")
    assert HINT in said
    assert result.notes == ()


class _PostsThenWaits:
    """A bridge that posts a tools/call itself; `stall` makes the adapter wait forever after the answer came."""

    name = "posts"
    page_limit = None
    retry = 0

    def __init__(self, *, transport: Any = None, stall: bool = False) -> None:
        self._transport = transport
        self._stall = stall
        self._url = ""

    async def _post(self, method: str, params: dict[str, Any], *, notify: bool = False) -> httpx2.Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            message["id"] = 1
        headers = {"Accept": "application/json, text/event-stream", **self._session}
        async with httpx2.AsyncClient(transport=self._transport, timeout=None) as http:
            return await http.post(self._url, json=message, headers=headers)

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        self._url = url
        self._session: dict[str, str] = {}
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "posts", "version": "1"}}
        answer = await self._post("initialize", hello)
        self._session = {
            "Mcp-Session-Id": answer.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        await self._post("notifications/initialized", {}, notify=True)
        return Outcome.ok()

    async def list_tools(self) -> list[str]:
        return ["tool"]

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        await self._post("tools/call", {"name": tool, "arguments": {}})
        if self._stall:
            await anyio.Event().wait()  # a reply stream nobody sends to
        return Outcome.ok()

    def set_headers(self, headers: Mapping[str, str]) -> None: ...

    async def close(self) -> None: ...


def _one_call(stall: bool, fault: faults.Fault | None) -> None:
    async def example(h: ContractHarness, adapter: Any) -> None:
        h.server.tool("tool", returns="ok")
        if fault is not None:
            h.server.inject(fault, tool="tool")
        await adapter.connect(h.url, {})
        await adapter.call("tool", {})

    def factory(*, transport: Any = None) -> _PostsThenWaits:
        return _PostsThenWaits(transport=transport, stall=stall)

    with ContractHarness(factory, era="handshake") as harness:
        harness.run(example, timeout_s=1.0)


def test_an_adapter_that_does_not_answer_is_its_error() -> None:
    """The server answered every request of the bridge, none faulted, and the adapter's call still did not return:
    an error of the adapter, not a hang of the bridge."""
    with pytest.raises(ContractError, match=r"the adapter's call\('tool'\) did not return"):
        _one_call(stall=True, fault=None)


def test_a_bridge_waiting_on_the_server_is_a_hang() -> None:
    """While the server still holds the bridge's request open (its answer comes late), the wait is the bridge's."""
    with pytest.raises(ContractViolation, match=r"hung in call\('tool'\)"):
        _one_call(stall=False, fault=faults.LateAnswer(seconds=5))


def _check(folder: Path, spec: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "check", spec, "--examples", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,
    )


def test_check_with_a_factory_that_makes_no_adapter_prints_one_line(tmp_path: Path) -> None:
    """`check mybridge:Bridge` with a class that is not an adapter exits 2 with one line naming what is missing:
    the argument its constructor wants, or the adapter's members its product lacks."""
    (tmp_path / "mybridge.py").write_text(
        textwrap.dedent(
            """
            class Bridge:
                def __init__(self, url, *, transport=None):
                    self.url = url

            class Half:
                name = "half"

                def __init__(self, *, transport=None):
                    pass

                async def connect(self, url, headers):
                    pass
            """
        )
    )
    done = _check(tmp_path, "mybridge:Bridge")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "mcp-testkit check: mybridge:Bridge did not make an adapter: mybridge:Bridge(transport=None) raised "
        "TypeError: Bridge.__init__() missing 1 required positional argument: 'url' (an adapter factory takes "
        "transport= and returns a BridgeAdapter; see docs/adapters.md)"
    ]
    done = _check(tmp_path, "mybridge:Half")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "mcp-testkit check: mybridge:Half made a Half, not an adapter: it has no page_limit, retry, list_tools, call, "
        "set_headers, close (a BridgeAdapter; see docs/adapters.md)"
    ]
