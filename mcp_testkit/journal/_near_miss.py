"""What a journal's assertions say when they fail: the near miss (the calls, reads or cancellations the server did
receive, beside what was expected), so that a failing test shows what happened; and the cancellations a journal holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mcp_testkit.journal._record import Record

__all__ = ["cancellations_in", "unasked", "uncalled", "uncancelled"]


def _expected(times: int | None) -> str:
    return "at least once" if times is None else f"{times} time{'s' * (times != 1)}"


def cancellations_in(records: Sequence[Record]) -> list[tuple[Record, Record | None]]:
    """`Journal.cancellations`: each cancellation the client sent, as `(how, cancelled)`, in arrival order."""
    found: list[tuple[Record, Record | None]] = []
    for index, record in enumerate(records):
        named = record.cancels
        if named is None:
            continue
        target = next(
            (
                earlier
                for earlier in reversed(records[:index])
                if earlier.rpc_id == named
                and earlier.session_id == record.session_id
                and earlier.rpc_method is not None
                and not earlier.rpc_method.startswith("notifications/")
            ),
            None,
        )
        found.append((record, target))
    named_seqs = {target.seq for _, target in found if target is not None}
    found.extend(
        (record, record)
        for record in records
        if record.cancelled_by_client and record.rpc_method is not None and record.seq not in named_seqs
    )
    return sorted(found, key=lambda pair: pair[0].seq)


def uncalled(
    records: Sequence[Record], tool: str, arguments: Mapping[str, Any] | None, times: int | None, matched: int
) -> str:
    """Why `assert_called` failed: how often `tool` was called, and the calls (or requests) that did arrive."""
    wanted = f"tool {tool!r}" + (f" with arguments {dict(arguments)!r}" if arguments is not None else "")
    lines = [f"expected {wanted} to be called {_expected(times)}, it was called {matched} times"]
    all_calls = [r for r in records if r.rpc_method == "tools/call"]
    if all_calls:
        lines.append("calls the server received:")
        lines.extend(f"  #{c.seq} {c.tool}({json.dumps(c.arguments)}) -> {c._status_line()}" for c in all_calls)
    else:
        lines.append("the server received no tools/call at all")
        methods = sorted({str(r.rpc_method or r.http_method) for r in records})
        if methods:
            lines.append(f"requests it did receive: {', '.join(methods)}")
    return "\n".join(lines)


def unasked(
    every: Sequence[Record],
    method: str,
    value: str,
    arguments: Mapping[str, Any] | None,
    times: int | None,
    matched: int,
) -> str:
    """Why `assert_read` or `assert_prompted` failed: the `method` requests that did arrive."""
    wanted = f"{method} of {value!r}" + (f" with arguments {dict(arguments)!r}" if arguments is not None else "")
    lines = [f"expected {wanted} {_expected(times)}, it came {matched} times"]
    if every:
        lines.append(f"the {method} requests the server received:")
        lines.extend(f"  #{r.seq} {json.dumps(r.params)} -> {r._status_line()}" for r in every)
    else:
        lines.append(f"the server received no {method} at all")
    return "\n".join(lines)


def uncancelled(
    cancellations: Sequence[tuple[Record, Record | None]],
    calls: Sequence[Record],
    tool: str | None,
    request_id: str | int | None,
) -> str:
    """Why `assert_cancelled` failed: the cancellations and the calls that did arrive."""
    wanted = " and ".join(
        part
        for part in (
            f"a call of tool {tool!r}" if tool is not None else "",
            f"request id {request_id!r}" if request_id is not None else "",
        )
        if part
    ) or "a request"
    lines = [f"expected the client to cancel {wanted}, it did not"]
    if cancellations:
        lines.append("cancellations the server received:")
        for how, target in cancellations:
            named = "the request's stream closed" if how is target else f"#{how.seq} {how.rpc_method}"
            what = f"#{target.seq} {target.rpc_method} {target.tool or ''}".rstrip() if target else "no request"
            lines.append(f"  {named} -> {what} (id {how.cancels if how is not target else target.rpc_id!r})")
    else:
        lines.append("the server received no cancellation at all")
    if calls:
        lines.append("calls the server received:")
        lines.extend(f"  #{c.seq} {c.tool} id={c.rpc_id!r} -> {c._status_line()}" for c in calls)
    return "\n".join(lines)
