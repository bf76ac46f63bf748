"""`BridgeFacts`: what an adapter declares about its bridge (retry budget, page limit, timeout, sessions, eras,
capabilities, loggers), read and checked once per property; the cases are built from them."""

from __future__ import annotations

import inspect
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from mcp_testkit._wire.eras import ERAS, HANDSHAKE
from mcp_testkit.adapters import CAPABILITIES, INABILITIES, SessionMode
from mcp_testkit.contract._errors import ContractError

__all__ = [
    "DEFAULT_CONCURRENCY",
    "DEFAULT_WAIT_S",
    "BridgeFacts",
    "declared_eras",
    "declared_loggers",
    "takes_keyword",
]

DEFAULT_WAIT_S = 30.0
"""The most one request of a bridge that declares no `timeout_s` may wait, as P11 (and P12) judge it: a bridge
that waits past it on a silent server waits without end."""
DEFAULT_CONCURRENCY = 2
"""How many calls P13 has in flight on a bridge whose adapter declares no `concurrency` (and can overlap calls)."""


@dataclass(frozen=True)
class BridgeFacts:
    """What the adapter declares about its bridge, read once per property, and the era the run checks:
    the cases are built from them."""

    retry: int
    page_limit: int | None
    timeout_s: float | None
    sessions: SessionMode
    eras: tuple[str, ...] | None = None
    """The eras the factory can be asked to speak (`factory(transport=..., era=...)`); None: the bridge
    negotiates its era by itself, and the harness only observes which one it spoke."""
    era: str = HANDSHAKE
    """The protocol era the run checks: 'handshake' or 'stateless' (2026-07-28)."""
    capabilities: frozenset[str] = frozenset()
    """What the bridge has beyond the core ("approvals", "tool_cache", "oauth"): the properties needing one apply."""
    cache_ttl_s: float | None = None
    """With "tool_cache": how long its cache keeps a listing."""
    connect_timeout_s: float | None = None
    """How long a connect may wait in all (its handshake and listing), as the adapter declares."""
    progress_timeout_s: float | None = None
    """Where progress notifications extend a call's wait: the most one attempt waits (None: they do not)."""
    max_result_bytes: int | None = None
    """The largest result the bridge takes; one over it is an error of its own kind (None: no declared limit)."""
    concurrency: int | None = None
    """How many calls the bridge lets run at once on one connection: as declared, else `DEFAULT_CONCURRENCY`;
    None only where the adapter cannot overlap calls."""
    cannot: frozenset[str] = frozenset()
    """What the contract cannot do through the adapter, structurally (`INABILITIES`): "abandon_calls" (P10),
    "overlap_calls" (P13)."""

    @property
    def wait_s(self) -> float:
        """The most one request may wait: the declared `timeout_s`, else the contract's `DEFAULT_WAIT_S`."""
        return self.timeout_s if self.timeout_s is not None else DEFAULT_WAIT_S

    @property
    def connect_wait_s(self) -> float:
        """The most a whole connect may wait: the declared `connect_timeout_s`, else its listing (a read) tried
        1 + `retry` times, each within `wait_s`."""
        if self.connect_timeout_s is not None:
            return self.connect_timeout_s
        return (1 + self.retry) * self.wait_s

    @classmethod
    def of(cls, adapter: Any, era: str = HANDSHAKE) -> BridgeFacts:
        sessions = getattr(adapter, "sessions", "persistent")
        if sessions not in ("persistent", "per_call"):
            raise ContractError(
                f"adapter {_name(adapter)}: sessions must be 'persistent' or 'per_call', not {sessions!r}"
            )
        retry = getattr(adapter, "retry", None)
        if not isinstance(retry, int) or retry < 0:
            raise ContractError(f"adapter {_name(adapter)}: retry must be an int >= 0, not {retry!r}")
        page_limit = getattr(adapter, "page_limit", None)
        if page_limit is not None and (not isinstance(page_limit, int) or page_limit < 1):
            raise ContractError(f"adapter {_name(adapter)}: page_limit must be an int >= 1 or None, not {page_limit!r}")
        timeout_s = getattr(adapter, "timeout_s", None)
        if timeout_s is not None and (not isinstance(timeout_s, (int, float)) or timeout_s <= 0):
            raise ContractError(
                f"adapter {_name(adapter)}: timeout_s must be a positive number or None, not {timeout_s!r}"
            )
        capabilities = _capabilities(adapter)
        cannot = _inabilities(adapter)
        concurrency = _count(adapter, "concurrency", 2)
        if "overlap_calls" in cannot:
            concurrency = None
        elif concurrency is None:
            concurrency = DEFAULT_CONCURRENCY
        cache_ttl_s = getattr(adapter, "cache_ttl_s", None) if "tool_cache" in capabilities else None
        if "tool_cache" in capabilities and (
            not isinstance(cache_ttl_s, (int, float)) or isinstance(cache_ttl_s, bool) or not cache_ttl_s > 0
        ):
            raise ContractError(
                f"adapter {_name(adapter)}: with 'tool_cache', cache_ttl_s must be a positive number, "
                f"not {cache_ttl_s!r}"
            )
        return cls(
            retry,
            page_limit,
            timeout_s,
            "per_call" if sessions == "per_call" else "persistent",
            declared_eras(adapter),
            era,
            capabilities,
            cache_ttl_s,
            _seconds(adapter, "connect_timeout_s"),
            _seconds(adapter, "progress_timeout_s"),
            _count(adapter, "max_result_bytes", 1),
            concurrency,
            cannot,
        )


