"""Access tokens as JWTs (RFC 9068's `at+jwt`), signed HS256 with a key only the fake holds: a bridge that reads a
token's claims (its expiry, audience, scopes) gets them; the protected endpoint still checks a token by looking it
up, as it checks an opaque one."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any

__all__ = ["access_jwt"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def access_jwt(
    key: bytes,
    *,
    issuer: str | None,
    client_id: str | None,
    resource: str | None,
    scopes: Sequence[str],
    issued_at: float,
    expires_at: float,
) -> str:
    """A signed access token whose claims say who it is for (`aud`: the resource), what (`scope`) and until when."""
    claims: dict[str, Any] = {
        "iat": int(issued_at),
        "exp": int(expires_at),
        "jti": secrets.token_urlsafe(12),
        "scope": " ".join(scopes),
    }
    for name, value in (("iss", issuer), ("aud", resource), ("sub", client_id), ("client_id", client_id)):
        if value is not None:
            claims[name] = value
    head = _b64(json.dumps({"alg": "HS256", "typ": "at+jwt"}, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    signature = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"
