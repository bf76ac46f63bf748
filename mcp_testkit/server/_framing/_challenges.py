"""The refusal of a request to a protected endpoint for its bearer token: 401 or 403 with an RFC 6750 challenge
naming the RFC 9728 metadata and the scopes needed, and an OAuth error body; what the transport's token check
(`_transport/_protected.py`) and the token faults (`_effects/_auth.py`) answer alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp_testkit.auth import PRM_PATH

__all__ = ["refuse_token"]


async def refuse_token(
    out: Any, base: str, path: str, status: int, error: str, problem: str, scopes: Sequence[str], *, sent: bool
) -> None:
    """Answer `status` with `error` and `problem`; the challenge carries no error when no token was `sent`."""
    challenge = {"resource_metadata": base + PRM_PATH + path}
    if scopes:
        challenge["scope"] = " ".join(scopes)
    fields = ({"error": error, "error_description": problem} if sent else {}) | challenge
    value = "Bearer " + ", ".join(f'{name}="{text}"' for name, text in fields.items())
    out.record.error = problem
    await out.json(status, {"error": error, "error_description": problem}, [(b"www-authenticate", value.encode())])
