"""DNS rebinding protection shared by everything that serves HTTP on loopback: the server and the recording proxy.

A page a browser loads from another site can reach a loopback port (a DNS name rebound to 127.0.0.1, or a
cross-site "simple" POST, or a no-cors GET); what gives it away is its `Host`, its `Origin` or its
`Sec-Fetch-Site`. All are checked before a body is read, a credential added or anything forwarded.

`Host` is parsed as RFC 9110 (section 7.2) and RFC 3986 (section 3.2.2) write it: a bracketed IPv6 literal and
nothing after it but `:port`, or a reg-name (an IPv4 address is one) and an optional `:port`, the port digits
only; anything else is 400, never read in part.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Sequence

__all__ = [
    "LOOPBACK_NAMES",
    "authority_host",
    "cross_site_refusal",
    "host_refusal",
    "origin_refusal",
    "rebinding_refusal",
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

_PORT = r"(?::[0-9]{1,5})?"
_REG_NAME = re.compile(r"([A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*" + _PORT)
_IP_LITERAL = re.compile(r"\[([0-9A-Fa-f:.]+)\]" + _PORT)
_ORIGIN = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*://([^/?#@]*)")


def authority_host(authority: str) -> str | None:
    """The host of a `Host` header or an Origin's authority (no port, no IPv6 brackets, lowercase), or None when it
    is not `host[:port]` as RFC 3986 writes it."""
    if authority.startswith("["):
        literal = _IP_LITERAL.fullmatch(authority)
        if literal is None:
            return None
        try:
            return str(ipaddress.IPv6Address(literal.group(1)))  # [0:0:0:0:0:0:0:1] is ::1
        except ValueError:
            return None
    if _REG_NAME.fullmatch(authority) is None:
        return None
    return authority.rsplit(":", 1)[0].lower() if ":" in authority else authority.lower()


@functools.lru_cache(maxsize=256)
def host_refusal(host: str, allowed: frozenset[str]) -> tuple[int, str] | None:
    """The status and message refusing a `Host` value: 400 when it is malformed, 421 when it names no allowed host
    (`"*"` allows any well-formed one); None when it passes. Cached: a client sends the same one every time."""
    name = authority_host(host)
    if name is None:
        return 400, f"Bad Request: Host {host!r} is not host[:port] (RFC 9110, 7.2)"
    if "*" not in allowed and name not in allowed:
        return 421, f"Host {host!r} is not a loopback name (DNS rebinding protection)"
    return None


@functools.lru_cache(maxsize=256)
def origin_refusal(origin: str, allowed: frozenset[str]) -> tuple[int, str] | None:
    """403 for an `Origin` that is not `scheme://host[:port]` with an allowed host (`null` included); None if it is.
    Cached, as `host_refusal` is."""
    if "*" in allowed:
        return None
    serialized = _ORIGIN.fullmatch(origin)
    name = authority_host(serialized.group(1)) if serialized is not None else None
    if name is None or name not in allowed:
        return 403, f"Origin {origin!r} is not allowed (DNS rebinding protection)"
    return None


def cross_site_refusal(fetch_sites: Sequence[str], has_origin: bool, allowed: frozenset[str]) -> tuple[int, str] | None:
    """403 for a request a browser marks `Sec-Fetch-Site: cross-site` that carries no Origin to check (a no-cors
    GET from another site's page); None otherwise. An Origin present is checked by `origin_refusal`."""
    if has_origin or "*" in allowed:
        return None
    if any(site.strip().lower() == "cross-site" for value in fetch_sites for site in value.split(",")):
        return 403, "Sec-Fetch-Site: cross-site without an Origin is not allowed (DNS rebinding protection)"
    return None


def rebinding_refusal(
    raw_headers: Sequence[tuple[bytes, bytes]], http_version: str, allowed: frozenset[str]
) -> tuple[int, str] | None:
    """The status and message refusing a request whose Host, Origin or Sec-Fetch-Site gives a foreign page away,
    or None.

    Exactly one Host header (none only in HTTP/1.0), well-formed, its name in `allowed` (lowercase names; `"*"`
    allows any); an Origin, when sent, whose host is in `allowed` too; and no `Sec-Fetch-Site: cross-site` without
    an Origin.
    """
    hosts = [value for name, value in raw_headers if name == b"host"]
    if len(hosts) > 1 or (not hosts and http_version != "1.0"):
        problem = "more than one Host header" if hosts else "no Host header"
        return 400, f"Bad Request: {problem} (RFC 9112 wants exactly one)"
    if hosts:
        refused = host_refusal(hosts[0].decode("latin-1"), allowed)
        if refused is not None:
            return refused
    origins = [value.decode("latin-1") for name, value in raw_headers if name == b"origin"]
    for origin in origins:
        refused = origin_refusal(origin, allowed)
        if refused is not None:
            return refused
    sites = [value.decode("latin-1") for name, value in raw_headers if name == b"sec-fetch-site"]
    return cross_site_refusal(sites, bool(origins), allowed)
