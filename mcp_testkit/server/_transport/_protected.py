"""The MCP endpoint as an OAuth protected resource (`TestMcpServer(auth=...)`): the bearer token of each request is
checked against the authorization server (issued by it, not expired or revoked, issued for this resource as RFC 8707
says, holding the endpoint's scopes and the called tool's), else 401 with the RFC 9728 challenge
(`resource_metadata`, `scope`) or 403 `insufficient_scope` naming the scopes the call needs.

Which token a request carried goes to `journal.tokens` by label; the token itself is taken out of the record's
headers here, so that no journal holds one, whatever it exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mcp_testkit._wire.asgi import origin_of
from mcp_testkit.server._framing._challenges import refuse_token
from mcp_testkit.server._framing._response import Response, header

if TYPE_CHECKING:
    from mcp_testkit._wire.asgi import Scope
    from mcp_testkit.auth import Grant
    from mcp_testkit.server._state import ServerState

__all__ = ["refuse_unauthorized"]


def _canonical(uri: str | None) -> str | None:
    """A resource URI compared as RFC 8707 wants: scheme and host case-insensitive, no trailing slash."""
    if uri is None:
        return None
    parts = urlsplit(uri)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


async def refuse_unauthorized(state: ServerState, scope: Scope, out: Response) -> bool:
    """Check the request's bearer token (its record journaled already); True when it was refused and answered."""
    record = out.record
    headers = out.headers
    token = None
    sent = header(headers, "authorization")
    if sent is not None:
        scheme, _, value = sent.partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            token = value.strip()
        dict.__setitem__(headers, "authorization", f"{scheme} ***")  # no journal ever holds a token
    grant = None if token is None else state.auth.grant_for(token)
    state.journal.tokens[record.seq] = None if token is None else grant.label if grant is not None else "unknown token"
    base = origin_of(scope)
    resource = base + state.path
    tool = state.tools.get(record.tool) if record.tool is not None and record.rpc_method == "tools/call" else None
    needed = tuple(dict.fromkeys((*state.auth_scopes, *(tool.scopes if tool is not None else ()))))
    problem = _invalid(token, grant, resource)
    if problem is not None:
        status, error, scopes = 401, "invalid_token", state.auth_scopes
    else:
        assert grant is not None
        lacking = [name for name in needed if name not in grant.scopes]
        if not lacking:
            return False
        status, error, scopes = 403, "insufficient_scope", needed
        whose = f"tool {tool.name!r}" if tool is not None and set(lacking) & set(tool.scopes) else "this server"
        problem = f"{grant.label} lacks the scope {' '.join(lacking)!r} that {whose} needs"
    await refuse_token(out, state.auth, base, state.path, status, error, problem, scopes, sent=token is not None)
    return True


def _invalid(token: str | None, grant: Grant | None, resource: str) -> str | None:
    """Why the token is refused with 401, or None when it is good for this resource."""
    if token is None:
        return "no access token: send Authorization: Bearer and a token from the authorization server"
    if grant is None:
        return "the access token is not one the authorization server issued"
    if grant.revoked:
        return f"{grant.label} was revoked"
    if grant.expired:
        return f"{grant.label} expired"
    if _canonical(grant.resource) != _canonical(resource):
        issued_for = grant.resource or "no resource"
        return f"{grant.label} was issued for {issued_for}, not for {resource} (RFC 8707)"
    return None
