"""The faults of a protected server's tokens: the access token a request carries stops being accepted
(`faults.ExpireToken`, `faults.RevokeToken`), so the client must refresh it or authorize again, or it lacks a scope
the call now needs (`faults.InsufficientScope`, a step-up); and the faults of its authorization server's endpoints
(`faults.RejectRefresh`, `faults.AuthServerError`, `faults.SlowAuthServer`, `faults.WrongIssuer`), which hit the
requests to those endpoints: a rule names them as `oauth/token`, `oauth/authorize`, `oauth/register`,
`oauth/revoke`, `oauth/metadata` or `oauth/resource-metadata`, and only a rule naming one hits it. Only on a
`TestMcpServer(auth=...)`.

`mcp_testkit.faults` re-exports them and is the module to import; what the token faults do lives in
`server/_effects/_auth.py`, what the endpoint faults do in `auth/_endpoints.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from mcp_testkit.faults._base import Fault

__all__ = [
    "AUTH_ENDPOINT_METHODS",
    "AuthServerError",
    "ExpireToken",
    "InsufficientScope",
    "RejectRefresh",
    "RevokeToken",
    "SlowAuthServer",
    "WrongIssuer",
]

AUTH_ENDPOINT_METHODS = {
    "token": "oauth/token",
    "authorize": "oauth/authorize",
    "register": "oauth/register",
    "revoke": "oauth/revoke",
    "metadata": "oauth/metadata",
    "resource metadata": "oauth/resource-metadata",
}
"""The method a rule names to hit the requests to each endpoint of a protected server's authorization server."""


@dataclass(frozen=True)
class ExpireToken(Fault):
    """The access token of the request it hits expires: this request (which does not run) and every later one with
    that token get 401 `invalid_token`. "Expires after N calls": inject it on the (N+1)th call, `nth=N + 1`.

    Only on a server with `auth=`, and a request that carried a token the authorization server issued; elsewhere it
    is misplaced (`server.check()` says so) and the request is served as if it had not hit.
    """


@dataclass(frozen=True)
class RevokeToken(Fault):
    """The grant of the request it hits is revoked at the authorization server: this request (which does not run) and
    every later one with its access token get 401 `invalid_token` (`token N was revoked`), and its refresh token no
    longer refreshes (`invalid_grant`): the client must authorize again.

    Only on a server with `auth=`, and a request that carried a token the authorization server issued; elsewhere it
    is misplaced (`server.check()` says so) and the request is served as if it had not hit.
    """


@dataclass(frozen=True)
class InsufficientScope(Fault):
    """A step-up: the request it hits is refused with 403 `insufficient_scope` (it does not run), its challenge's
    `scope` the union of the scopes the token holds and `scope` (space-separated names), as the spec's step-up flow
    has it. A client then authorizes again asking for that union and sends the call once more; the fault fires once
    (`times=` for more), so the call sent again is served.

    A token that already holds every scope named is left as it was: the fault fired on nothing and stays due
    (`server.check(unused_faults=True)` names it). Only on a server with `auth=` (elsewhere it is misplaced).
    """

    scope: str = "step-up"

    def __post_init__(self) -> None:
        if not isinstance(self.scope, str) or not self.scope.split():
            raise ValueError(f"InsufficientScope(scope=...) names one or more scopes, not {self.scope!r}")


@dataclass(frozen=True)
class RejectRefresh(Fault):
    """The refresh the token request it hits asks for is refused: 400 `invalid_grant`, and the refresh token no
    longer refreshes, so the client must authorize again (or say it cannot). It hits the token endpoint
    (`oauth/token`); a token request of another grant is served as if it had not hit, and the fault stays due.
    """

    default_method: ClassVar[str] = "oauth/token"


@dataclass(frozen=True)
class AuthServerError(Fault):
    """The authorization server's endpoint the request hits answers `status` (a 5xx: `temporarily_unavailable` or
    `server_error`; a 4xx: `invalid_request`) with an OAuth error body, and does nothing else. `oauth/token` unless
    the rule names another endpoint (`method="oauth/authorize"`, `"oauth/metadata"`, ...)."""

    default_method: ClassVar[str] = "oauth/token"
    status: int = 503

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or isinstance(self.status, bool) or not 400 <= self.status <= 599:
            raise ValueError(f"AuthServerError(status=...) is an HTTP error status, 400 to 599, not {self.status!r}")


@dataclass(frozen=True)
class SlowAuthServer(Fault):
    """The authorization server's endpoint the request hits answers after `delay_s` seconds (then as usual):
    a client must bound its wait. `oauth/token` unless the rule names another endpoint."""

    default_method: ClassVar[str] = "oauth/token"
    delay_s: float = 5.0

    def __post_init__(self) -> None:
        delay = self.delay_s
        if not isinstance(delay, (int, float)) or isinstance(delay, bool) or not math.isfinite(delay) or delay <= 0:
            raise ValueError(f"SlowAuthServer(delay_s=...) is a positive number of seconds, not {delay!r}")


@dataclass(frozen=True)
class WrongIssuer(Fault):
    """The authorization response the request hits names `iss` as its issuer (RFC 9207), or none when `iss` is
    None: a client that checks `iss` must refuse the code (a mix-up attack looks like this). It hits the
    authorization endpoint (`oauth/authorize`)."""

    default_method: ClassVar[str] = "oauth/authorize"
    iss: str | None = "https://attacker.example/oauth"
