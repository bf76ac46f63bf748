"""`JournalWriter`: where a journal's records are kept, and the one interface through which a transport writes
them (the fake's HTTP and stdio transports, the chaos proxy, the requests refused before the app), so that no
package reaches into `Journal`, which only reads."""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from mcp_testkit.journal._record import SEQ, Record, record_of_row, row_of

__all__ = ["JournalWriter"]


class JournalWriter:
    """Writes one journal: a record is begun when its request arrives and finished once its answer is sent."""

    def __init__(self, limit: int | None, hidden: Callable[[], frozenset[str]]) -> None:
        self.limit = limit
        self.records: deque[Record | tuple[Any, ...]] = deque(maxlen=limit)
        """Records in flight, and finished ones as untracked rows (see `Record._row`)."""
        self.changed = threading.Condition()
        """Notified as records finish, while someone waits on the journal (`Journal.wait_for`)."""
        self._faults: list[Any] = []
        """Every fault a record carried, numbered: a row holds the number, not the (tracked) fault."""
        self._fault_numbers: dict[int, int] = {}
        self._seq = itertools.count(1)
        self._hidden = hidden
        self._waiting = 0
        self._subscribers: tuple[Callable[[Record], None], ...] = ()

    # -- writing (the transports) ----------------------------------------------------------------

    def next_seq(self) -> int:
        """The number of the next request, for a record built with it (`begin` numbers one itself)."""
        return next(self._seq)

    def begin(self, record: Record, *, numbered: bool = False) -> None:
        """Add a record in flight, numbering it unless it is `numbered` already; readers see it at once."""
        if not numbered:
            record.seq = next(self._seq)
        self.records.append(record)

    def finish(self, record: Record) -> None:
        """The record is complete (its answer sent or its request given up): keep it as a row, wake waiters."""
        self._keep_row(record)
        if self._waiting:
            with self.changed:
                self.changed.notify_all()
        for subscriber in self._subscribers:
            subscriber(record)

    def hide_headers(self, names: Callable[[], frozenset[str]]) -> None:
        """Redact in every export the headers `names()` gives (a server's required headers), whatever their name."""
        self._hidden = names

    def hidden_headers(self) -> frozenset[str]:
        """The header names exports redact besides the secret ones by name."""
        return self._hidden()

    def clear(self) -> None:
        """Forget every record (and the count of dropped ones); numbering starts again at 1."""
        self.records = deque(maxlen=self.limit)
        self._seq = itertools.count(1)

    # -- what the journal reads ------------------------------------------------------------------

    def subscribe(self, callback: Callable[[Record], None]) -> Callable[[], None]:
        """Call `callback(record)` as each request is done; returns an unsubscribe."""
        self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            self._subscribers = tuple(s for s in self._subscribers if s is not callback)

        return unsubscribe

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Hold `changed` while a reader waits on it, so that `finish` knows to notify."""
        with self.changed:
            self._waiting += 1
            try:
                yield
            finally:
                self._waiting -= 1

    def view(self, item: Record | tuple[Any, ...]) -> Record:
        """A kept item as a `Record` (a row is viewed, an unfinished record is itself)."""
        return record_of_row(item, self._faults) if type(item) is tuple else item  # type: ignore[return-value]

    def views(self) -> list[Record]:
        """Every kept item as a `Record`, oldest first."""
        faults = self._faults
        return [record_of_row(item, faults) if type(item) is tuple else item for item in list(self.records)]  # type: ignore[misc]

    def _keep_row(self, record: Record) -> None:
        """Replace a finished record by its row; it is found by its `seq`, or among the newest."""
        records = self.records
        try:
            first = records[0]
        except IndexError:
            return
        index = record.seq - (first[SEQ] if type(first) is tuple else first.seq)  # type: ignore[union-attr]
        if not 0 <= index < len(records) or records[index] is not record:
            # Not where its number puts it (records appended by hand, or by two threads): look among the
            # newest; one that is not there was dropped (journal_limit, clear()) and is not kept.
            for index in range(len(records) - 1, max(-1, len(records) - 257), -1):
                if records[index] is record:
                    break
            else:
                return
        fault = record.fault
        number = None
        if fault is not None:
            number = self._fault_numbers.get(id(fault))
            if number is None:  # kept for the journal's life, so that no other fault ever takes its id
                number = self._fault_numbers[id(fault)] = len(self._faults)
                self._faults.append(fault)
        records[index] = row_of(record, number)