def _seconds(adapter: Any, name: str) -> float | None:
    """An optional declared wait: a positive number of seconds, or None (not declared)."""
    value = getattr(adapter, name, None)
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0):
        raise ContractError(
            f"adapter {_name(adapter)}: {name} must be a positive number of seconds or None, not {value!r}"
        )
    return None if value is None else float(value)


def _count(adapter: Any, name: str, least: int) -> int | None:
    """An optional declared count: an int >= `least`, or None (not declared)."""
    value = getattr(adapter, name, None)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < least):
        raise ContractError(f"adapter {_name(adapter)}: {name} must be an int >= {least} or None, not {value!r}")
    return value


_NEEDS = {
    "approvals": ("require_approval", "approve", "decline"),
    "tool_cache": ("use_tool_cache", "advance_cache_clock"),
    "oauth": ("use_oauth",),
    "cancellation": (),
}
"""The methods each capability promises (see `ApprovalAdapter`, `ToolCacheAdapter` and `OAuthAdapter`)."""


def _named(adapter: Any, attribute: str, known: Collection[str], unknown_as: str) -> frozenset[str]:
    """The adapter's optional collection of names `attribute`, checked: a collection of strings, each in `known`."""
    declared = getattr(adapter, attribute, ())
    if isinstance(declared, str) or not isinstance(declared, Collection) or not all(
        isinstance(name, str) for name in declared
    ):
        raise ContractError(f"adapter {_name(adapter)}: {attribute} must be a collection of names, not {declared!r}")
    unknown = sorted(set(declared) - set(known))
    if unknown:
        raise ContractError(f"adapter {_name(adapter)}: {unknown_as} {unknown}; known: {', '.join(known)}")
    return frozenset(declared)


def _capabilities(adapter: Any) -> frozenset[str]:
    """The adapter's declared capabilities, checked: known names, and the methods each one needs."""
    declared = _named(adapter, "capabilities", CAPABILITIES, "unknown capabilities")
    for capability in declared:
        missing = [method for method in _NEEDS[capability] if not callable(getattr(adapter, method, None))]
        if missing:
            raise ContractError(f"adapter {_name(adapter)}: it declares {capability!r} but has no {', '.join(missing)}")
    return declared


def _inabilities(adapter: Any) -> frozenset[str]:
    """What the adapter says the contract cannot do through it, checked: known names only."""
    return _named(adapter, "cannot", INABILITIES, "unknown names in cannot")


def _name(adapter: Any) -> str:
    return repr(getattr(adapter, "name", type(adapter).__name__))


def takes_keyword(factory: Any, name: str) -> bool:
    """Whether `factory` can be called with `name=`: a wrapper of an adapter that declares `eras` may not pass it
    on, and then gets its adapter made as the wrapper makes it (it is not asked for an era it cannot take)."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == name or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def declared_eras(adapter: Any) -> tuple[str, ...] | None:
    """The adapter's optional `eras`: those its factory can be asked to speak with `era=`."""
    eras = getattr(adapter, "eras", None)
    if eras is None:
        return None
    if isinstance(eras, str) or not isinstance(eras, (tuple, list)) or not set(eras) <= set(ERAS):
        raise ContractError(
            f"adapter {_name(adapter)}: eras must be None or a tuple of 'handshake' and 'stateless', not {eras!r}"
        )
    return tuple(eras)


def declared_loggers(adapter: Any) -> tuple[str, ...]:
    """The adapter's optional `loggers`: the names of loggers its bridge writes to that do not propagate to the
    root logger, whose records the contract captures too."""
    names = getattr(adapter, "loggers", ())
    if isinstance(names, str) or not isinstance(names, Collection) or not all(isinstance(n, str) for n in names):
        raise ContractError(f"adapter {_name(adapter)}: loggers must be a collection of logger names, not {names!r}")
    return tuple(names)
