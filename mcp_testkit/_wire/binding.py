"""Whether an address to serve on is loopback, and the warning a Python caller gets when it is not.

The command line refuses a non-loopback `--host` without `--allow-remote`; from Python the same choice is a
warning (a test suite may mean it), silenced by `allow_remote=True`.
"""

from __future__ import annotations

import ipaddress
import warnings

__all__ = ["RemoteHostWarning", "is_loopback", "warn_if_remote"]


class RemoteHostWarning(UserWarning):
    """A fake server or recording proxy bound to an address other hosts can reach: anyone who reaches it can
    call its scripted tools and read its journal. Pass `allow_remote=True` if that is meant."""


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback name or address (`localhost`, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_remote(host: str, what: str, *, allow_remote: bool, stacklevel: int = 3) -> None:
    """Warn (`RemoteHostWarning`) that `what` will serve on `host`, unless it is loopback or `allow_remote`."""
    if allow_remote or is_loopback(host):
        return
    warnings.warn(
        f"{what} binds {host!r}, which other hosts can reach: they can list and call its scripted tools and read "
        "its journal. Bind 127.0.0.1, or pass allow_remote=True if you mean it.",
        RemoteHostWarning,
        stacklevel=stacklevel,
    )
