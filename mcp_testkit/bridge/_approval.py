"""Approval gates: which calls wait for a person, the exception that pauses them, and the pending calls."""

from __future__ import annotations

import copy
import secrets
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

if TYPE_CHECKING:
    from mcp_testkit.bridge._tool import BridgeTool

__all__ = [
    "ApprovalPredicate",
    "ApprovalRequired",
    "ApprovalRule",
    "PendingApprovals",
    "named_in_approval",
    "needs_approval",
    "normalize_approval",
]

ApprovalPredicate: TypeAlias = Callable[[str, Mapping[str, Any]], bool]
"""Decides per call: ``(bare tool name, arguments) -> True`` when the call must wait for approval."""

# What ServerConfig(require_approval=...) takes; it is stored normalized (see normalize_approval).
ApprovalRule: TypeAlias = (
    bool
    | Literal["always", "never"]
    | Mapping[str, Collection[str] | Mapping[str, Collection[str]]]
    | ApprovalPredicate
)

_LIST_KEYS = ("always", "never")


def _names(server: str, key: str, value: object) -> frozenset[str]:
    """A list of tool names, given as a collection of names or as ``{"tool_names": [...]}``."""
    if isinstance(value, Mapping):
        if set(value) != {"tool_names"}:
            raise ValueError(
                f"server {server!r}: require_approval[{key!r}] takes tool names or {{'tool_names': [...]}}, "
                f"got keys {sorted(map(str, value))!r}"
            )
        value = value["tool_names"]
    if isinstance(value, str) or not isinstance(value, Collection):
        raise TypeError(f"server {server!r}: require_approval[{key!r}] takes a collection of tool names")
    names = frozenset(value)
    if not all(isinstance(name, str) and name for name in names):
        raise TypeError(f"server {server!r}: require_approval[{key!r}] holds something that is not a tool name")
    return names


def normalize_approval(server: str, rule: object) -> ApprovalRule:
    """Check ``require_approval`` when the config is built: a bool becomes "always"/"never", lists frozensets."""
    if isinstance(rule, bool):
        return "always" if rule else "never"
    if rule == "always" or rule == "never":
        return "always" if rule == "always" else "never"
    if isinstance(rule, Mapping):
        unknown = sorted(str(key) for key in rule if key not in _LIST_KEYS)
        if unknown or not rule:
            got = f"got {unknown!r}" if unknown else "got an empty mapping"
            raise ValueError(f"server {server!r}: require_approval takes the keys 'always' and 'never', {got}")
        return {key: _names(server, key, rule[key]) for key in _LIST_KEYS if key in rule}
    if callable(rule):
        return cast("ApprovalPredicate", rule)
    raise ValueError(
        f"server {server!r}: require_approval must be 'always', 'never', {{'always': [...]}}, "
        f"{{'never': [...]}}, a bool or a predicate (tool, arguments) -> bool, not {rule!r}"
    )


def named_in_approval(rule: ApprovalRule) -> frozenset[str]:
    """Every tool name a normalized rule's lists mention (none for a word or a predicate)."""
    if isinstance(rule, Mapping):
        return frozenset(name for names in rule.values() for name in names)
    return frozenset()


def needs_approval(rule: ApprovalRule, tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a call of ``tool`` with ``arguments`` waits for approval under a normalized rule.

    With both lists, the tools under "always" wait, and so does every tool not under "never".
    """
    if isinstance(rule, (bool, str)):
        return rule in (True, "always")
    if isinstance(rule, Mapping):
        if tool in rule.get("always", ()):
            return True
        return "never" in rule and tool not in rule["never"]
    answer: object = rule(tool, arguments)
    if not isinstance(answer, bool):
        raise TypeError(
            f"a require_approval predicate must return a bool, and returned {type(answer).__name__} for {tool!r}"
        )
    return answer


class ApprovalRequired(Exception):
    """A call waits for a person: ``await pool.approve(exc.token)`` runs it, ``pool.decline(exc.token)`` drops it.

    ``tool`` is the pool's name of the tool (``server.tool``); ``arguments`` a copy of what it would be
    sent. Nothing has been sent to the server. The message names neither the token nor the arguments.
    """

    def __init__(self, token: str, server: str, tool: str, arguments: Mapping[str, Any]) -> None:
        super().__init__(
            f"server {server!r}: call to {tool!r} waits for approval; "
            "approve it with pool.approve(token) or decline it with pool.decline(token)"
        )
        self.token = token
        self.server = server
        self.tool = tool
        self.arguments: dict[str, Any] = copy.deepcopy(dict(arguments))


@dataclass(frozen=True)
class _Pending:
    tool: BridgeTool
    arguments: dict[str, Any]


class PendingApprovals:
    """Calls waiting for a decision, by single-use token; they outlive the pool's connections, as a paused run."""

    def __init__(self) -> None:
        self._calls: dict[str, _Pending] = {}

    def __len__(self) -> int:
        return len(self._calls)

    def pause(self, tool: BridgeTool, arguments: Mapping[str, Any]) -> ApprovalRequired:
        """Keep the call under a new unguessable token and return the exception that tells the caller."""
        token = secrets.token_urlsafe(16)
        self._calls[token] = _Pending(tool, copy.deepcopy(dict(arguments)))
        return ApprovalRequired(token, tool.server, tool.name, arguments)

    def take(self, token: str) -> tuple[BridgeTool, dict[str, Any]]:
        """The paused call, removed so that the token cannot be used again; KeyError if it is not pending."""
        pending = self._calls.pop(token, None) if isinstance(token, str) else None
        if pending is None:
            raise KeyError(
                "no call waits for approval under this token: it was never issued by this pool, "
                "or was already approved or declined (a token is single-use)"
            )
        return pending.tool, pending.arguments
