"""The faults of the eras (`faults.DiscoverError`, and the stateless era's refusals `HeaderMismatch`,
`UnsupportedVersion`, `MissingCapability`, `EraDowngrade`): how a server answers the probe, or refuses a request of
2026-07-28.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_eras.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mcp_testkit._wire.eras import STATELESS
from mcp_testkit.faults._base import Fault, _status, _versions

__all__ = ["DiscoverError", "EraDowngrade", "HeaderMismatch", "MissingCapability", "UnsupportedVersion"]


@dataclass(frozen=True)
class DiscoverError(Fault):
    """Answer `server/discover` with this HTTP status and JSON-RPC error (no body when `code` is None).

    The default is what a handshake-era server answers the probe (400, -32600 "Missing session ID"):
    a client in auto mode falls back to `initialize`. Works in both eras.
    """

    status: int = 400
    code: int | None = -32600
    message: str = "Bad Request: Missing session ID"
    data: Any = None
    default_method: ClassVar[str] = "server/discover"

    def __post_init__(self) -> None:
        _status(self.status, "DiscoverError status")
        if self.code is not None and (not isinstance(self.code, int) or isinstance(self.code, bool)):
            raise ValueError(f"DiscoverError code must be an int or None (no body), not {self.code!r}")


@dataclass(frozen=True)
class _StatelessFault(Fault):
    eras: ClassVar[tuple[str, ...]] = (STATELESS,)


@dataclass(frozen=True)
class HeaderMismatch(_StatelessFault):
    """Refuse a stateless request with 400 and -32020 (HeaderMismatch), naming `header`; nothing runs."""

    header: str = "Mcp-Method"

    def __post_init__(self) -> None:
        if not isinstance(self.header, str) or not self.header:
            raise ValueError(f"HeaderMismatch header must be a header name, not {self.header!r}")


@dataclass(frozen=True)
class UnsupportedVersion(_StatelessFault):
    """Refuse a stateless request with 400 and -32022, offering `supported` (None: the server's versions)."""

    supported: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.supported is not None:
            object.__setattr__(self, "supported", _versions(self.supported, "UnsupportedVersion supported"))


@dataclass(frozen=True)
class MissingCapability(_StatelessFault):
    """Refuse a stateless request with 400 and -32021: it needs client capabilities it did not declare."""

    capabilities: tuple[str, ...] = ("elicitation",)
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if isinstance(self.capabilities, str) or not self.capabilities:
            raise ValueError(
                f"MissingCapability capabilities must be a non-empty list of names, not {self.capabilities!r}"
            )
        object.__setattr__(self, "capabilities", tuple(self.capabilities))


@dataclass(frozen=True)
class EraDowngrade(_StatelessFault):
    """Answer `server/discover`, then refuse stateless requests as a handshake-era server does (400, -32600).

    A half-upgraded deployment: the probe reaches a new node, the requests an old one. Hits every stateless
    request but `server/discover` until its rule is spent (every time by default); handshake requests are
    served, so a client that falls back to `initialize` recovers.
    """

    default_times: ClassVar[int | None] = None
    default_era: ClassVar[str | None] = STATELESS
    skipped_methods: ClassVar[frozenset[str]] = frozenset({"server/discover"})
