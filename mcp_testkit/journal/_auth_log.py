"""What the fake authorization server and the protected MCP endpoint saw: the journal's log of auth exchanges, and
which access token each MCP request carried, both redacted at the source (no token, code, verifier or secret is
ever kept, even with `redact=False`).

An `AuthExchange` is one request to an authorization endpoint (metadata, authorize, token, register, revoke) or to
the protected-resource metadata of a `TestMcpServer(auth=...)`; tokens are named by labels (`token 1`,
`refresh 1`) in the order the authorization server issued them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["AuthExchange", "AuthLog", "TokenLog"]


@dataclass(frozen=True)
class AuthExchange:
    """One request to the authorization server or to the resource's metadata, and what it came to."""

    seq: int
    """Its number in the auth log, from 1."""
    at: float
    endpoint: str
    """'resource metadata', 'metadata', 'authorize', 'token', 'register' or 'revoke'."""
    http_method: str
    path: str
    status: int
    parameters: dict[str, Any] = field(default_factory=dict)
    """The query, form or JSON parameters sent, secret values as '***'."""
    client_id: str | None = None
    client_auth: str | None = None
    """How the client authenticated at the token or revocation endpoint: client_secret_basic, client_secret_post or
    none."""
    issued: tuple[str, ...] = ()
    """The labels of the tokens this exchange issued ('token 2', 'refresh 2')."""
    error: str | None = None
    """The OAuth error code and description, when it failed."""
    fault: str | None = None
    """The fault of the authorization server that hit it (`faults.RejectRefresh()`, ...), as its repr."""
    fired: Any = field(default=None, repr=False, compare=False)
    """That fault itself (a `faults.Fault`), for what counts the faults that fired (the contract does)."""

    @property
    def grant_type(self) -> str | None:
        """For the token endpoint: the grant asked for (authorization_code, refresh_token, client_credentials)."""
        value = self.parameters.get("grant_type")
        return value if isinstance(value, str) else None

    @property
    def scope(self) -> str | None:
        value = self.parameters.get("scope")
        return value if isinstance(value, str) else None

    @property
    def resource(self) -> str | None:
        """The RFC 8707 resource indicator sent, if any."""
        value = self.parameters.get("resource")
        return value if isinstance(value, str) else None

    def summary(self) -> str:
        """One line: seq, endpoint, HTTP method and path, grant, client, status, issued labels, error."""
        what = self.endpoint + (f" {self.grant_type}" if self.grant_type else "")
        who = f" client={self.client_id}" if self.client_id else ""
        if self.client_auth:
            who += f" ({self.client_auth})"
        line = f"auth#{self.seq} {self.http_method} {self.path} {what}{who} -> {self.status}"
        if self.issued:
            line += f" issued {', '.join(self.issued)}"
        if self.error:
            line += f" ({self.error})"
        if self.fault:
            line += f" fault={self.fault}"
        return line


class AuthLog(list[AuthExchange]):
    """Every auth exchange of a server, in arrival order."""

    def at_endpoint(self, endpoint: str, *, grant_type: str | None = None) -> list[AuthExchange]:
        """The exchanges with one endpoint ('token', 'authorize', ...), of one grant type if given."""
        return [e for e in list(self) if e.endpoint == endpoint and (grant_type is None or e.grant_type == grant_type)]

    def format(self) -> str:
        """One line per exchange."""
        return "\n".join(e.summary() for e in list(self)) or "(no auth exchanges)"


class TokenLog(dict[int, str | None]):
    """Which access token each MCP request carried, by the request's journal `seq`: its label ('token 1'),
    'unknown token' for a string the authorization server never issued, or None for a request without one."""

    def labels(self) -> list[str]:
        """The distinct labels sent, in the order they were first sent (None left out)."""
        seen: dict[str, None] = {}
        for _seq, label in sorted(self.items()):
            if label is not None:
                seen.setdefault(label, None)
        return list(seen)
