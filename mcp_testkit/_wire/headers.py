"""Request headers as the journal and the cassettes keep them, and the one redaction policy they share."""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Mapping
from typing import Any

__all__ = ["REDACTED", "Headers", "is_secret_header", "redacted"]

_SECRET_NAMES = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token", "dpop"}
)
_SECRET_PARTS = ("auth", "token", "key", "secret", "cookie", "session", "passw", "credential", "signature")
_NEVER_SECRET = frozenset({"mcp-session-id", "www-authenticate"})
"""Mcp-Session-Id, which tests need to see, and the challenge a server answers 401 with (it names what to send)."""
REDACTED = "***"


@functools.lru_cache(maxsize=1024)
def _secret_by_name(name: str) -> bool:
    if name in _NEVER_SECRET:
        return False
    return name in _SECRET_NAMES or any(part in name for part in _SECRET_PARTS)


def is_secret_header(name: str, required: Collection[str] = ()) -> bool:
    """The one redaction policy (the journal's and the cassettes'): known credential names (DPoP proofs too),
    headers the server requires, and any name with auth, token, key, secret, cookie, session, passw, credential or
    signature in it (but Mcp-Session-Id, which tests need to see, and WWW-Authenticate, a challenge)."""
    lowered = name.lower()
    return lowered in required or _secret_by_name(lowered)


def redacted(headers: Mapping[str, str], required: Collection[str] = ()) -> dict[str, str]:
    """A copy of `headers` with the value of every secret header replaced by '***'."""
    return {name: REDACTED if is_secret_header(name, required) else value for name, value in headers.items()}


_NAMES: dict[bytes, str] = {}
"""Header names as sent, decoded and lower-cased: clients send the same few names on every request."""


def _name_of(name: bytes) -> str:
    """`name` decoded and lower-cased, remembered (for a bounded number of names)."""
    key = name.decode("latin-1").lower()
    if len(_NAMES) < 512:
        _NAMES[name] = key
    return key


class Headers(dict[str, str]):
    """Request headers with case-insensitive lookup; names are kept lower-case.

    Its repr hides credentials (see `is_secret_header`; `required` adds the names a server
    requires), so a failing assertion never prints one; the values themselves are intact.
    """

    __slots__ = ("required",)

    def __init__(
        self, raw: Iterable[tuple[bytes, bytes]] | Mapping[str, str] = (), required: frozenset[str] = frozenset()
    ) -> None:
        self.required = required
        if type(raw) is not list:  # an ASGI scope's headers are a list: the one case that must be fast
            if isinstance(raw, Mapping):
                dict.update(self, ((k.lower(), v) for k, v in raw.items()))
                return
            raw = list(raw)
        names = _NAMES
        for name, value in raw:
            key = names.get(name)
            if key is None:
                key = _name_of(name)
            self[key] = value.decode("latin-1")
        if len(self) < len(raw):  # a header sent more than once: join its values, as HTTP allows
            dict.clear(self)
            for name, value in raw:
                key, text = name.decode("latin-1").lower(), value.decode("latin-1")
                previous = dict.get(self, key)
                dict.__setitem__(self, key, text if previous is None else f"{previous},{text}")

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)

    def __repr__(self) -> str:
        return repr(redacted(self, self.required))

    @classmethod
    def of_pairs(cls, pairs: Iterable[tuple[str, str]], required: frozenset[str]) -> Headers:
        """Headers from (lower-case name, value) pairs, as a finished record keeps them."""
        headers = cls()
        dict.update(headers, pairs)
        headers.required = required
        return headers
