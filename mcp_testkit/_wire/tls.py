"""The one TLS context every outgoing connection of the toolkit uses (the bridge's pools, the recording proxy)."""

from __future__ import annotations

import functools
import ssl

__all__ = ["tls_context"]


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """One TLS context for every pool: loading the CA bundle costs milliseconds, a pool may live for one call."""
    return ssl.create_default_context()
