"""Matching: which recorded call answers a call a replay receives (`exact`, `by_tool`, `in_order` or a
user's `Matcher`), and the near-miss message when none does."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._placeholders import is_placeholder_text

__all__ = ["MATCH_MODES", "CallIndex", "Matcher", "Matching", "UnmatchedCall", "arguments_match", "check_match"]

MATCH_MODES = ("exact", "in_order", "by_tool")
"""How a replay finds the recorded answer of a call (a user matcher aside); see `TestMcpServer.from_cassette`."""

Matcher = Callable[[str, Mapping[str, Any], Sequence[RecordedCall]], "RecordedCall | None"]
"""A user matcher: `(tool, arguments, recorded calls of that tool) -> the call to replay, or None`."""


class UnmatchedCall(AssertionError):
    """A replay was sent a call that no recorded call matches; the message lists the nearest recorded calls."""

    def __init__(self, source: str, tool: str, arguments: Mapping[str, Any], mode: str, nearest: str) -> None:
        self.tool = tool
        self.arguments = dict(arguments)
        super().__init__(
            f"cassette {source} has no recorded call matching {tool}({json.dumps(arguments, sort_keys=True)}) "
            f"(match={mode}); {nearest}"
        )


def arguments_match(recorded: Any, sent: Any) -> bool:
    """JSON equality, where a recorded string holding a redaction placeholder matches any value in its place."""
    if is_placeholder_text(recorded):
        if not isinstance(sent, str):
            return False  # redaction only ever replaced text
        pattern = "".join(
            ".+?" if re.fullmatch(r"<redacted:[^<>\s]+>", part) else re.escape(part)
            for part in re.split(r"(<redacted:[^<>\s]+>)", recorded)
        )
        return re.fullmatch(pattern, sent, re.S) is not None
    if isinstance(recorded, dict):
        return (
            isinstance(sent, dict)
            and recorded.keys() == sent.keys()
            and all(arguments_match(recorded[key], sent[key]) for key in recorded)
        )
    if isinstance(recorded, list):
        return (
            isinstance(sent, list)
            and len(recorded) == len(sent)
            and all(arguments_match(a, b) for a, b in zip(recorded, sent, strict=True))
        )
    if isinstance(recorded, bool) or isinstance(sent, bool):
        return recorded is sent
    return bool(recorded == sent)  # numbers by value: 1 and 1.0 are one JSON number


def _canonical(value: Any) -> Any:
    """A JSON value with integral floats as ints, so that equal numbers have one text."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _canonical(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def _key(tool: str, arguments: Mapping[str, Any]) -> str:
    return json.dumps([tool, _canonical(arguments)], sort_keys=True, separators=(",", ":"))


class CallIndex:
    """The recorded calls by tool, and by tool and arguments, so a call is matched without a scan.

    Calls whose arguments hold a redaction placeholder cannot be keyed by their text; they are
    tried one by one, but only against calls of their own tool.
    """

    def __init__(self, calls: Sequence[RecordedCall]) -> None:
        self.calls = list(calls)
        self.by_tool: dict[str, list[RecordedCall]] = {}
        self.exact: dict[str, list[RecordedCall]] = {}
        self.wild: dict[str, list[RecordedCall]] = {}
        for call in self.calls:
            self.by_tool.setdefault(call.tool, []).append(call)
            if is_placeholder_text(json.dumps(call.arguments)):
                self.wild.setdefault(call.tool, []).append(call)
            else:
                self.exact.setdefault(_key(call.tool, call.arguments), []).append(call)

    def matching(self, tool: str, arguments: Mapping[str, Any]) -> list[RecordedCall]:
        """The recorded calls of `tool` whose arguments match, in recorded order."""
        found = self.exact.get(_key(tool, arguments), [])
        wild = [call for call in self.wild.get(tool, ()) if arguments_match(call.arguments, arguments)]
        return sorted([*found, *wild], key=lambda call: call.seq) if wild else found


class Matching:
    """Which recorded call answers each call: one instance per server state, so `reset()` starts over."""

    def __init__(self, index: CallIndex, match: str | Matcher, source: str) -> None:
        self.index = index
        self.calls = index.calls
        self.match_mode = match
        self.source = source
        self._played: Counter[int] = Counter()
        self._keys: dict[int, int] = {}
        self._next = 0

    @property
    def mode_name(self) -> str:
        return self.match_mode if isinstance(self.match_mode, str) else getattr(self.match_mode, "__name__", "custom")

    def match(self, tool: str, arguments: Mapping[str, Any]) -> RecordedCall:
        """The recorded call that answers this one; UnmatchedCall naming the nearest when there is none."""
        mode = self.match_mode
        found: RecordedCall | None
        if mode == "in_order":
            expected = self.calls[self._next] if self._next < len(self.calls) else None
            if expected is not None and expected.tool == tool and arguments_match(expected.arguments, arguments):
                self._next += 1
                return expected
            if expected is None:
                nearest = f"all {len(self.calls)} recorded calls were already replayed"
            else:
                nearest = f"the next recorded call is {expected.describe()}"
            raise UnmatchedCall(self.source, tool, arguments, "in_order", nearest)
        if mode == "exact":
            found = self._next_of(self.index.matching(tool, arguments))
        elif mode == "by_tool":
            found = self._next_of(self.index.by_tool.get(tool, []))
        else:
            assert callable(mode)
            found = mode(tool, arguments, list(self.index.by_tool.get(tool, [])))
        if found is None:
            raise UnmatchedCall(self.source, tool, arguments, self.mode_name, self.nearest(tool, arguments))
        return found

    def give_back(self, call: RecordedCall) -> None:
        """Undo the match of `call`, whose replay stopped before it answered (a 2026-07-28 round that ends asking for
        input runs again on its retry, and must find the same recorded call)."""
        if self.match_mode == "in_order":
            if self._next > 0 and self.calls[self._next - 1] is call:
                self._next -= 1
            return
        key = self._keys.get(call.seq)
        if key is not None and self._played[key] > 0:
            self._played[key] -= 1

    def _next_of(self, candidates: list[RecordedCall]) -> RecordedCall | None:
        """Recorded answers to the same call replay in order, the last one repeating."""
        if not candidates:
            return None
        key = candidates[0].seq
        index = min(self._played[key], len(candidates) - 1)
        self._played[key] += 1
        self._keys[candidates[index].seq] = key
        return candidates[index]

    def nearest(self, tool: str, arguments: Mapping[str, Any], limit: int = 3) -> str:
        """The recorded calls most like this one, as a near-miss message lists them."""
        if not self.calls:
            return "the cassette holds no tools/call at all"

        def likeness(call: RecordedCall) -> tuple[int, int, int]:
            same = sum(1 for k, v in arguments.items() if k in call.arguments and arguments_match(call.arguments[k], v))
            shared = len(set(arguments) & set(call.arguments))
            return (int(call.tool == tool), same, shared)

        ranked = sorted(self.calls, key=lambda call: (likeness(call), -call.seq), reverse=True)
        unique: dict[str, RecordedCall] = {}
        for call in ranked:
            unique.setdefault(json.dumps([call.tool, call.arguments], sort_keys=True), call)
        shown = list(unique.values())[:limit]
        return "nearest recorded calls: " + "; ".join(call.describe() for call in shown)


def check_match(match: Any) -> str | Matcher:
    if callable(match) or match in MATCH_MODES:
        return match  # type: ignore[no-any-return]
    raise ValueError(f"match must be one of {', '.join(MATCH_MODES)} or a callable, not {match!r}")
