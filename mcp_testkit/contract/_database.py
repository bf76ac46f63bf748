"""The example database a contract run shares (`database=`, `check --database`): a folder, Hypothesis' own
`DirectoryBasedExampleDatabase`, or a Redis server (`redis://host:port`, Hypothesis' `RedisExampleDatabase` from
`hypothesis[redis]`), so that a failure one run found is the first example every later run tries. And the seed its
draws keep, so that a run with a database draws what the derandomized run without one draws."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from hypothesis.database import ExampleDatabase

__all__ = ["REDIS_KEY_PREFIX", "example_database", "seeded_like_derandomize"]

REDIS_KEY_PREFIX = b"mcp-testkit-example:"
"""What the contract's keys start with in a shared Redis, beside other projects' Hypothesis examples."""


def example_database(where: Any) -> ExampleDatabase | None:
    """The Hypothesis example database `where` names: None (none: every run draws afresh), an `ExampleDatabase`,
    a folder (created on first use), or `redis://host:port[/db]`; a `ValueError` says what is wrong with another."""
    if where is None:
        return None
    from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase

    if isinstance(where, ExampleDatabase):
        return where
    if not isinstance(where, (str, os.PathLike)):
        raise ValueError(
            f"database={where!r}: give a folder, a redis://host:port URL or a hypothesis ExampleDatabase (or None)"
        )
    text = os.fspath(where)
    if text.startswith(("redis://", "rediss://", "unix://")):
        return _redis(text)
    if "://" in text:
        raise ValueError(f"database={text!r}: a shared database is a folder or a redis://host:port URL")
    return DirectoryBasedExampleDatabase(text)


def _redis(url: str) -> ExampleDatabase:
    try:
        from hypothesis.extra.redis import RedisExampleDatabase
        from redis import Redis
    except ImportError:
        raise ValueError(
            f"database={url!r} needs the redis client, which is not installed: pip install 'hypothesis[redis]'"
        ) from None
    return RedisExampleDatabase(Redis.from_url(url), key_prefix=REDIS_KEY_PREFIX)


def seeded_like_derandomize(test: Callable[..., None]) -> Callable[..., None]:
    """`test` seeded as `derandomize=True` seeds it (from a digest of its source), which Hypothesis forbids beside a
    database: with one, the draws after the saved examples are the derandomized run's."""
    from hypothesis import seed

    try:
        from hypothesis.internal.compat import int_from_bytes
        from hypothesis.internal.reflection import function_digest
    except ImportError:  # pragma: no cover - a Hypothesis that moved them: still seeded, by the test's name
        import hashlib

        return seed(int.from_bytes(hashlib.sha384(test.__name__.encode()).digest()[:16], "big"))(test)
    return seed(int_from_bytes(function_digest(test)))(test)
