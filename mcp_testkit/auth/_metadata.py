"""The discovery documents: RFC 8414 authorization-server metadata (served at its OpenID Connect discovery paths
too) and RFC 9728 protected-resource metadata, and the paths each is served at."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcp_testkit.auth._store import TOKEN_AUTH_METHODS

__all__ = ["PRM_PATH", "AuthPaths", "authorization_server_metadata", "protected_resource_metadata"]

PRM_PATH = "/.well-known/oauth-protected-resource"
"""RFC 9728's well-known path; a resource with a path is also served at this path followed by its own."""


@dataclass(frozen=True)
class AuthPaths:
    """Where an authorization server with the issuer path `issuer_path` ('' for a root issuer) answers."""

    issuer_path: str

    @property
    def metadata(self) -> tuple[str, ...]:
        """RFC 8414 path insertion, OpenID discovery inserted and appended (a root issuer: the two root paths)."""
        path = self.issuer_path
        return (
            f"/.well-known/oauth-authorization-server{path}",
            f"/.well-known/openid-configuration{path}",
            *((f"{path}/.well-known/openid-configuration",) if path else ()),
        )

    def endpoint(self, name: str) -> str:
        return f"{self.issuer_path}/{name}"

    def endpoint_of(self, path: str) -> str | None:
        """Which endpoint `path` is ('metadata', 'authorize', 'token', 'register', 'revoke'), or None."""
        if path in self.metadata:
            return "metadata"
        for name in ("authorize", "token", "register", "revoke"):
            if path == self.endpoint(name):
                return name
        return None


def authorization_server_metadata(
    base: str, paths: AuthPaths, scopes: Sequence[str] | None, *, registration: bool, metadata_documents: bool
) -> dict[str, Any]:
    """The RFC 8414 document of the authorization server reached at `base` (scheme and authority)."""
    document: dict[str, Any] = {
        "issuer": base + paths.issuer_path,
        "authorization_endpoint": base + paths.endpoint("authorize"),
        "token_endpoint": base + paths.endpoint("token"),
        "revocation_endpoint": base + paths.endpoint("revoke"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": list(TOKEN_AUTH_METHODS),
        "revocation_endpoint_auth_methods_supported": list(TOKEN_AUTH_METHODS),
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": True,
        "client_id_metadata_document_supported": metadata_documents,
        # OpenID Connect discovery asks for these two as well; the fake issues no ID tokens.
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
    }
    if registration:
        document["registration_endpoint"] = base + paths.endpoint("register")
    if scopes is not None:
        document["scopes_supported"] = list(scopes)
    return document


def protected_resource_metadata(resource: str, issuer: str, scopes: Sequence[str]) -> dict[str, Any]:
    """The RFC 9728 document of the MCP endpoint `resource`, protected by the authorization server `issuer`."""
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
    }
    if scopes:
        document["scopes_supported"] = list(scopes)
    return document
