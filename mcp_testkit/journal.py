"""The journal: one `Record` per HTTP request the server received, and the queries tests assert with."""

from __future__ import annotations

import functools
import itertools
import json
import os
import threading
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp_testkit._eras import CAPABILITIES_KEY, CLIENT_INFO_KEY, STATELESS

__all__ = ["Headers", "Journal", "Record"]

_MISSING = object()
_SECRET_NAMES = frozenset(
    {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key", "x-auth-token"}
)
_SECRET_PARTS = ("auth", "token", "key", "secret", "cookie", "session", "passw", "credential", "signature")
_NEVER_SECRET = frozenset({"mcp-session-id", "www-authenticate"})
"""Mcp-Session-Id, which tests need to see, and the challenge a server answers 401 with (it names what to send)."""
REDACTED = "***"


@functools.lru_cache(maxsize=1024)
def _secret_by_name(name: str) -> bool:
    if name in _NEVER_SECRET:
        return False
    return name in _SECRET_NAMES or any(part in name for part in _SECRET_PARTS)


def is_secret_header(name: str, required: Collection[str] = ()) -> bool:
    """The one redaction policy (the journal's and the cassettes'): known credential names, headers the server
    requires, and any name with auth, token, key, secret, cookie, session, passw, credential or signature in it
    (but Mcp-Session-Id, which tests need to see, and WWW-Authenticate, a challenge)."""
    lowered = name.lower()
    return lowered in required or _secret_by_name(lowered)


def redacted(headers: Mapping[str, str], required: Collection[str] = ()) -> dict[str, str]:
    """A copy of `headers` with the value of every secret header replaced by '***'."""
    return {name: REDACTED if is_secret_header(name, required) else value for name, value in headers.items()}


class Headers(dict[str, str]):
    """Request headers with case-insensitive lookup; names are kept lower-case.

    Its repr hides credentials (see `is_secret_header`; `required` adds the names a server
    requires), so a failing assertion never prints one; the values themselves are intact.
    """

    __slots__ = ("required",)

    def __init__(
        self, raw: Iterable[tuple[bytes, bytes]] | Mapping[str, str] = (), required: frozenset[str] = frozenset()
    ) -> None:
        self.required = required
        if isinstance(raw, Mapping):
            super().__init__((k.lower(), v) for k, v in raw.items())
            return
        pairs = raw if isinstance(raw, list) else list(raw)
        super().__init__([(name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in pairs])
        if len(self) < len(pairs):  # a header sent more than once: join its values, as HTTP allows
            dict.clear(self)
            for name, value in pairs:
                key, text = name.decode("latin-1").lower(), value.decode("latin-1")
                previous = dict.get(self, key)
                dict.__setitem__(self, key, text if previous is None else f"{previous},{text}")

    def __getitem__(self, name: str) -> str:
        return dict.__getitem__(self, name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dict.__contains__(self, name.lower())

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)

    def __repr__(self) -> str:
        return repr(redacted(self, self.required))


_UNDECODED: Any = object()


@dataclass(eq=False, slots=True, repr=False)
class Record:
    """One HTTP request as the server saw it, what it answered, and the fault applied to it.

    The JSON-RPC message and the answer are kept as the bytes that crossed the wire and decoded
    when first read, so a journal of many thousands of requests stays cheap for the server.
    """

    seq: int
    at: float
    http_method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    rpc_method: str | None = None
    rpc_id: Any = None
    tool: str | None = None
    session_id: str | None = None
    protocol_version: str | None = None
    status: int | None = None
    fault: Any = None
    executed: bool | None = None
    """For `tools/call`: whether the tool's handler ran (the ledger's view); None for other requests."""
    error: str | None = None
    """Why the request was refused or ignored, when it was (e.g. 'missing Mcp-Session-Id')."""
    era: str | None = None
    """'handshake' or 'stateless' (2026-07-28); None when the transport refused it before telling."""
    _message: Any = field(default=_UNDECODED, repr=False)
    _response: Any = field(default=None, repr=False)
    _response_raw: bytes | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in (
                "seq", "http_method", "path", "rpc_method", "rpc_id", "tool", "session_id", "era", "status", "error"
            )
        )
        headers = redacted(self.headers, getattr(self.headers, "required", ()))
        return f"Record({fields}, fault={self.fault!r}, headers={headers!r}, body={len(self.body)} bytes)"

    @property
    def message(self) -> Any:
        """The decoded JSON-RPC message (a list for a batch); None when the body is not JSON."""
        if self._message is _UNDECODED:
            from mcp_testkit._json import loads

            try:
                self._message = loads(self.body) if self.body else None
            except ValueError:
                self._message = None
        return self._message

    @message.setter
    def message(self, value: Any) -> None:
        self._message = value

    @property
    def params(self) -> dict[str, Any] | None:
        """The message's `params`, when it has an object there."""
        message = self.message
        params = message.get("params") if isinstance(message, dict) else None
        return params if isinstance(params, dict) else None

    @property
    def meta(self) -> dict[str, Any] | None:
        """The message's `params._meta`: in the stateless era its version, client info and capabilities."""
        meta = (self.params or {}).get("_meta")
        return meta if isinstance(meta, dict) else None

    @property
    def client_info(self) -> dict[str, Any] | None:
        """Who sent it, as the client says: `_meta`'s clientInfo (stateless), or `initialize`'s."""
        info = (self.meta or {}).get(CLIENT_INFO_KEY)
        if info is None and self.rpc_method == "initialize":
            info = (self.params or {}).get("clientInfo")
        return info if isinstance(info, dict) else None

    @property
    def client_capabilities(self) -> dict[str, Any] | None:
        """The client's capabilities: `_meta`'s (stateless, sent with every request), or `initialize`'s."""
        capabilities = (self.meta or {}).get(CAPABILITIES_KEY)
        if capabilities is None and self.rpc_method == "initialize":
            capabilities = (self.params or {}).get("capabilities")
        return capabilities if isinstance(capabilities, dict) else None

    @property
    def arguments(self) -> dict[str, Any] | None:
        """For `tools/call`: the arguments sent."""
        if self.rpc_method != "tools/call":
            return None
        arguments = (self.params or {}).get("arguments")
        return arguments if isinstance(arguments, dict) else None

    @property
    def response(self) -> Any:
        """The decoded answer the server sent (a JSON-RPC response, a list for a batch), if any."""
        if self._response is None and self._response_raw is not None:
            try:
                self._response = json.loads(self._response_raw)
            except ValueError:
                self._response = None
            self._response_raw = None
        return self._response

    @response.setter
    def response(self, value: Any) -> None:
        self._response = value
        self._response_raw = None

    def _status_line(self) -> str:
        """The status, marked `isError` for a tool's error result, `error CODE` for a JSON-RPC error."""
        answer = self.response if self.error is None else None  # a refusal says why in the summary
        if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
            return f"{self.status} error {answer['error'].get('code')}"
        if isinstance(answer, dict) and isinstance(answer.get("result"), dict) and answer["result"].get("isError"):
            return f"{self.status} isError"
        return str(self.status)

    def summary(self) -> str:
        """One line: seq, session, JSON-RPC method, tool, status (and `isError` or `error CODE`), fault."""
        what = self.rpc_method or ("batch" if isinstance(self.message, list) else self.http_method)
        if self.tool:
            what += f" {self.tool}"
        where = "stateless" if self.era == STATELESS else f"session={(self.session_id or '-')[:8]}"
        line = f"#{self.seq} {self.http_method} {where} {what} -> {self._status_line()}"
        if self.error:
            line += f" ({self.error})"
        if self.fault is not None:
            line += f" fault={self.fault!r}"
        return line

    def to_json(self, required: Collection[str] = (), *, redact: bool = True) -> dict[str, Any]:
        """The record as plain JSON data; secret header values become '***' (see `is_secret_header`),
        and so do those named in `required`, unless `redact` is False."""
        if redact:
            headers = redacted(self.headers, {*required, *getattr(self.headers, "required", ())})
        else:
            headers = dict(self.headers.items())
        fault = self.fault
        if fault is not None and hasattr(fault, "to_json"):
            fault = fault.to_json()
        elif fault is not None:
            fault = repr(fault)
        body: Any
        try:
            body = self.body.decode()
        except UnicodeDecodeError:
            body = self.body.hex()
        return {
            "seq": self.seq,
            "at": self.at,
            "http_method": self.http_method,
            "path": self.path,
            "headers": headers,
            "body": body if self.message is None else None,
            "message": self.message,
            "rpc_method": self.rpc_method,
            "rpc_id": self.rpc_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "session_id": self.session_id,
            "era": self.era,
            "protocol_version": self.protocol_version,
            "status": self.status,
            "response": self.response,
            "fault": fault,
            "executed": self.executed,
            "error": self.error,
        }


class Journal:
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
        self._records: deque[Record] = deque(maxlen=limit)
        self._seq = itertools.count(1)
        self._redacted = redacted_headers or frozenset
        self._changed = threading.Condition()
        self._waiting = 0
        self._subscribers: tuple[Callable[[Record], None], ...] = ()

    # -- recording (called by the server) --------------------------------------------------------

    def _append(self, record: Record) -> None:
        self._records.append(record)

    def _finish(self, record: Record) -> None:
        if self._waiting:
            with self._changed:
                self._changed.notify_all()
        for subscriber in self._subscribers:
            subscriber(record)

    def subscribe(self, callback: Callable[[Record], None]) -> Callable[[], None]:
        """Call `callback(record)` as each request is done (from the server's thread); returns an unsubscribe."""
        self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            self._subscribers = tuple(s for s in self._subscribers if s is not callback)

        return unsubscribe

    def _next_seq(self) -> int:
        return next(self._seq)

    def clear(self) -> None:
        """Forget every record (and the count of dropped ones); numbering starts again at 1."""
        self._records = deque(maxlen=self.limit)
        self._seq = itertools.count(1)

    # -- reading ---------------------------------------------------------------------------------

    @property
    def dropped(self) -> int:
        """How many of the oldest records `limit` dropped."""
        try:
            return self._records[0].seq - 1
        except IndexError:
            return 0

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[Record]:
        return iter(list(self._records))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self._records)[index]
        return self._records[index]

    def __repr__(self) -> str:
        dropped = self.dropped
        more = f", {dropped} dropped (journal_limit={self.limit})" if dropped else ""
        return f"<Journal {len(self._records)} records{more}>"

    @property
    def records(self) -> list[Record]:
        """A copy of all records."""
        return list(self._records)

    @property
    def last(self) -> Record:
        """The most recent record; IndexError if there is none."""
        if not self._records:
            raise IndexError("the journal is empty: the server has received no request")
        return self._records[-1]

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
        found = []
        for record in list(self._records):
            if method is not None and record.rpc_method != method:
                continue
            if tool is not None and record.tool != tool:
                continue
            if session_id is not _MISSING and record.session_id != session_id:
                continue
            if http_method is not None and record.http_method != http_method.upper():
                continue
            if status is not None and record.status != status:
                continue
            if era is not None and record.era != era:
                continue
            found.append(record)
        return found

    def calls(self, tool: str | None = None) -> list[Record]:
        """The `tools/call` records, of one tool or of all."""
        return self.requests("tools/call", tool=tool)

    def wait_for(self, predicate: Callable[[Journal], bool], timeout: float = 5.0) -> None:
        """Block until `predicate(journal)` holds (re-checked as requests finish); TimeoutError after `timeout`."""
        with self._changed:
            self._waiting += 1
            try:
                reached = self._changed.wait_for(lambda: predicate(self), timeout=timeout)
            finally:
                self._waiting -= 1
            if not reached:
                raise TimeoutError(f"the journal did not reach the expected state within {timeout} s")

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
        wanted = f"tool {tool!r}" + (f" with arguments {dict(arguments)!r}" if arguments is not None else "")
        expected = "at least once" if times is None else f"{times} time{'s' * (times != 1)}"
        lines = [f"expected {wanted} to be called {expected}, it was called {len(matching)} times"]
        all_calls = self.calls()
        if all_calls:
            lines.append("calls the server received:")
            lines.extend(f"  #{c.seq} {c.tool}({json.dumps(c.arguments)}) -> {c._status_line()}" for c in all_calls)
        else:
            lines.append("the server received no tools/call at all")
            methods = sorted({str(r.rpc_method or r.http_method) for r in list(self._records)})
            if methods:
                lines.append(f"requests it did receive: {', '.join(methods)}")
        raise AssertionError("\n".join(lines))

    def assert_not_called(self, tool: str) -> None:
        """Assert `tool` was never called."""
        calls = self.calls(tool)
        if calls:
            seqs = ", ".join(f"#{c.seq}" for c in calls)
            raise AssertionError(f"expected tool {tool!r} not to be called, it was called at {seqs}")

    # -- export ----------------------------------------------------------------------------------

    def to_jsonl(self, *, redact: bool = True) -> str:
        """One JSON line per record; credentials and required headers read '***' unless `redact=False`."""
        hidden = self._redacted()
        return "".join(json.dumps(r.to_json(hidden, redact=redact), default=repr) + "\n" for r in list(self._records))

    def to_mermaid(self, *, title: str | None = None) -> str:
        """The journal as a Mermaid sequence diagram: an arrow per request and per answer, faults and session
        changes as notes; it renders on GitHub and in the docs as it is."""
        from mcp_testkit._diagram import mermaid

        return mermaid(list(self._records), title=title)

    def to_html(self, path: str | os.PathLike[str], *, title: str = "mcp-testkit journal") -> Path:
        """Write the journal as one self-contained HTML page (inline SVG, CSS and script; nothing loaded from the
        network): the same diagram, each arrow opening its request's and answer's headers and bodies, redacted."""
        from mcp_testkit._diagram import html_page

        target = Path(path)
        target.write_text(html_page(list(self._records), title=title, hidden=self._redacted()), encoding="utf-8")
        return target

    def format(self, *, limit: int = 50) -> str:
        """The journal as one line per request, at most `limit` lines plus a count of the rest."""
        records = list(self._records)
        if not records:
            return "(no requests)"
        lines = [r.summary() for r in records[:limit]]
        if records[0].seq > 1:
            lines.insert(0, f"... {records[0].seq - 1} older requests dropped (journal_limit={self.limit})")
        if len(records) > limit:
            lines.append(f"... and {len(records) - limit} more requests")
        return "\n".join(lines)
