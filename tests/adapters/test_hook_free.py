"""Adapters report what the bridge tells its caller, nothing more (issue 21 item 11): no shipped adapter puts a
transport hook between its bridge and the server, nor does any driver in drivers/, and the verdicts that hooks
used to decide come out as the bridge's caller sees them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import anyio
import httpx2
import pytest

import mcp_testkit.adapters
from mcp_testkit import TestMcpServer
from mcp_testkit.adapters import SdkClientAdapter, SdkErrorClassifier
from mcp_testkit.adapters._hosted import HostedBridgeAdapter
from mcp_testkit.contract import run_contract

DRIVERS = Path(__file__).resolve().parents[2] / "drivers"
HOOK_BASES = (httpx2.AsyncBaseTransport, httpx2.BaseTransport, httpx2.AsyncByteStream, httpx2.SyncByteStream)


def _adapter_modules() -> list[str]:
    package = mcp_testkit.adapters
    return sorted(f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__))


def test_no_adapter_module_defines_a_transport_or_a_body_wrapper() -> None:
    """No module of mcp_testkit.adapters defines an httpx2 transport or byte stream: nothing watches the wire."""
    modules = _adapter_modules()
    assert "mcp_testkit.adapters.fastmcp" in modules
    assert "mcp_testkit.adapters._sdk" in modules
    hooks = [
        f"{name}.{cls.__name__}"
        for name in modules
        for cls in vars(importlib.import_module(name)).values()
        if inspect.isclass(cls) and issubclass(cls, HOOK_BASES) and cls.__module__ == name
    ]
    assert hooks == []


def test_the_classifier_has_no_hook_and_reads_only_the_error() -> None:
    """SdkErrorClassifier offers no transport and no per-operation state: its one method takes the error."""
    public = {name for name in vars(SdkErrorClassifier) if not name.startswith("_")}
    assert public == {"outcome"}
    assert list(inspect.signature(SdkErrorClassifier.outcome).parameters) == ["self", "error", "at"]


def test_hosted_adapters_hand_the_bridge_the_contract_transport_itself() -> None:
    """The HTTP client a hosted (third-party) bridge gets carries the contract's transport itself, unwrapped."""
    transport = httpx2.MockTransport(lambda request: httpx2.Response(500))
    client = HostedBridgeAdapter(transport=transport).http_client()
    assert client._transport is transport


@pytest.mark.parametrize("factory", [SdkClientAdapter, SdkClientAdapter.legacy], ids=["auto", "legacy"])
def test_sdk_adapter_hands_the_client_the_contract_transport_itself(factory: type[SdkClientAdapter]) -> None:
    """The SDK client adapter's connected client carries the contract's transport itself, unwrapped."""
    server = TestMcpServer()
    server.tool("read", read_only=True, returns="r")
    transport = httpx2.ASGITransport(app=server.asgi_app)

    async def connect() -> object:
        adapter = factory(transport=transport)
        with anyio.fail_after(10):
            try:
                assert (await adapter.connect("http://127.0.0.1/mcp", {})).kind == "ok"
                return adapter._http._transport
            finally:
                await adapter.close()

    assert anyio.run(connect) is transport


@pytest.mark.parametrize("factory", [SdkClientAdapter, SdkClientAdapter.legacy], ids=["auto", "legacy"])
def test_without_hooks_the_sdk_client_fails_p4_saying_why(factory: type[SdkClientAdapter]) -> None:
    """With nothing on the wire, the SDK client's P4 verdict is the one its caller earns: it fails, and says the
    client raises the same error for a 401 as for a 500 (the hooked adapter held P4, falsely)."""
    [result] = run_contract(factory, properties=["P4"], eras=["handshake"], max_examples=5)
    assert result.status == "failed"
    said = result.counterexample or ""
    assert "HTTP 401 surfaced as outcome_unknown, not auth_error" in said or "HTTP 403 surfaced as" in said
    assert "Server returned an error response" in said
    assert "its caller cannot tell a 401 or 403 from a 500" in said


def test_no_python_driver_watches_the_wire() -> None:
    """No Python driver defines a transport or a byte stream, and none routes its bridge's client through one."""
    sources = {path.name: path.read_text() for path in sorted(DRIVERS.rglob("*.py"))}
    assert {"driver_protocol.py", "drive.py"} <= set(sources)
    for name, text in sources.items():
        for needle in ("AsyncBaseTransport", "AsyncByteStream", "transport=", "WireWatch", "status_code ="):
            assert needle not in text, f"{name} has {needle!r}"


def test_the_typescript_driver_does_not_watch_the_wire() -> None:
    """The TypeScript driver's fetch sets the headers and reads nothing back; its errors are sorted from what the
    SDK throws."""
    text = (DRIVERS / "typescript" / "drive.mjs").read_text()
    assert "response.status" not in text
    assert "init.body" not in text
    assert "error.code === 401" in text
