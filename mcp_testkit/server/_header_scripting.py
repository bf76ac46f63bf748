"""Scripting the headers every request to a `TestMcpServer` must carry: required, rotated, and hidden from every
repr and export of a record.

`HeaderScripting` is a part of the server: the server's verbs of the same names call it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_testkit.server._state import RequiredHeader

if TYPE_CHECKING:
    from mcp_testkit.server._current import CurrentState

__all__ = ["HeaderScripting"]


class HeaderScripting:
    """`require_header` and `rotate_header`, on the server's current state, and the names required."""

    def __init__(self, current: CurrentState) -> None:
        self._current = current

    def require_header(self, name: str, value: str, *, status: int = 401) -> None:
        """Refuse every request without exactly `name: value`: 401 with a Bearer challenge, or 403."""
        if status not in (401, 403):
            raise ValueError(f"require_header: status must be 401 or 403, not {status}")
        current = self._current
        with current.lock:
            state = current.state
            state.required[name.lower()] = RequiredHeader(name, value, status)
            state.hidden = frozenset(state.required)

    def rotate_header(self, name: str, value: str) -> None:
        """Accept only `value` for the required header `name` from now on; the old value is refused."""
        current = self._current
        with current.lock:
            required = current.state.required
            known = required.get(name.lower())
            if known is None:
                raise KeyError(f"rotate_header: {name!r} is not a required header; call require_header first")
            required[name.lower()] = RequiredHeader(known.name, value, known.status, (*known.rejected, known.value))

    def names(self) -> tuple[str, ...]:
        """The names of the required headers, as given, in the order they were first required."""
        return tuple(required.name for required in self._current.state.required.values())
