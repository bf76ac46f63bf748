"""The refusal of a request to a protected endpoint for its bearer token: 401 or 403 with an RFC 6750 challenge
naming the RFC 9728 metadata and the scopes needed, and an OAuth error body; what the transport's token check
(`_transport/_protected.py`) and the token faults (`_effects/_auth.py`) answer alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.auth import AuthServer


__all__ = ["refuse_token"]


async def refuse_token(
    out: Any,
    auth: AuthServer,
    base: str,
    path: str,
    status: int,
    error: str,
    problem: str,
    scopes: Sequence[str],
    *,
    sent: bool,
) -> None:
    """Answer `status` with `error` and `problem`; the challenge names what `auth`'s settings say (the resource
    metadata, the scopes) and carries no error when no token was `sent`."""
    challenge = auth.challenge(base, path, status, tuple(scopes))
    fields = ({"error": error, "error_description": problem} if sent else {}) | challenge
    value = " ".join(["Bearer", ", ".join(f'{name}="{text}"' for name, text in fields.items())]).rstrip()
    out.record.error = problem
    await out.json(status, {"error": error, "error_description": problem}, [(b"www-authenticate", value.encode())])
