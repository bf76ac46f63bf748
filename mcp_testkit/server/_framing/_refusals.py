"""A request refused before it runs (an HTTP status and a JSON-RPC error, as `Response.refuse` sends it), and the
refusals of the stateless era (2026-07-28) that the era and its faults both send.

The era's (`_eras/_stateless.py`), but kept below it in the framing: the faults' effects (`_effects/_eras.py`),
which sit below the eras, build the same answers; and out of dispatch, which holds no HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import (
    HEADER_MISMATCH,
    MISSING_CAPABILITY,
    UNSUPPORTED_VERSION,
    spoken_versions,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mcp_testkit.server._state import ServerState

__all__ = ["LEGACY_REFUSAL", "Refusal", "mismatch", "missing_capability", "unsupported", "versions"]

LEGACY_REFUSAL = "Bad Request: Missing session ID"
"""What a handshake-era server answers a request without a session (the `mcp` SDK's words)."""


@dataclass(frozen=True)
class Refusal:
    """A request refused before it runs: the HTTP status, and the JSON-RPC error of the body."""

    status: int
    code: int | None
    """None: a bare status, no body."""
    message: str
    data: Any = None
    request_id: bool = True
    """Whether the error answers the request's id (False: `id` null, as a transport that never read it)."""


def versions(state: ServerState) -> list[str]:
    """Every protocol version the server speaks, newest first."""
    return spoken_versions(state.eras)


def unsupported(state: ServerState, requested: Any, supported: list[str] | None = None) -> Refusal:
    """-32022 with `data.supported` and `data.requested`, as the schema gives them."""
    offered = versions(state) if supported is None else supported
    asked = requested if isinstance(requested, str) else ""
    return Refusal(
        400,
        UNSUPPORTED_VERSION,
        f"Unsupported protocol version {asked!r}: this server speaks {', '.join(offered) or 'none'}",
        {"supported": offered, "requested": asked},
    )


def mismatch(message: str) -> Refusal:
    """400 and -32020 (HeaderMismatch)."""
    return Refusal(400, HEADER_MISMATCH, f"Header mismatch: {message}")


def missing_capability(capabilities: Sequence[str]) -> Refusal:
    """400 and -32021 naming the client capabilities the request needs."""
    return Refusal(
        400,
        MISSING_CAPABILITY,
        f"Missing required client capability: {', '.join(capabilities)}",
        {"requiredCapabilities": {name: {} for name in capabilities}},
    )
