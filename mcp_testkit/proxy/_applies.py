"""Which faults the proxy applies in front of a real server, and why it refuses the others (`inject` asks here).

A fault the proxy applies is either one of the server's own effects (`server/_effects/`) acting on the proxy's
turn, or one of the proxy's own where the effect needs state the upstream keeps (sessions, pages).
"""

from __future__ import annotations

from mcp_testkit import faults

__all__ = ["OWN", "REFUSED", "refusal"]

OWN: tuple[type[faults.Fault], ...] = (
    faults.LoseSession,
    faults.Restart,
    faults.ExpireSession,
    faults.BreakStream,
    faults.DuplicateTool,
    faults.EmptyCursor,
    faults.ListChanged,
)
"""Faults the proxy applies with effects of its own: the sessions and pages are the upstream's, not a fake's."""

REFUSED: dict[type[faults.Fault], str] = {
    faults.CatalogueChange: "the proxy cannot add or remove a real server's tools",
    faults.StuckCursor: "the proxy cannot make a real server's cursor lead back to its own page",
    faults.RepeatCursor: "the proxy cannot make a real server's cursor lead back to its own page",
    faults.EndlessPages: "the proxy cannot make a real server serve pages past its catalogue",
}
"""Faults that mean something only for a catalogue the fake owns, with the reason."""


def refusal(fault: faults.Fault) -> str | None:
    """Why the chaos proxy cannot apply `fault` in front of a real server (what to do instead), or None if it can."""
    name = type(fault).__name__
    if fault.stdio_only:
        why = (
            "it acts on a stdio server's own process and lines, and the proxy's clients speak Streamable HTTP to it; "
            "use TestMcpServer over stdio (mcp-testkit serve --stdio) for it"
        )
    elif isinstance(fault, faults.UnsupportedVersion) and fault.supported is None:
        why = (
            "the proxy cannot know which versions the upstream speaks: name them, "
            "UnsupportedVersion(supported=['2026-07-28'])"
        )
    else:
        why = next((reason for kind, reason in REFUSED.items() if isinstance(fault, kind)), "")
        if not why:
            return None
        why += "; script it on a TestMcpServer (or a cassette's replay) instead"
    return f"the chaos proxy cannot apply {name}: {why}"
