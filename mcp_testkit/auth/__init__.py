"""The fake OAuth 2.1 authorization server (`AuthServer`) that `TestMcpServer(auth=...)` serves beside its MCP
endpoint, and `Browserless`, which consents through it for an OAuth client under test (docs/auth.md).

Inside, a module per concern: what it holds (`_store.py`: clients, codes, tokens by label), the discovery documents
and their paths (`_metadata.py`), the token endpoint's client authentication and grants (`_grants.py`), JWT access
tokens (`_jwt.py`), the HTTP endpoints as bare ASGI, writing the journal's auth log (`_endpoints.py`), the facade
(`_server.py`), and the browser played for a client (`Browserless`, in `mcp_testkit._wire.browserless`, which the
reference bridge's command line uses too).
"""

from __future__ import annotations

from mcp_testkit._wire.browserless import AuthorizationRefused, Browserless
from mcp_testkit.auth._endpoints import SECRET_PARAMETERS
from mcp_testkit.auth._metadata import PRM_PATH
from mcp_testkit.auth._server import AuthServer, IssuedToken
from mcp_testkit.auth._store import TOKEN_AUTH_METHODS, Grant, RegisteredClient

__all__ = [
    "PRM_PATH",
    "SECRET_PARAMETERS",
    "TOKEN_AUTH_METHODS",
    "AuthServer",
    "AuthorizationRefused",
    "Browserless",
    "Grant",
    "IssuedToken",
    "RegisteredClient",
]
