"""P15 (bridges with OAuth, capability "oauth"): a token refused mid-session leads to at most one refresh and at most
one new authorization, after which the refused call, which a 401 proves did not run, is sent once more with the new
token; where no new token can be had, the call is an auth error, never a loop.

The harness's server is protected for the example (`TestMcpServer.protect`, a fresh `AuthServer`), and the bridge is
given a browser played in-process (`Browserless`) through `use_oauth`. After a few calls, the token the call carries
is refused: it expired (`faults.ExpireToken`: a refresh gets a new one), its grant was revoked (`faults.RevokeToken`:
the refresh token is dead too, so the bridge must authorize again), or it expired and its refresh is rejected
(`faults.RejectRefresh`); or that and its authorization endpoint fails (`faults.AuthServerError`), so no token can be
had. Judged by what the
servers saw: the exchanges the authorization server logged while the call ran, and the token each MCP request
carried (`journal.tokens`); a write re-sent for a token's sake runs twice, which the ledger finds after close."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit.contract._properties._example_steps import calls_first, tool
from mcp_testkit.contract._properties._fault_sets import CALL_KINDS
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter, Outcome
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness
    from mcp_testkit.journal import AuthExchange

__all__ = ["PROPERTY"]

REFUSALS = ("expired", "revoked", "refresh rejected", "authorization fails")
"""How the token a call carries is refused, and what is left to get a new one: a refresh (expired), a new
authorization (revoked, refresh rejected), nothing (authorization fails: the refresh rejected, and the authorization
endpoint answering 503)."""
_RECOVERS = ("expired", "revoked", "refresh rejected")


def _cases(facts: BridgeFacts) -> list[Inputs]:
    return [
        {"refusal": refusal, "kind": kind, "calls_before": calls_before}
        for (refusal, kind), calls_before in zip(
            itertools.product(REFUSALS, CALL_KINDS), itertools.cycle((0, 1, 2)), strict=False
        )
    ]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {
        "refusal": st.sampled_from(REFUSALS),
        "kind": st.sampled_from(CALL_KINDS),
        "calls_before": st.integers(0, 2),
    }


def _labels(inputs: Inputs) -> list[str]:
    return [inputs["kind"], f"token {inputs['refusal']}"]


def _refuse(h: ContractHarness, refusal: str) -> None:
    """Script the refusal of the next call's token, and what the authorization server does about a new one."""
    server = h.server
    server.inject(faults.RevokeToken() if refusal == "revoked" else faults.ExpireToken(), tool="tool")
    if refusal in ("refresh rejected", "authorization fails"):
        server.inject(faults.RejectRefresh(), times=None)
    if refusal == "authorization fails":
        server.inject(faults.AuthServerError(503), method="oauth/authorize", times=None)


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    from mcp_testkit.auth import AuthServer, Browserless

    refusal, kind = inputs["refusal"], inputs["kind"]
    server = h.server
    server.protect(AuthServer())
    tool(server, "tool", kind)
    browser = Browserless(transport=h.client_transport)
    authorizing: Any = adapter  # an OAuthAdapter: the property requires "oauth"
    authorizing.use_oauth(browser.redirect_handler, browser.callback_handler)
    await h.connect(adapter)
    facts_: dict[str, Any] = {"refusal": refusal, "kind": kind}
    await calls_first(h, adapter, inputs["calls_before"], "before the token was refused", facts_)
    journal = server.journal
    mark, auth_mark = len(journal), len(journal.auth)
    _refuse(h, refusal)
    outcome = await adapter.call("tool", {})
    sent = [r for r in journal.records[mark:] if r.rpc_method == "tools/call" and r.tool == "tool"]
    tokens = journal.tokens
    facts_["outcome"] = outcome
    facts_["calls sent"] = ", ".join(f"#{r.seq} with {tokens.get(r.seq)} -> {r.status}" for r in sent) or "none"
    refused = next((r for r in sent if r.status == 401 and tokens.get(r.seq) is not None), None)
    if refused is None and refusal == "authorization fails" and not any(tokens.get(r.seq) for r in sent):
        # A bridge that authorizes for each call (a session per call) tried to before it sent the call, and could
        # not: no token to send it with, so it must be an auth error, after one try.
        _bounded(h, journal.auth[auth_mark:], "while the call was made", facts_)
        _no_new_token(h, outcome, facts_)
        return
    if refused is None:
        raise h.fail("the call met no 401: the bridge sent no request for it with its token", **facts_)
    # What the bridge asked its authorization server after the 401 (a bridge with a session per call authorizes
    # before it, too).
    exchanges = [e for e in journal.auth[auth_mark:] if e.at >= refused.at]
    _bounded(h, exchanges, "after the 401", facts_)
    label = tokens[refused.seq]
    again = [r for r in journal.records if r.seq > refused.seq and tokens.get(r.seq) == label]
    if again:
        listed = ", ".join(f"#{r.seq} {r.rpc_method or r.http_method}" for r in again)
        raise h.fail(f"after the 401 the bridge sent the refused token ({label}) again: {listed}", **facts_)
    resent = [r for r in sent if r.seq > refused.seq]
    if len(resent) > 1:
        raise h.fail(f"the refused call was sent {len(resent)} more times, not once", **facts_)
    if refusal in _RECOVERS:
        if not resent:
            got = "a new token was had" if any(e.issued for e in exchanges) else "no new token was had"
            raise h.fail(
                f"after the 401 the bridge did not send the refused call again ({got}): an expired or revoked token "
                "mid-session is the bridge's to replace, once, before it gives up",
                **facts_,
            )
        if outcome.kind != "ok":
            raise h.fail(f"the call sent again with a new token came to {outcome.kind}, not ok", **facts_)
    else:
        _no_new_token(h, outcome, facts_)


def _bounded(h: ContractHarness, exchanges: list[AuthExchange], when: str, facts_: dict[str, Any]) -> None:
    """At most one refresh and one authorization among `exchanges`, or the example fails."""
    refreshes = [e for e in exchanges if e.endpoint == "token" and e.grant_type == "refresh_token"]
    authorizations = [e for e in exchanges if e.endpoint == "authorize"]
    if len(refreshes) > 1 or len(authorizations) > 1:
        raise h.fail(
            f"{when} the bridge refreshed {len(refreshes)} times and authorized {len(authorizations)} times: a token "
            "refused mid-session is worth one refresh and one new authorization, not a loop",
            **facts_,
        )


def _no_new_token(h: ContractHarness, outcome: Outcome, facts_: dict[str, Any]) -> None:
    if outcome.kind != "auth_error":
        raise h.fail(
            f"with no new token to be had (its refresh rejected, the authorization endpoint failing) the call came to "
            f"{outcome.kind}, "
            "not auth_error",
            **facts_,
        )


PROPERTY = Property(
    "P15",
    "A token refused mid-session is replaced once and the call sent once more",
    "refresh_once",
    "reads, idempotent writes and writes whose token expired, was revoked, or expired with its refresh rejected; "
    "and with the authorization endpoint failing as well",
    _strategies,
    _cases,
    _labels,
    _check,
    requires="oauth",
    guarantee=(
        "A token refused mid-session (401) leads to at most one refresh and one new authorization, after which the "
        "refused call, which the 401 proves did not run, is sent once more with the new token; with no new token "
        "to be had it is an auth error, and the refused token is never sent again."
    ),
    breaks=(
        "giving up on an expired token without refreshing; refreshing or authorizing in a loop; re-sending the "
        "refused token; sending the call twice"
    ),
)
