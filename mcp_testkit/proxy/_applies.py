"""Which faults the proxy applies in front of a real server, and why it refuses the others (`inject` asks here).

A fault the proxy applies is either one of the server's own effects (`server/_effects/`) acting on the proxy's
turn, or one of the proxy's own where the effect needs state the upstream keeps (sessions, pages).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_testkit import faults

__all__ = ["REFUSED", "WHEN", "refusal"]

REFUSED: dict[type[faults.Fault], str] = {
    faults.CatalogueChange: "the proxy cannot add or remove a real server's tools",
    faults.StuckCursor: "the proxy cannot make a real server's cursor lead back to its own page",
    faults.RepeatCursor: "the proxy cannot make a real server's cursor lead back to its own page",
    faults.EndlessPages: "the proxy cannot make a real server serve pages past its catalogue",
    faults.ExpireToken: "the proxy holds no authorization server: inject it on a TestMcpServer(auth=...)",
    faults.RevokeToken: "the proxy holds no authorization server: inject it on a TestMcpServer(auth=...)",
    **{
        kind: "the proxy holds no authorization server: inject it on a TestMcpServer(auth=...)"
        for kind in (
            faults.InsufficientScope,
            faults.RejectRefresh,
            faults.AuthServerError,
            faults.SlowAuthServer,
            faults.WrongIssuer,
        )
    },
}
"""Faults that mean something only for a catalogue the fake owns, with the reason."""


def _unnamed_versions(fault: Any) -> str | None:
    if fault.supported is not None:
        return None
    return (
        "the proxy cannot know which versions the upstream speaks: name them, "
        "UnsupportedVersion(supported=['2026-07-28'])"
    )


WHEN: dict[type[faults.Fault], Callable[[Any], str | None]] = {faults.UnsupportedVersion: _unnamed_versions}
"""Faults the proxy refuses only in some forms: the reason, or None when it applies the form given."""


def refusal(fault: faults.Fault) -> str | None:
    """Why the chaos proxy cannot apply `fault` in front of a real server (what to do instead), or None if it can."""
    name = type(fault).__name__
    kinds = type(fault).__mro__
    if fault.stdio_only:
        why = (
            "it acts on a stdio server's own process and lines, and the proxy's clients speak Streamable HTTP to it; "
            "use TestMcpServer over stdio (mcp-testkit serve --stdio) for it"
        )
    elif any(kind in WHEN for kind in kinds):
        found = next(WHEN[kind](fault) for kind in kinds if kind in WHEN)
        if found is None:
            return None
        why = found
    else:
        reason = next((REFUSED[kind] for kind in kinds if kind in REFUSED), None)
        if reason is None:
            return None
        why = reason + "; script it on a TestMcpServer (or a cassette's replay) instead"
    return f"the chaos proxy cannot apply {name}: {why}"
