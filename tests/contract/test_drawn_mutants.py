"""Mutants that only the drawn examples find: each breaks a rule in a corner no declared case reaches (a pager bug
from the third tool read on, a resend after the second fault in a row, a rendering that drops a fourth block), so
with the declared cases alone the property holds, and with them switched off (`declared_cases=False`) 100 seeded,
derandomized draws fail it. They show that the draws add something to the declared cases."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest
from mcp import types

from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter
from mcp_testkit.bridge import MCPConnectionError, _catalogue, _link
from mcp_testkit.contract import PROPERTIES, BridgeFacts, run_contract


def _verdicts(factory: Any, property_id: str) -> tuple[Any, Any]:
    """The verdict with the declared cases only (no draws), and with 100 drawn examples only."""
    declared = len(PROPERTIES[property_id].cases(BridgeFacts.of(factory(), "handshake")))
    [alone] = run_contract(factory, properties=[property_id], eras=["handshake"], max_examples=declared)
    [drawn] = run_contract(factory, properties=[property_id], eras=["handshake"], declared_cases=False)
    return alone, drawn


class _PagesSoFar:
    """A session that notes the tools of every page it was given."""

    def __init__(self, session: Any, seen: list[str]) -> None:
        self._session, self._seen = session, seen

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def list_tools(self, cursor: str | None) -> Any:
        page = await self._session.list_tools(cursor)
        self._seen.extend(tool.name for tool in page.tools)
        return page


def test_a_pager_keeping_three_tools_read_before_a_failure_is_found_by_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pager that fails a broken listing whole until it has read three tools, and keeps them from then on: the
    declared cases (three tools, one per page) never get there; draws of larger pages and catalogues do."""
    read = _catalogue.read_catalogue

    async def keeping(session: Any, config: Any) -> list[Any]:
        seen: list[str] = []
        try:
            return await read(_PagesSoFar(session, seen), config)
        except MCPConnectionError:
            if len(seen) < 3:
                raise
            return [types.Tool(name=name, input_schema={"type": "object"}) for name in seen]

    monkeypatch.setattr(_link, "read_catalogue", keeping)
    alone, drawn = _verdicts(ReferenceBridgeAdapter, "P1")
    assert alone.status == "passed", alone.counterexample
    assert drawn.status == "failed", drawn.notes
    assert "the bridge loaded a wrong tool set" in (drawn.counterexample or "")
    assert drawn.declared == 0


class _ResendsAfterTwoFaultsInARow(ReferenceBridgeAdapter):
    """Resends a call whose answer was lost, but only when the call before it failed too (any failure): the second
    fault in a row, which no declared case of P2 (one fault each) places."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._faults_in_a_row = 0

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await super().call(tool, arguments)
        self._faults_in_a_row = self._faults_in_a_row + 1 if outcome.kind != "ok" else 0
        if outcome.kind in ("outcome_unknown", "connection_error") and self._faults_in_a_row >= 2:
            return await super().call(tool, arguments)  # the second failure in a row: it suspects the link
        return outcome


def test_a_resend_after_the_second_fault_in_a_row_is_found_by_draws() -> None:
    """A bridge that resends a write after its second consecutive fault holds P2's declared cases (one fault each)
    and fails P2 on drawn schedules of faults on consecutive calls."""
    alone, drawn = _verdicts(_ResendsAfterTwoFaultsInARow, "P2")
    assert alone.status == "passed", alone.counterexample
    assert drawn.status == "failed", drawn.notes
    assert "a write ran 2 times" in (drawn.counterexample or "")


class _DropsTheFourthBlock(ReferenceBridgeAdapter):
    """Renders only the first three blocks of a result: the declared cases of P7 have at most three."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        outcome = await super().call(tool, arguments)
        if outcome.text is None or outcome.text.count("\n") < 3:
            return outcome
        return dataclasses.replace(outcome, text="\n".join(outcome.text.split("\n")[:3]))


def test_a_rendering_dropping_the_fourth_block_is_found_by_draws() -> None:
    """A bridge rendering only three blocks holds P7's declared cases and fails P7 on a drawn result of four."""
    alone, drawn = _verdicts(_DropsTheFourthBlock, "P7")
    assert alone.status == "passed", alone.counterexample
    assert drawn.status == "failed", drawn.notes
