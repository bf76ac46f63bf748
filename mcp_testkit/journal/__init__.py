"""The journal: one `Record` per HTTP request the server received, and the queries tests assert with."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from mcp_testkit._renamed import renamed_keywords
from mcp_testkit._wire.headers import REDACTED as REDACTED  # the redaction policy, where it lived first
from mcp_testkit._wire.headers import Headers
from mcp_testkit._wire.headers import is_secret_header as is_secret_header
from mcp_testkit._wire.headers import redacted as redacted
from mcp_testkit._wire.referee import RULES, Violation
from mcp_testkit._wire.strict_json import dumps
from mcp_testkit.journal._auth_log import AuthExchange, AuthLog, TokenLog
from mcp_testkit.journal._conformance import Conformance
from mcp_testkit.journal._input_log import InputExchange, InputLog
from mcp_testkit.journal._near_miss import cancellations_in, unasked, uncalled, uncancelled
from mcp_testkit.journal._record import CANCELLED_BY_CLIENT, FILTERED, SEQ, Record
from mcp_testkit.journal._writer import JournalWriter

__all__ = [
    "CANCELLED_BY_CLIENT",
    "RULES",
    "AuthExchange",
    "AuthLog",
    "Headers",
    "InputExchange",
    "Journal",
    "JournalWriter",
    "Record",
    "TokenLog",
    "Violation",
]

_MISSING = object()


class Journal(Conformance):
    """Every request the server received, in arrival order, with respx-like queries and assertions.

    With a `limit`, only the newest `limit` records are kept (a long `serve` run or a soak test
    must not grow without bound); `dropped` counts the others, and `repr` and `format` say so.
    """

    def __init__(
        self, redacted_headers: Callable[[], frozenset[str]] | None = None, *, limit: int | None = None
    ) -> None:
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ValueError(f"journal_limit must be a positive int or None (keep everything), not {limit!r}")
        self.limit = limit
        """At most this many records are kept, the oldest dropped first; None keeps every one."""
        self.writer = JournalWriter(limit, redacted_headers or frozenset)
        """What a transport writes this journal with (`JournalWriter`); tests only read."""
        self.inputs = InputLog()
        """What tools asked the client for (elicitation, sampling, roots) and the answers (docs/input.md)."""
        self.auth = AuthLog()  # the exchanges with the authorization server, redacted (docs/auth.md)
        self.tokens = TokenLog()  # which token (by label) each MCP request carried, by its seq (docs/auth.md)

    @property
    def _records(self) -> deque[Record | tuple[Any, ...]]:
        """Records in flight, and finished ones as untracked rows (see `Record._row`)."""
        return self.writer.records

    def _view(self, item: Record | tuple[Any, ...]) -> Record:
        return self.writer.view(item)

    def _views(self) -> list[Record]:
        return self.writer.views()

    def _redacted(self) -> frozenset[str]:
        return self.writer.hidden_headers()

    def subscribe(self, callback: Callable[[Record], None]) -> Callable[[], None]:
        """Call `callback(record)` as each request is done (from the server's thread); returns an unsubscribe."""
        return self.writer.subscribe(callback)

    def clear(self) -> None:
        """Forget every record (and the count of dropped ones); numbering starts again at 1."""
        self.writer.clear()
        self.inputs, self.auth, self.tokens = InputLog(), AuthLog(), TokenLog()

    # -- reading ---------------------------------------------------------------------------------

    @property
    def dropped(self) -> int:
        """How many of the oldest records `limit` dropped."""
        try:
            first = self._records[0]
        except IndexError:
            return 0
        return (first[SEQ] if type(first) is tuple else first.seq) - 1  # type: ignore[union-attr]

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Record]:
        return iter(self._views())

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._view(item) for item in list(self._records)[index]]
        return self._view(self._records[index])

    def __repr__(self) -> str:
        dropped = self.dropped
        more = f", {dropped} dropped (journal_limit={self.limit})" if dropped else ""
        return f"<Journal {len(self._records)} records{more}>"

    @property
    def records(self) -> list[Record]:
        """A copy of all records."""
        return self._views()

    @property
    def last(self) -> Record:
        """The most recent record; IndexError if there is none."""
        try:
            return self._view(self._records[-1])
        except IndexError:
            raise IndexError("the journal is empty: the server has received no request") from None

    @property
    def called(self) -> bool:
        """Whether any request arrived."""
        return bool(self._records)

    @property
    def call_count(self) -> int:
        """How many requests arrived."""
        return len(self._records)

    def requests(
        self,
        method: str | None = None,
        *,
        tool: str | None = None,
        session_id: str | object | None = _MISSING,
        http_method: str | None = None,
        status: int | None = None,
        era: str | None = None,
    ) -> list[Record]:
        """Records matching every filter given: JSON-RPC method, tool, session id, HTTP method, status, era."""
        wanted_http = http_method.upper() if http_method is not None else None
        found = []
        for item in list(self._records):
            if type(item) is tuple:
                rpc_method, its_tool, its_session, its_http, its_status, its_era = FILTERED(item)
            else:
                record: Record = item  # type: ignore[assignment]
                rpc_method, its_tool, its_session = record.rpc_method, record.tool, record.session_id
                its_http, its_status, its_era = record.http_method, record.status, record.era
            if method is not None and rpc_method != method:
                continue
            if tool is not None and its_tool != tool:
                continue
            if session_id is not _MISSING and its_session != session_id:
                continue
            if wanted_http is not None and its_http != wanted_http:
                continue
            if status is not None and its_status != status:
                continue
            if era is not None and its_era != era:
                continue
            found.append(self._view(item))
        return found

    def calls(self, tool: str | None = None) -> list[Record]:
        """The `tools/call` records, of one tool or of all."""
        return self.requests("tools/call", tool=tool)

    def cancellations(self) -> list[tuple[Record, Record | None]]:
        """Each cancellation the client sent, as `(how, cancelled)`: `how` is the `notifications/cancelled`
        record, or the request itself when its client ended the stream (2026-07-28 over HTTP); `cancelled` is
        the request it cancels (None when the notification names no request sent before on that session)."""
        return cancellations_in(self._views())

    def cancelled(self, tool: str | None = None, *, request_id: str | int | None = None) -> list[Record]:
        """The requests the client cancelled (by `notifications/cancelled`, or in 2026-07-28 over HTTP by ending
        the request's stream), of one tool and/or with one JSON-RPC id, or all; each once, in arrival order."""
        seen: dict[int, Record] = {}
        for _how, target in self.cancellations():
            if target is None or (tool is not None and target.tool != tool):
                continue
            if request_id is not None and target.rpc_id != request_id:
                continue
            seen.setdefault(target.seq, target)
        return [seen[seq] for seq in sorted(seen)]

    @renamed_keywords(timeout="timeout_s")
    def wait_for(self, predicate: Callable[[Journal], bool], timeout_s: float = 5.0) -> None:
        """Block until `predicate(journal)` holds (re-checked as requests finish); TimeoutError after `timeout_s`."""
        with self.writer.waiting():
            reached = self.writer.changed.wait_for(lambda: predicate(self), timeout=timeout_s)
            if not reached:
                raise TimeoutError(f"the journal did not reach the expected state within {timeout_s} s")

    # -- assertions ------------------------------------------------------------------------------

    def assert_called(
        self, tool: str, *, times: int | None = None, arguments: Mapping[str, Any] | None = None
    ) -> list[Record]:
        """Assert `tool` was called (`times` times, with `arguments` if given); return the matching calls.

        On failure the message lists the calls that did arrive, so a near miss is visible.
        """
        calls = self.calls(tool)
        matching = [c for c in calls if arguments is None or c.arguments == dict(arguments)]
        if (times is None and matching) or (times is not None and len(matching) == times):
            return matching
        raise AssertionError(uncalled(self._views(), tool, arguments, times, len(matching)))

    def assert_not_called(self, tool: str) -> None:
        """Assert `tool` was never called."""
        calls = self.calls(tool)
        if calls:
            seqs = ", ".join(f"#{c.seq}" for c in calls)
            raise AssertionError(f"expected tool {tool!r} not to be called, it was called at {seqs}")

    def assert_read(self, uri: str, *, times: int | None = None) -> list[Record]:
        """Assert resource `uri` was read (`times` times, if given); return the matching `resources/read` records."""
        return self._assert_asked("resources/read", "uri", uri, None, times)

    def assert_prompted(
        self, name: str, *, arguments: Mapping[str, Any] | None = None, times: int | None = None
    ) -> list[Record]:
        """Assert prompt `name` was got (`times` times, with `arguments` if given); return the matching records."""
        return self._assert_asked("prompts/get", "name", name, arguments, times)

    def assert_input(self, tool: str, *, kind: str | None = None, answer: Any = _MISSING) -> list[InputExchange]:
        """Assert `tool` asked the client for input (`kind`: `elicit`, `sample` or `roots`) and got `answer` (as the
        client sent it, if given); return the answered exchanges (`journal.inputs` holds them all)."""
        return self.inputs.assert_input(tool, kind=kind) if answer is _MISSING else self.inputs.assert_input(
            tool, kind=kind, answer=answer
        )

    def _assert_asked(
        self, method: str, key: str, value: str, arguments: Mapping[str, Any] | None, times: int | None
    ) -> list[Record]:
        asked = [r for r in self.requests(method) if (r.params or {}).get(key) == value]
        matching = [r for r in asked if arguments is None or (r.params or {}).get("arguments") == dict(arguments)]
        if (times is None and matching) or (times is not None and len(matching) == times):
            return matching
        raise AssertionError(unasked(self.requests(method), method, value, arguments, times, len(matching)))

    def assert_cancelled(self, tool: str | None = None, *, request_id: str | int | None = None) -> list[Record]:
        """Assert the client cancelled a call of `tool` (and/or the request with JSON-RPC id `request_id`);
        return the cancelled requests. On failure the message lists what was cancelled and the calls that arrived.
        """
        found = self.cancelled(tool, request_id=request_id)
        if found:
            return found
        raise AssertionError(uncancelled(self.cancellations(), self.calls(), tool, request_id))

    # -- export ----------------------------------------------------------------------------------

    def to_jsonl(self, *, redact: bool = True) -> str:
        """One JSON line per record; credentials and required headers read '***' unless `redact=False`."""
        hidden = self._redacted()
        return "".join(dumps(r.to_json(hidden, redact=redact), default=repr) + "\n" for r in self._views())

    def to_mermaid(self, *, title: str | None = None) -> str:
        """The journal as a Mermaid sequence diagram: an arrow per request and per answer, faults and session
        changes as notes; it renders on GitHub and in the docs as it is."""
        from mcp_testkit.journal.diagram import mermaid

        return mermaid(self._views(), title=title)

    def to_html(self, path: str | os.PathLike[str], *, title: str = "mcp-testkit journal") -> Path:
        """Write the journal as one self-contained HTML page (inline SVG, CSS and script; nothing loaded from the
        network): the same diagram, each arrow opening its request's and answer's headers and bodies, redacted."""
        from mcp_testkit.journal.diagram import html_page

        target = Path(path)
        target.write_text(html_page(self._views(), title=title, hidden=self._redacted()), encoding="utf-8")
        return target

    def format(self, *, limit: int = 50) -> str:
        """The journal as one line per request, at most `limit` lines plus a count of the rest."""
        records = self._views()
        if not records:
            return "(no requests)"
        lines = [r.summary() for r in records[:limit]]
        if records[0].seq > 1:
            lines.insert(0, f"... {records[0].seq - 1} older requests dropped (journal_limit={self.limit})")
        if len(records) > limit:
            lines.append(f"... and {len(records) - limit} more requests")
        return "\n".join(lines)
