"""The faults of a protected server's tokens: the access token a request carries stops being accepted
(`faults.ExpireToken`, `faults.RevokeToken`), so the client must refresh it or authorize again, or it lacks a scope
the call now needs (`faults.InsufficientScope`, a step-up); only on a `TestMcpServer(auth=...)`.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_auth.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_testkit.faults._base import Fault

__all__ = ["ExpireToken", "InsufficientScope", "RevokeToken"]


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
