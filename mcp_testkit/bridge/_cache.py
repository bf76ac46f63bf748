"""The process-level tool-list cache: a server's listing kept for a while, keyed without holding a credential."""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from mcp_testkit.bridge._config import positive_seconds
from mcp_testkit.bridge._oauth import OAuth

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import mcp_types

    from mcp_testkit.bridge._config import ServerConfig

__all__ = ["ToolCache", "ToolCacheKey", "cache_key"]

DEFAULT_TTL_S = 300.0
DEFAULT_MAX_ENTRIES = 100

# Hashes are keyed by a secret of this process: a key's hash says nothing about a credential outside it,
# not even to someone who can guess a short one.
_HASH_KEY = secrets.token_bytes(32)
# A pool given its own transport reaches whatever that transport routes to, so its URL alone names no
# endpoint: each such transport gets an id of its own, dropped with it.
_transport_ids: weakref.WeakKeyDictionary[object, str] = weakref.WeakKeyDictionary()


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(_HASH_KEY, text.encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class ToolCacheKey:
    """What a cached listing belongs to: hashes of the endpoint and credential, and the allow/deny lists.

    The endpoint (URL, or the pool's own transport, and the era configured; for a command server, its command and
    arguments)
    and the credential (the credential headers; for a command server, its environment) are kept only
    as keyed hashes, so neither a key nor its repr carries a credential, even one written into a URL.
    """

    endpoint: str
    credential: str
    allow: tuple[str, ...] | None
    deny: tuple[str, ...] | None

    def __repr__(self) -> str:
        return (
            f"ToolCacheKey(endpoint={self.endpoint[:12]}…, credential={self.credential[:12]}…, "
            f"allow={self.allow!r}, deny={self.deny!r})"
        )


def cache_key(config: ServerConfig, credentials: Mapping[str, str], transport: object | None) -> ToolCacheKey:
    """The key of ``config``'s listing, as read with ``credentials`` through ``transport`` (None: the network).

    A command server is keyed by its command and arguments, and by its environment as configured
    (None, inheriting, is a key of its own), which stands for its credentials.
    """
    if config.command is not None:
        endpoint = _digest({"command": config.command, "args": list(config.args)})
        credential = _digest({"env": config.env})
    else:
        where = ""
        if transport is not None:
            where = _transport_ids.setdefault(transport, secrets.token_hex(8))
        # The era configured is part of the endpoint: what a listing holds depends on it (2026-07-28 leaves out
        # tools whose x-mcp-header marks are invalid; the handshake era keeps them).
        endpoint = _digest({"url": config.url, "transport": where, "era": config.era})
        credential = _digest(sorted((name.lower(), value) for name, value in credentials.items()))
        if isinstance(config.auth, OAuth):
            # Its tokens carry whose listing it is: one OAuth object's (tokens in memory) or one token file's.
            oauth = config.auth
            credential = _digest({"oauth": repr(oauth), "held": id(oauth) if oauth.token_file is None else None})
    return ToolCacheKey(
        endpoint=endpoint,
        credential=credential,
        allow=tuple(sorted(config.allow)) if config.allow is not None else None,
        deny=tuple(sorted(config.deny)) if config.deny is not None else None,
    )


class ToolCache:
    """The tool listings of every pool in this process, each kept ``ttl_s`` seconds (300) and at most
    ``max_entries`` of them (100), least recently used dropped first.

    Only tool definitions are kept, never results, sockets or processes. Pools use it unless built
    with ``cache=False``. Its methods act on the one process-level cache:
    ``ToolCache.configure(ttl_s=60)``, ``ToolCache.clear()``.
    """

    ttl_s: ClassVar[float] = DEFAULT_TTL_S
    max_entries: ClassVar[int] = DEFAULT_MAX_ENTRIES
    clock: ClassVar[Callable[[], float]] = time.monotonic
    _entries: ClassVar[OrderedDict[ToolCacheKey, tuple[float, tuple[mcp_types.Tool, ...], float]]] = OrderedDict()
    """Each listing: when it was kept, its tools, and how long it may be kept (the server's `ttlMs` if shorter)."""
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self) -> None:
        raise TypeError("ToolCache is the process-level cache: use its class methods, e.g. ToolCache.clear()")

    @classmethod
    def configure(
        cls,
        *,
        ttl_s: float | None = None,
        max_entries: int | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        """Change the settings given; ``clock`` (seconds, monotonic) lets a test move time instead of waiting."""
        if ttl_s is not None and not positive_seconds(ttl_s):
            raise ValueError(f"ToolCache ttl_s must be a positive, finite number of seconds, not {ttl_s!r}")
        if max_entries is not None and (
            isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1
        ):
            raise ValueError(f"ToolCache max_entries must be a positive int, not {max_entries!r}")
        if clock is not None and not callable(clock):
            raise TypeError("ToolCache clock must be a function returning seconds, like time.monotonic")
        with cls._lock:
            if ttl_s is not None:
                cls.ttl_s = float(ttl_s)
            if max_entries is not None:
                cls.max_entries = max_entries
            if clock is not None:
                cls.clock = clock
            cls._trim()

    @classmethod
    def clear(cls) -> None:
        """Forget every listing, for instance after a server was updated; the settings stay."""
        with cls._lock:
            cls._entries.clear()

    @classmethod
    def reset(cls) -> None:
        """Forget every listing and go back to the defaults (300 s, 100 entries, ``time.monotonic``)."""
        with cls._lock:
            cls._entries.clear()
            cls.ttl_s, cls.max_entries, cls.clock = DEFAULT_TTL_S, DEFAULT_MAX_ENTRIES, time.monotonic

    @classmethod
    def keys(cls) -> list[ToolCacheKey]:
        """The keys of the listings still fresh, least recently used first."""
        with cls._lock:
            cls._expire()
            return list(cls._entries)

    @classmethod
    def get(cls, key: ToolCacheKey) -> list[mcp_types.Tool] | None:
        """The listing kept under ``key`` if younger than ``ttl_s`` (and than the server's ``ttlMs``), else None."""
        with cls._lock:
            entry = cls._entries.get(key)
            if entry is None:
                return None
            if cls.clock() - entry[0] >= min(cls.ttl_s, entry[2]):
                del cls._entries[key]
                return None
            cls._entries.move_to_end(key)
            return list(entry[1])

    @classmethod
    def forget(cls, key: ToolCacheKey) -> None:
        """Drop the listing kept under ``key``: its server said the listing changed."""
        with cls._lock:
            cls._entries.pop(key, None)

    @classmethod
    def put(cls, key: ToolCacheKey, tools: list[mcp_types.Tool], ttl_s: float | None = None) -> None:
        """Keep a whole listing under ``key``, from now on, for ``ttl_s`` at most when the server gave one (its
        ``ttlMs``, 2026-07-28); a listing the server gave ``ttlMs: 0`` is not kept, and drops the one kept before."""
        with cls._lock:
            if ttl_s is not None and ttl_s <= 0:
                cls._entries.pop(key, None)
                return
            cls._entries[key] = (cls.clock(), tuple(tools), float("inf") if ttl_s is None else ttl_s)
            cls._entries.move_to_end(key)
            cls._trim()

    @classmethod
    def _expire(cls) -> None:
        now = cls.clock()
        for key in [key for key, (stored, _, ttl) in cls._entries.items() if now - stored >= min(cls.ttl_s, ttl)]:
            del cls._entries[key]

    @classmethod
    def _trim(cls) -> None:
        while len(cls._entries) > cls.max_entries:
            cls._entries.popitem(last=False)
