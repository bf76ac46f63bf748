"""P9 (for adapters declaring "tool_cache"): a cache hit never serves one credential's tools to another, nor
hides a catalogue change past its TTL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit.contract._properties._example_steps import TOKEN_ONE, TOKEN_TWO
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


_CREDENTIALS = {"one": TOKEN_ONE, "two": TOKEN_TWO, "none": None}
_AGES = (0.0, 0.5, 0.9, 1.5)
"""How far the cache's clock moves in one step, in TTLs."""


def _cases(facts: BridgeFacts) -> list[Inputs]:
    def steps(*items: Any) -> Inputs:
        return {"steps": list(items)}

    connect = {name: ("connect", name) for name in _CREDENTIALS}
    change, advance = ("change", 0.0), {age: ("advance", age) for age in _AGES}
    return [
        steps(connect["one"], connect["one"]),
        steps(connect["one"], change, connect["two"]),
        steps(connect["one"], change, connect["none"]),
        steps(connect["none"], change, connect["one"]),
        steps(connect["one"], change, advance[1.5], connect["one"]),
        steps(connect["one"], change, advance[0.5], connect["one"], advance[0.9], connect["one"]),
        steps(connect["one"], connect["two"], change, advance[0.9], connect["two"], connect["one"]),
        steps(connect["two"], change, connect["one"], change, connect["two"], connect["one"]),
        steps(connect["one"], advance[0.9], connect["one"], change, advance[0.5], connect["one"]),
    ]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    step = (
        st.tuples(st.just("connect"), st.sampled_from(list(_CREDENTIALS)))
        | st.tuples(st.just("change"), st.just(0.0))
        | st.tuples(st.just("advance"), st.sampled_from(_AGES))
    )
    return {"steps": st.lists(step, min_size=1, max_size=7)}


def _labels(inputs: Inputs) -> list[str]:
    return sorted({f"{kind} {value}" if kind != "change" else "catalogue change" for kind, value in inputs["steps"]})


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    server = h.server
    ttl = facts.cache_ttl_s
    assert ttl is not None
    cached: Any = adapter
    cached.use_tool_cache()
    # Listings of 2026-07-28 say how long they may be kept (ttlMs): longer than the bridge's TTL, which P9 judges
    # (P14 judges a shorter one).
    server.cache_ttl_s = ttl * 2
    catalogue = ["a", "b"]
    for name in catalogue:
        server.tool(name, returns="ok")
    now, changes = 0.0, 0
    listed: list[tuple[str, float, list[str]]] = []
    """Each real listing: the credential it was read with, when, and what it held."""
    for kind, value in inputs["steps"]:
        if kind == "change":
            changes += 1
            server.tool(f"c{changes}", returns="ok")
            catalogue = [*catalogue, f"c{changes}"]
            continue
        if kind == "advance":
            cached.advance_cache_clock(value * ttl)
            now += value * ttl
            continue
        token = _CREDENTIALS[value]
        mark = len(server.journal)
        outcome = await adapter.connect(h.url, {"Authorization": token} if token else {})
        if outcome.kind != "ok":
            raise h.fail("the bridge could not connect to a healthy server", outcome=outcome)
        loaded = sorted(await adapter.list_tools())
        facts_ = {"credential": value, "loaded": loaded, "catalogue": catalogue, "clock": f"{now:g} s (TTL {ttl:g} s)"}
        if any(r.rpc_method == "tools/list" for r in server.journal.records[mark:]):
            # What the server answered, not what the adapter reports: a bridge that lists again but keeps
            # offering its old listing is judged by what it offers after the listing it just read.
            listed.append((value, now, sorted(catalogue)))
            if loaded != sorted(catalogue):
                raise h.fail("the bridge listed the tools again but offers another listing than the one it read",
                             **facts_)
            continue
        if loaded == sorted(catalogue):
            continue
        if any(cred == value and names == loaded and now - at <= ttl for cred, at, names in listed):
            continue  # its own listing, within the TTL: a hit may serve it
        others = [cred for cred, at, names in listed if cred != value and names == loaded and now - at <= ttl]
        if others:
            raise h.fail(f"a cache hit served credential {others[-1]!r}'s listing to credential {value!r}", **facts_)
        ages = [now - at for cred, at, names in listed if cred == value and names == loaded]
        if ages:
            raise h.fail(
                f"a cache hit hid a catalogue change: it served a listing {min(ages):g} s old, "
                f"past the TTL of {ttl:g} s",
                **facts_,
            )
        raise h.fail("the bridge loaded a listing the server never gave this credential", **facts_)


PROPERTY = Property(
    "P9",
    "A cache hit never serves one credential's tools to another, nor hides a change past its TTL",
    "tool_cache_is_keyed_and_expires",
    "connects with two credentials and none, catalogue changes, the cache's clock moved in fractions and multiples "
    "of its TTL",
    _strategies,
    _cases,
    _labels,
    _check,
    requires="tool_cache",
    guarantee=(
        "A cache hit never serves one credential's tools to another, nor hides a catalogue change past its TTL. "
        'Applies to adapters declaring `"tool_cache"`.'
    ),
    breaks="a cache key without the credential; entries that never expire",
)
