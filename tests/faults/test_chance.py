"""Rules that fire by chance: `inject(..., probability=, seed=)` hits the same requests again with the same seed,
and the journal says which (a soak run replayed exactly); scenario files and the admin API take the same keys."""

from __future__ import annotations

import anyio
import anyio.to_thread
import httpx2
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.scenario import add_rules
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import LIMIT_S, Serve, Wire, call, messages, socket_client, tools

pytestmark = pytest.mark.anyio

SOAK = 200


async def _soak(server: TestMcpServer, *, probability: float, seed: int | None, **rule: object) -> list[int]:
    """200 calls of 't' on one session; the journal numbers of the calls a fault hit."""
    server.inject(faults.ErrorResult("soaked"), tool="t", probability=probability, seed=seed, **rule)  # type: ignore[arg-type]
    errors = 0
    async with socket_client(server) as client:
        wire = Wire(client)
        await wire.initialize()
        for number in range(SOAK):
            answer = messages(await wire.post(call("t", request_id=number + 1)))[-1]
            errors += bool(answer["result"].get("isError"))
    hits = [record.seq for record in server.calls("t") if record.fault is not None]
    assert len(hits) == errors  # the journal's hits are the calls the client saw fail
    return hits


async def test_a_seeded_soak_hits_the_same_requests_again(serve: Serve) -> None:
    """Two 200-call soaks with probability 0.1 and seed 7 hit the identical requests; seed 8 hits others."""
    first = await _soak(tools(serve(), "t"), probability=0.1, seed=7)
    again = await _soak(tools(serve(), "t"), probability=0.1, seed=7)
    other = await _soak(tools(serve(), "t"), probability=0.1, seed=8)
    assert first == again
    assert first != other
    assert 5 <= len(first) <= 40  # about 20 of 200: the rule fired by chance, not on every call nor never


async def test_times_caps_the_hits_and_nth_delays_the_first(serve: Serve) -> None:
    """`times` caps a chancy rule's hits; `nth` lets no request before the nth matching one be hit."""
    server = tools(serve(), "t")
    hits = await _soak(server, probability=0.5, seed=1, times=3, nth=50)
    calls = [record.seq for record in server.calls("t")]
    assert len(hits) == 3
    assert min(hits) >= calls[49]


def test_a_rule_without_a_seed_shows_the_seed_it_drew() -> None:
    """inject(probability=...) without a seed draws one, kept in the rule (to replay the run), and every time."""
    server = TestMcpServer()
    rule = server.inject(faults.Delay(0.1), probability=0.25)
    assert isinstance(rule.seed, int)
    assert (rule.times, rule.probability) == (None, 0.25)
    assert faults.Rule.from_json(rule.to_json()) == rule


@pytest.mark.parametrize("probability", [0, -0.1, 1.5, "0.5", True])
def test_a_probability_outside_0_to_1_is_refused(probability: object) -> None:
    """A probability that is not a number in (0, 1] is a ValueError naming it."""
    with pytest.raises(ValueError, match="probability must be a number above 0 and at most 1"):
        TestMcpServer().inject(faults.Delay(0.1), probability=probability)  # type: ignore[arg-type]


def test_a_rule_of_probability_one_is_written_as_before() -> None:
    """A rule that always fires keeps its JSON form without the chance keys."""
    assert "probability" not in faults.Rule(faults.Drop()).to_json()


def test_a_scenario_rule_takes_probability_and_seed() -> None:
    """A scenario's rule with probability and seed loads to the same rule as inject builds."""
    server = TestMcpServer()
    (rule,) = add_rules(server, {"fault": {"type": "Drop"}, "probability": 0.3, "seed": 5})
    assert rule == faults.Rule(faults.Drop(), probability=0.3, seed=5, times=None)


async def test_the_admin_api_takes_probability_and_seed() -> None:
    """POST /_testkit/faults with probability and seed adds the chancy rule, and lists it back with them."""
    server = TestMcpServer("admin")
    server.asgi_app = AdminApp(server, "admin-token")  # type: ignore[assignment]
    with anyio.fail_after(LIMIT_S):
        await anyio.to_thread.run_sync(server.start)
    try:
        headers = {"authorization": "Bearer admin-token"}
        async with httpx2.AsyncClient(base_url=server.base_url, headers=headers) as admin:
            rule = {"fault": {"type": "ErrorResult"}, "tool": "t", "probability": 0.2, "seed": 11}
            added = await admin.post(f"{PREFIX}/faults", json=rule)
            listed = await admin.get(f"{PREFIX}/faults")
    finally:
        with anyio.fail_after(LIMIT_S):
            await anyio.to_thread.run_sync(server.stop)
    assert added.status_code == 201, added.text
    (shown,) = listed.json()["rules"]
    assert (shown["probability"], shown["seed"], shown["times"]) == (0.2, 11, None)
