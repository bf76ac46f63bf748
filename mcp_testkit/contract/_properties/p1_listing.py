"""P1: listing is all-or-nothing, within the page limit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._properties._fault_sets import LISTING_CASES, fault_label, legal_in, may_end_listing
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    three = ["a", "b", "c"]
    cases: list[Inputs] = [{"names": three, "page_size": 1, "listing_faults": []}]
    cases += [{"names": three, "page_size": 1, "listing_faults": [fault]} for fault in LISTING_CASES]
    if facts.page_limit is not None:
        # Exactly as many pages as the limit: a whole listing the bridge must load.
        cases.append({"names": [f"t{i}" for i in range(facts.page_limit)], "page_size": 1, "listing_faults": []})
    return cases


# Valid names that are easy to get wrong: dots, dashes, underscores, digits first, case, the longest allowed.
_NAMES = ("t0", "a.b", "x-y", "_z", "9n", "T", "t", "A.b-c_d", "get_user.v2", "n" * 128)

# Every detectable listing fault on pages 1-4 but EndlessPages, which has no parameter: its declared case
# says all it can, and drawn again it would cost a whole page limit per example.
_DRAWN: tuple[faults.Fault, ...] = (
    *(faults.RepeatCursor(page) for page in (2, 3, 4)),
    *(kind(page) for kind in (faults.StuckCursor, faults.EmptyCursor, faults.DuplicateTool) for page in (1, 2, 3, 4)),
    *(kind(page) for kind in (faults.PageError, faults.MalformedPage) for page in (1, 2, 3, 4)),
    *(faults.InvalidCursor(page) for page in (2, 3, 4)),
)


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    # Drawn from fixed values rather than built field by field: P1 is about the walk, and its examples must be cheap.
    return {
        "names": st.integers(0, len(_NAMES)).map(lambda count: list(_NAMES[:count])),
        "page_size": st.integers(1, 4),
        "listing_faults": st.lists(st.sampled_from(_DRAWN), max_size=2),
    }


def _labels(inputs: Inputs) -> list[str]:
    return [fault_label(f) for f in inputs["listing_faults"]] or ["no fault"]


def _changes(fault: faults.Fault) -> bool:
    """Whether `fault` changes the catalogue while it is listed (its `add` and `remove`)."""
    return hasattr(fault, "add") and hasattr(fault, "remove")


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    names, page_size = inputs["names"], inputs["page_size"]
    server = h.server
    server.page_size = page_size
    for name in names:
        server.tool(name, returns="ok")
    for fault in inputs["listing_faults"]:
        server.inject(fault)
    outcome = await adapter.connect(h.url, {})
    # Asked after a failed connect too: what the bridge would offer its application then (nothing, for all-or-nothing).
    loaded = await adapter.list_tools()
    pages = len(server.journal.requests("tools/list"))
    shown = names if len(names) <= 12 else [*names[:12], f"... {len(names) - 12} more"]
    facts_ = {"catalogue": shown, "page_size": page_size, "outcome": outcome, "loaded": len(loaded)}
    if facts.page_limit is not None and pages > facts.page_limit:
        raise h.fail(f"the bridge read {pages} pages, beyond its limit of {facts.page_limit}", **facts_)
    served = list(server.tools)  # the generated names, and a recorded catalogue's on a replay
    # Where "" may be read as the end (the handshake era), the pages up to the one that sent it are a whole catalogue.
    ends = [served[: fault.page * page_size] for fault in h.fired() if may_end_listing(facts.era, fault)]
    # A catalogue that changed between pages: the one before the change is whole too (a bridge that read it all).
    before = [
        [*(n for n in served if n not in fault.add), *fault.remove] for fault in h.fired() if _changes(fault)
    ]
    if outcome.kind == "ok" and all(sorted(loaded) != sorted(whole) for whole in [served, *ends, *before]):
        missing = sorted(set(served) - set(loaded))
        extra = sorted({n for n in loaded if loaded.count(n) > 1 or n not in served})
        raise h.fail(f"the bridge loaded a wrong tool set (missing {missing}, extra {extra})", **facts_)
    # A server's own catalogue (a replay's) may take the listing past the page limit: failing it whole is right.
    if outcome.kind != "ok" and loaded:
        offered = sorted(set(loaded)) if len(set(loaded)) <= 12 else [*sorted(set(loaded))[:12], "..."]
        raise h.fail(
            f"after a listing that failed the bridge still offers {len(loaded)} tool{'s' * (len(loaded) != 1)} "
            f"{offered}: a partial catalogue",
            **facts_,
        )
    fits = facts.page_limit is None or -(-max(len(served), 1) // page_size) <= facts.page_limit
    fired = h.fired()
    legal = [fault for fault in fired if legal_in(facts.era, fault)]
    # One "" cursor is a page like any other where it is legal; a second repeats the cursor "", which a bridge may
    # refuse as it refuses any repeated cursor (a loop): then the listing failed for a fault after all.
    if outcome.kind != "ok" and fits and len(legal) == len(fired) and len(legal) <= 1:
        why = " (an empty-string cursor is a legal page in the stateless era)" if fired else ""
        raise h.fail(f"the listing failed although no fault fired{why}", **facts_)


PROPERTY = Property(
    "P1",
    "Listing is all-or-nothing, within the page limit",
    "listing_is_all_or_nothing",
    "every listing fault class (a slow page, a change notice and a catalogue changed between pages among them); a "
    "listing of exactly the page limit",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee=(
        "Listing is all-or-nothing, within the page limit: the bridge loads exactly the server's catalogue, or "
        "fails and offers no tool at all; never a subset, never a duplicate; it reads at most `page_limit` pages."
    ),
    breaks=(
        "loading the pages read before an error page (or a timed-out slow page); reporting the failed listing but "
        "keeping the pages read before it usable; keeping a tool listed twice; "
        "following a repeated or stuck cursor; loading a mix of the catalogues before and after a change between "
        "pages; reading one page past the limit; in the stateless era, taking an empty `nextCursor` for the end "
        'or refusing it (there `""` is a legal cursor, and `EmptyCursor` a page like any other; in the handshake '
        'era either reading is accepted: the pages up to `""` as the whole catalogue, or a failed listing)'
    ),
)
