"""`JournalWriter`: the one interface through which a transport writes a journal (the fake's HTTP and stdio
transports, the chaos proxy, the requests refused before the app), so that no package reaches into `Journal`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_testkit.journal import Journal
    from mcp_testkit.journal._record import Record

__all__ = ["JournalWriter"]


class JournalWriter:
    """Writes one journal: a record is begun when its request arrives and finished once its answer is sent."""

    __slots__ = ("_journal",)

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def next_seq(self) -> int:
        """The number of the next request, for a record built with it (`begin` numbers one itself)."""
        return self._journal._next_seq()

    def begin(self, record: Record, *, numbered: bool = False) -> None:
        """Add a record in flight, numbering it unless it is `numbered` already; readers see it at once."""
        journal = self._journal
        if not numbered:
            record.seq = journal._next_seq()
        journal._append(record)

    def finish(self, record: Record) -> None:
        """The record is complete (its answer sent or its request given up): keep it as a row, wake waiters."""
        self._journal._finish(record)

    def hide_headers(self, names: Callable[[], frozenset[str]]) -> None:
        """Redact in every export the headers `names()` gives (a server's required headers), whatever their name."""
        self._journal._redacted = names

    def hidden_headers(self) -> frozenset[str]:
        """The header names exports redact besides the secret ones by name."""
        return self._journal._redacted()
