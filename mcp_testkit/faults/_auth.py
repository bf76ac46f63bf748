"""The faults of a protected server's tokens (`faults.ExpireToken`): the access token a request carries stops being
accepted, so the client must refresh it or authorize again; only on a `TestMcpServer(auth=...)`.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_auth.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_testkit.faults._base import Fault

__all__ = ["ExpireToken"]


@dataclass(frozen=True)
class ExpireToken(Fault):
    """The access token of the request it hits expires: this request (which does not run) and every later one with
    that token get 401 `invalid_token`. "Expires after N calls": inject it on the (N+1)th call, `nth=N + 1`.

    Only on a server with `auth=`, and a request that carried a token the authorization server issued; elsewhere it
    is misplaced (`server.check()` says so) and the request is served as if it had not hit.
    """
