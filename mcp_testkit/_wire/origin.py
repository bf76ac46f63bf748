"""DNS rebinding protection shared by everything that serves HTTP on loopback: the server and the recording proxy.

A page a browser loads from another site can reach a loopback port (a DNS name rebound to 127.0.0.1, or a
cross-site "simple" POST); what gives it away is its `Host` or `Origin`. Both are checked before a body is
read, a credential added or anything forwarded.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["LOOPBACK_NAMES", "hostname", "rebinding_refusal"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def hostname(value: str) -> str:
    """The host part of a Host header or an Origin's authority: no port, no IPv6 brackets."""
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def rebinding_refusal(
    raw_headers: Sequence[tuple[bytes, bytes]], http_version: str, allowed: frozenset[str]
) -> tuple[int, str] | None:
    """The status and message refusing a request whose Host or Origin is not an allowed name, or None.

    Exactly one Host header (none only in HTTP/1.0), its name in `allowed` (lowercase names; `"*"` allows any),
    and an Origin, when sent, whose host is in `allowed` too.
    """
    hosts = [value for name, value in raw_headers if name == b"host"]
    if len(hosts) > 1 or (not hosts and http_version != "1.0"):
        problem = "more than one Host header" if hosts else "no Host header"
        return 400, f"Bad Request: {problem} (RFC 9112 wants exactly one)"
    if "*" in allowed:
        return None
    if hosts:
        host = hosts[0].decode("latin-1")
        if hostname(host).lower() not in allowed:
            return 421, f"Host {host!r} is not a loopback name (DNS rebinding protection)"
    origins = [value for name, value in raw_headers if name == b"origin"]
    for raw in origins:
        origin = raw.decode("latin-1")
        if hostname(origin.partition("://")[2].split("/", 1)[0]).lower() not in allowed:
            return 403, f"Origin {origin!r} is not allowed (DNS rebinding protection)"
    return None
