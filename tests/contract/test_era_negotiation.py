"""P18, era negotiation: a bridge that sends a 2026-07-28 request on a session it opened with `initialize` fails it
for mixing the eras, in-process and over a socket; an adapter that can be told its era is made without it for P18
(it negotiates by itself), and told it again for the next property."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import httpx2
import pytest

from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter
from mcp_testkit.contract import run_contract

_ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
_INFO = {"name": "mixing", "version": "1"}


class _Mixing(ReferenceBridgeAdapter):
    """The reference bridge to connect, then each call as a bridge that mixes the eras makes it: a session opened
    with `initialize`, and the call sent in 2026-07-28's shape carrying that session's id."""

    name: ClassVar[str] = "mixing"

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        from mcp_testkit._wire.eras import STATELESS_VERSION, stateless_headers, stateless_params

        initialize = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": _INFO}
        params = stateless_params({"name": tool, "arguments": dict(arguments)}, version=STATELESS_VERSION,
                                  client_info=_INFO)  # fmt: skip
        async with httpx2.AsyncClient(transport=self._transport, timeout=5.0) as http:
            opened = await http.post(
                self._url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize},
                headers=_ACCEPT,
            )  # fmt: skip
            headers = {**_ACCEPT, **stateless_headers("tools/call", params, STATELESS_VERSION)}
            headers["mcp-session-id"] = opened.headers.get("mcp-session-id", "")
            answer = await http.post(
                self._url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}, headers=headers
            )
        return Outcome.ok(answer.text) if answer.status_code == 200 else Outcome.connection_error(
            RuntimeError(f"HTTP {answer.status_code}")
        )  # fmt: skip


@pytest.mark.parametrize("via", ["asgi", "socket"])
def test_a_stateless_request_on_an_initialized_session_fails_p18(via: str) -> None:
    (result,) = run_contract(_Mixing, properties=["P18"], eras=["stateless"], via=via, max_examples=20)
    assert result.status == "failed", result.counterexample
    assert "was a 2026-07-28 request on a session the bridge opened with initialize: it mixed the eras" in str(
        result.counterexample
    )


class _Told(ReferenceBridgeAdapter):
    """Records the era each adapter was made to speak."""

    made: ClassVar[list[str]] = []

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        _Told.made.append(self.era)


def test_p18_makes_its_adapters_negotiate_and_the_next_property_tells_them_the_era_again() -> None:
    """P18's examples get adapters made without `era=` (the reference bridge in auto mode); P2, run after it on the
    same harness, gets adapters told the stateless era again."""
    made: dict[str, list[str]] = {}

    def ended(result: Any) -> None:
        made[result.property_id] = list(_Told.made)
        _Told.made.clear()

    _Told.made.clear()
    results = run_contract(_Told, properties=["P18", "P2"], eras=["stateless"], max_examples=10, progress=ended)
    assert [r.status for r in results] == ["passed", "passed"]
    assert made["P18"].count("auto") >= 10, made  # one per example at least
    assert set(made["P2"]) == {"stateless"}, made
