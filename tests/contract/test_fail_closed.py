"""Fail closed on needs (issue 36): a property is n/a only where the adapter says the contract structurally cannot do
what it takes; a number the adapter does not declare gets a default, so a bridge that declares little is still
judged on P10-P13, and one that waits without end fails P11 saying so."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter, SdkClientAdapter
from mcp_testkit.contract import DEFAULT_WAIT_S, run_contract


class _OnlyTimeout(SdkClientAdapter):
    """The SDK client as a new user's adapter declares it: a timeout, nothing for P10-P13."""

    name = "sdk-client (declares only timeout_s)"
    concurrency = None

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.connect_timeout_s = None


class _WaitsForEver(ReferenceBridgeAdapter):
    """The reference bridge set to wait (as good as) for ever, its adapter declaring no timeout."""

    name = "reference (no timeout)"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.timeout_s = None

    def _config(self, url: str) -> Any:
        return dataclasses.replace(super()._config(url), timeout_s=10 * DEFAULT_WAIT_S, connect_timeout_s=10_000.0)


@pytest.mark.parametrize("via", ["asgi", "socket"])
def test_an_adapter_declaring_only_timeout_s_gets_verdicts_for_p10_p11_and_p13(via: str) -> None:
    """P10, P11 and P13 each come to a verdict (held or broken) for the SDK client whose adapter declares only
    `timeout_s`, and the same verdict the fully declared adapter gets: the declarations sharpen, never decide."""
    ids = ["P10", "P11", "P13"]
    scarce = run_contract(_OnlyTimeout, properties=ids, eras=["handshake"], max_examples=3, via=via)
    full = run_contract(SdkClientAdapter, properties=ids, eras=["handshake"], max_examples=3, via=via)
    assert all(r.status in ("passed", "failed") for r in scarce), [(r.property_id, r.status, r.notes) for r in scarce]
    assert [(r.property_id, r.status) for r in scarce] == [(r.property_id, r.status) for r in full]


def test_a_bridge_that_waits_without_end_fails_p11_saying_it_declares_no_timeout() -> None:
    """A bridge whose waits outlast the contract's default (its adapter declares no timeout) FAILS P11, the
    counterexample naming the default (found in-process on the virtual clock, then confirmed on the real one)."""
    [result] = run_contract(_WaitsForEver, properties=["P11"], eras=["handshake"], max_examples=1, clock="virtual")
    assert result.status == "failed", (result.status, result.notes)
    assert "waits without end (its adapter declares no timeout)" in (result.counterexample or "")
    assert f"default of {DEFAULT_WAIT_S:g} s" in (result.counterexample or "")


def test_over_a_socket_a_bridge_that_waits_without_end_fails_p11_too() -> None:
    """The same verdict over a real socket, on the real clock (one declared case: the first fails)."""
    [result] = run_contract(_WaitsForEver, properties=["P11"], eras=["stateless"], max_examples=1, via="socket")
    assert result.status == "failed", (result.status, result.notes)
    assert "waits without end" in (result.counterexample or "")


def test_the_reference_bridge_with_its_own_default_timeout_holds_p11_undeclared() -> None:
    """`ReferenceBridgeAdapter(timeout_s=None)` declares no timeout, but its bridge then waits its own default of
    30 s a request, which the contract's default admits: P11 holds (what the bridge does, not what it declares)."""
    [result] = run_contract(
        lambda **kw: ReferenceBridgeAdapter(timeout_s=None, **kw),  # type: ignore[arg-type]
        properties=["P11"],
        eras=["handshake"],
        max_examples=2,
        clock="virtual",
    )
    assert result.status == "passed", (result.status, result.counterexample)
