"""The faults of sessions (`faults.LoseSession`, `Restart`, `ExpireSession`): the server forgets a session, so the
client must open a new one; handshake era only, as a stateless request has no session.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_sessions.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.faults._base import Fault

__all__ = ["ExpireSession", "LoseSession", "Restart"]


@dataclass(frozen=True)
class _SessionFault(Fault):
    eras: ClassVar[tuple[str, ...]] = (HANDSHAKE,)


@dataclass(frozen=True)
class LoseSession(_SessionFault):
    """Forget the request's session: this request and every later one on it get 404.

    Handshake era only: a stateless (2026-07-28) request has no session to lose.
    """


@dataclass(frozen=True)
class Restart(_SessionFault):
    """Forget every session, as a restarted server does; unknown sessions then get this status.

    404 is the spec's answer; 400 is what python-sdk servers up to 1.25 answered. Handshake era only.
    """

    unknown_session_status: int = 404

    def __post_init__(self) -> None:
        if self.unknown_session_status not in (400, 404):
            raise ValueError(f"Restart unknown_session_status must be 404 or 400, not {self.unknown_session_status!r}")


@dataclass(frozen=True)
class ExpireSession(_SessionFault):
    """Let the request's session serve `after_requests` more requests, then forget it (404); handshake era only."""

    after_requests: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.after_requests, int) or self.after_requests < 0:
            raise ValueError(f"ExpireSession after_requests must be an int >= 0, not {self.after_requests!r}")
