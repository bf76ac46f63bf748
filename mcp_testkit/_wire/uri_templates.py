"""Matching a URI against a resource template of simple `{name}` expressions (RFC 6570 level 1), in time linear in
the URI, because a client chooses the URI: a backtracking regex (`(?P<a>[^/?#]+)-(?P<b>[^/?#]+)-...`) took 41 s on
the event loop for 3 kB of dashes.

The result is the one such a regex gives (each parameter as long as the rest still allows, first parameter first),
found without backtracking: a pass from the right records, per parameter, where it can end so that the rest of the
template still matches; a pass from the left then takes the furthest such end of each parameter in turn.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

__all__ = ["MAX_TEMPLATE_PARAMETERS", "MAX_URI_LENGTH", "UriTemplate", "parameter_names"]

MAX_URI_LENGTH = 8192
"""The longest URI `resources/read` matches (in characters; RFC 9110 asks for at least 8,000 octets of a request
target), and so the longest value a template's parameter can take."""

MAX_TEMPLATE_PARAMETERS = 8
"""The most `{parameter}`s one resource template may have, which bounds the passes one match makes over a URI."""

_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SEPARATOR = re.compile(r"[/?#]")
"""What a parameter's value never holds: it is one path segment (or a part of one)."""


def parameter_names(template: str) -> list[str]:
    """The names of a template's `{parameter}`s, in order."""
    return _PARAMETER.findall(template)


@dataclass(frozen=True)
class UriTemplate:
    """A template cut into its literal text and parameter names: `literals[0] {names[0]} literals[1] ...`, one more
    literal than names (a literal may be empty)."""

    literals: tuple[str, ...]
    names: tuple[str, ...]

    @classmethod
    def parse(cls, template: str) -> UriTemplate:
        """The template's parts; ValueError naming the template when it has no parameter, names one twice, or has
        more than `MAX_TEMPLATE_PARAMETERS`."""
        parts = _PARAMETER.split(template)
        names = tuple(parts[1::2])
        if not names:
            raise ValueError(f"resource template {template!r} has no {{parameter}}; use resource() for one URI")
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"resource template {template!r} names {{{twice[0]}}} twice; name each once")
        if len(names) > MAX_TEMPLATE_PARAMETERS:
            raise ValueError(
                f"resource template {template!r} has {len(names)} parameters, over the limit of "
                f"{MAX_TEMPLATE_PARAMETERS}; split it into several templates"
            )
        return cls(tuple(parts[0::2]), names)

    def match(self, uri: str) -> dict[str, str] | None:
        """The parameters `uri` gives, or None when it is not one of the template's URIs (or is longer than
        `MAX_URI_LENGTH`): each a non-empty run of characters other than `/`, `?` and `#`."""
        literals, size = self.literals, len(uri)
        if size > MAX_URI_LENGTH or size < sum(map(len, literals)) + len(self.names):
            return None
        if not uri.startswith(literals[0]) or not uri.endswith(literals[-1]):
            return None
        scan = _Scan(uri)
        params: dict[str, str] = {}
        start = len(literals[0])
        for name, after, ends in zip(self.names, literals[1:], self._ends(scan), strict=True):
            end = scan.furthest_end(ends, start)
            if end is None:
                return None
            params[name] = uri[start:end]
            start = end + len(after)
        return params

    def _ends(self, scan: _Scan) -> list[list[int]]:
        """Per parameter, in ascending order, each position where its value can end such that the literal after it
        follows and the rest of the template matches the rest of the URI (the pass from the right)."""
        uri, size, separators = scan.uri, len(scan.uri), scan.separators
        bounds = len(separators)
        ends_by_parameter: list[list[int]] = [[] for _ in self.names]
        ends_by_parameter[-1].append(size - len(self.literals[-1]))
        for index in range(len(self.names) - 2, -1, -1):
            after, following = self.literals[index + 1], ends_by_parameter[index + 1]
            if not following:
                break  # the rest matches nowhere, so neither does the whole
            ends, width, last = ends_by_parameter[index], len(after), len(following)
            position = uri.find(after)
            while position != -1 and position < size:
                # The next parameter, starting after the literal, can end somewhere: the nearest end past its
                # start is within its segment (inlined `furthest_end`, the hot loop of a long URI).
                start = position + width
                nearest = bisect_right(following, start)
                if nearest < last:
                    bound = bisect_left(separators, start)
                    if following[nearest] <= (separators[bound] if bound < bounds else size):
                        ends.append(position)
                position = uri.find(after, position + 1)
        return ends_by_parameter


class _Scan:
    """One URI being matched, with the positions of its separators."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.separators = [found.start() for found in _SEPARATOR.finditer(uri)]

    def furthest_end(self, ends: list[int], start: int) -> int | None:
        """The furthest of `ends` (ascending) that a value starting at `start` can reach: past `start` (a value
        has one character at least) and not past the segment's end."""
        index = bisect_left(self.separators, start)
        segment_end = self.separators[index] if index < len(self.separators) else len(self.uri)
        index = bisect_right(ends, segment_end) - 1
        return ends[index] if index >= 0 and ends[index] > start else None
