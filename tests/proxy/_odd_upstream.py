"""Hypothesis strategies for an upstream that misbehaves: the raw bytes of an HTTP answer (its head, its body, an
SSE stream) and the stdout of a stdio server, each with what a correct proxy may make of it.

The client's request is always well formed: a `tools/call` of id `CALL_ID`. What varies is the upstream's answer,
from right to absurd; the test (`test_upstream_fuzz.py`) sends it and checks the proxy's answer against the case.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

CALL_ID = 7
MAX_HEAD = 4096
"""The fuzzed proxy's `max_upstream_head`: low, so that a head past it is cheap to send."""
MAX_HEADERS = 20
MAX_BODY = 16 * 1024
"""The fuzzed proxy's `max_upstream_body`: one JSON body, one SSE event, one stdout line."""


def answer(request_id: Any = CALL_ID, text: str = "ok") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def packed(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


RIGHT = packed(answer())


@dataclass(frozen=True)
class Odd:
    """One answer of the upstream: `raw`, sent as is before the connection closes.

    `status` is the status its head names (None when the status line is not one); `payload` the body as meant,
    before its framing; `sse` whether its (first) Content-Type is `text/event-stream`; `cut` whether its framing
    ends before the body does (a stream the proxy must break off too); `clean` whether the head is one a strict
    HTTP/1.1 parser takes and its framing is exact, so that the proxy must relay it or name why not."""

    family: str
    raw: bytes
    status: int | None
    payload: bytes
    sse: bool
    cut: bool = False
    clean: bool = True

    def __repr__(self) -> str:  # Hypothesis prints a failing case: its start is what says which it was
        return f"Odd({self.family}, status={self.status}, sse={self.sse}, cut={self.cut}, raw={self.raw[:300]!r})"


# -- heads -----------------------------------------------------------------------------------------------------------

_STATUSES = [200] * 8 + [201, 202, 204, 206, 299, 301, 304, 400, 404, 418, 500, 502, 503, 599, 100, 101, 103, 199]
_BAD_STATUS_LINES = [
    b"HTTP/1.1 200\r\n", b"HTTP/2 200 OK\r\n", b"ICY 200 OK\r\n", b"HTTP/1.1 2OO OK\r\n", b"HTTP/1.1 20 OK\r\n",
    b"HTTP/1.1 -200 OK\r\n", b"\r\n", b"garbage\r\n", b"HTTP/9.9 200 OK\r\n", b"HTTP/1.1  200 OK\r\n",
    b"\r\nHTTP/1.1 200 OK\r\n", b"http/1.1 200 OK\r\n", b"HTTP/1.1 600 Odd\r\n", b"HTTP/1.1 999 Odd\r\n",
    b"HTTP/1.1 000 Zero\r\n", b"HTTP/1.1 1000 Big\r\n", b"HTTP/1.1 200 OK\n", b"HTTP/1.1 200 OK\r\r\n",
]  # fmt: skip
_REASONS = [b"OK", b"", b"Odd Reason", b"caf\xc3\xa9 \x80\xff", b"r" * 300, b"tab\there"]
_CONTENT_TYPES = [b"application/json"] * 6 + [
    b"application/json; charset=utf-8", b"APPLICATION/JSON", b"text/html", b"text/plain", b"",
    b"application/json, text/event-stream", b"application/problem+json", b"application/json;", b" application/json",
]  # fmt: skip
_ODD_HEADERS = [
    b"nocolon", b" folded-continuation", b"\tfolded-tab", b"x-ctl: a\x01b", b"x-del: a\x7fb", b"x-high: \xff\xfe",
    b"x-nul: a\x00b", b"name with space: x", b": empty-name", b"x-empty:", b"X-Mixed-Case: Value",
    b"content-encoding: gzip", b"set-cookie: a=b; Path=/", b"connection: keep-alive", b"connection: upgrade",
    b"upgrade: websocket", b"trailer: x-after", b"mcp-session-id: s1", b"mcp-session-id: s2",
    b"mcp-session-id: \xe9t\xe9", b"content-type: text/event-stream", b"content-type: text/plain",
    b"x-cr: a\rb", b"x-space-before : v", b"x-semicolon;: v", b"cache-control: no-store",
    b"www-authenticate: Bearer realm=x", b"location: http://evil.example/", b"x-quote: \"unterminated",
]  # fmt: skip
_FRAMINGS = [b"length"] * 4 + [b"chunked"] * 2 + [b"close", b"chunked-extension", b"chunked-trailer"]
_BROKEN_FRAMINGS = [
    b"length-short", b"length-long", b"length-bad", b"length-twice", b"length-twice-same", b"chunked+length",
    b"te-gzip", b"te-identity", b"chunked-bad-size", b"chunked-no-end",
]  # fmt: skip
"""Framings a strict parser refuses, or that end before the body does: drawn for a quarter of the heads."""


def _chunks(data: bytes, sizes: list[int]) -> list[bytes]:
    pieces, at = [], 0
    for size in sizes:
        if at >= len(data):
            break
        pieces.append(data[at : at + size])
        at += size
    if at < len(data):
        pieces.append(data[at:])
    return pieces


def _chunked(pieces: list[bytes], end: bytes = b"0\r\n\r\n") -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for piece in pieces if piece) + end


@st.composite
def framed(draw: st.DrawFn, payload: bytes, framing: bytes | None = None) -> tuple[list[bytes], bytes, bool, bool]:
    """(the header lines that frame it, the body bytes on the wire, cut, clean) for `payload`."""
    framing = framing or draw(st.sampled_from(_BROKEN_FRAMINGS if draw(st.integers(0, 3)) == 0 else _FRAMINGS))
    size = len(payload)
    sizes = draw(st.lists(st.integers(1, 4096), min_size=1, max_size=6))
    if framing == b"length":
        return [b"content-length: %d" % size], payload, False, True
    if framing == b"close":
        return [], payload, False, True
    if framing == b"chunked":
        return [b"transfer-encoding: chunked"], _chunked(_chunks(payload, sizes)), False, True
    if framing == b"length-short":
        return [b"content-length: %d" % max(size - draw(st.integers(1, 20)), 0)], payload, False, False
    if framing == b"length-long":
        return [b"content-length: %d" % (size + draw(st.integers(1, 20)))], payload, True, True
    if framing == b"length-bad":
        value = draw(st.sampled_from([b"abc", b"-1", b"1e3", b" %d " % size, b"99999999999999999999999", b""]))
        return [b"content-length: " + value], payload, False, False
    if framing in (b"length-twice", b"length-twice-same"):
        other = size if framing == b"length-twice-same" else size + 5
        return [b"content-length: %d" % size, b"content-length: %d" % other], payload, False, False
    if framing == b"chunked+length":
        body = _chunked(_chunks(payload, sizes))
        return [b"transfer-encoding: chunked", b"content-length: %d" % len(body)], body, False, False
    if framing == b"te-gzip":
        return [b"transfer-encoding: gzip"], payload, False, False
    if framing == b"te-identity":
        return [b"transfer-encoding: identity"], payload, False, False
    if framing == b"chunked-bad-size":
        bad = draw(st.sampled_from([b"zz", b"-5", b"", b"fffffffffffffffffff", b"5;" + b"x" * 5000]))
        return [b"transfer-encoding: chunked"], bad + b"\r\n" + payload + b"\r\n0\r\n\r\n", False, False
    if framing == b"chunked-no-end":
        return [b"transfer-encoding: chunked"], _chunked(_chunks(payload, sizes), end=b""), True, True
    if framing == b"chunked-extension":
        pieces = _chunks(payload, sizes)
        body = b"".join(b"%x;name=value\r\n%s\r\n" % (len(p), p) for p in pieces if p) + b"0\r\n\r\n"
        return [b"transfer-encoding: chunked"], body, False, True
    assert framing == b"chunked-trailer"
    body = _chunked(_chunks(payload, sizes), end=b"0\r\nx-trailer: t\r\n\r\n")
    return [b"transfer-encoding: chunked"], body, False, True


_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONTROL = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")


def _refusable(line: bytes) -> bool:
    """Whether a header line is one RFC 9110 refuses (a folded line, a name that is not a token, a control byte in
    the value): a proxy may refuse the answer for it, with a 502."""
    name, colon, value = line.partition(b":")
    return not colon or not _TOKEN.fullmatch(name) or bool(_CONTROL.search(value))


@st.composite
def heads(draw: st.DrawFn) -> Odd:
    """A right answer (id `CALL_ID`) under a head drawn from right to absurd: status lines, header lines, types,
    framing."""
    clean = True
    if draw(st.integers(0, 7)):
        status = draw(st.sampled_from(_STATUSES))
        status_line = b"HTTP/1.1 %d %s\r\n" % (status, draw(st.sampled_from(_REASONS)))
        if status in (101, 600) or b"\t" in status_line or b"\x80" in status_line:
            clean = False
    else:
        status_line = draw(st.sampled_from(_BAD_STATUS_LINES))
        parts = status_line.strip().split(b" ")
        status = int(parts[1]) if status_line.startswith(b"HTTP/1.1 ") and parts[1].isdigit() else None
        clean = False
    content_type = draw(st.sampled_from([*_CONTENT_TYPES, None]))
    lines = [] if content_type is None else [b"content-type: " + content_type]
    tolerated = [line for line in _ODD_HEADERS if not _refusable(line)]
    odd = draw(st.lists(st.sampled_from(tolerated), max_size=3))
    if draw(st.integers(0, 5)) == 0:
        odd.append(draw(st.sampled_from([line for line in _ODD_HEADERS if _refusable(line)])))
    if any(_refusable(line) for line in odd):
        clean = False
    lines += odd
    many = draw(st.sampled_from([0] * 6 + [MAX_HEADERS // 2, MAX_HEADERS + 1, 3 * MAX_HEADERS]))
    lines += [b"x-many-%d: %d" % (n, n) for n in range(many)]
    if draw(st.integers(0, 7)) == 0:
        lines.append(b"x-long: " + b"v" * draw(st.integers(MAX_HEAD // 2, 2 * MAX_HEAD)))
        clean = False  # near or past max_upstream_head: relayed or a 502 naming it
    if many > MAX_HEADERS // 2:
        clean = False  # past max_upstream_headers
    framing, body, cut, framed_clean = draw(framed(RIGHT))
    order = draw(st.permutations(lines + framing)) if draw(st.booleans()) else lines + framing
    head = status_line + b"".join(line + b"\r\n" for line in order) + b"\r\n"
    if status_line.endswith(b"OK\n"):
        head = head.replace(b"\r\n", b"\n")
    first_type = next((line.split(b":", 1)[1].strip() for line in order if line.lower().startswith(b"content-type:")),
                      b"")  # fmt: skip
    sse = first_type.startswith(b"text/event-stream")
    return Odd("heads", head + body, status, RIGHT, sse, cut=cut, clean=clean and framed_clean)


# -- bodies ----------------------------------------------------------------------------------------------------------

_SHAPES = [
    {"jsonrpc": "2.0", "id": CALL_ID},
    {"jsonrpc": "2.0", "id": CALL_ID, "result": {}, "error": {"code": 1, "message": "both"}},
    {"jsonrpc": "2.0", "id": CALL_ID, "error": "not an object"},
    {"jsonrpc": "2.0", "id": CALL_ID, "error": {"code": -32000, "message": "an error answer"}},
    {"jsonrpc": "1.0", "id": CALL_ID, "result": {}},
    {"id": CALL_ID, "result": {}},
    {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": {}},
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
    {"jsonrpc": "2.0", "id": CALL_ID, "result": None},
    {"jsonrpc": "2.0", "id": CALL_ID, "result": {"content": "not a list", "isError": "yes"}},
]
_WRONG_IDS = [CALL_ID + 1, str(CALL_ID), None, True, [CALL_ID], {"id": CALL_ID}, -CALL_ID, 0]
_TEXTS = [
    b"", b" ", b"\n", b"null", b"[]", b"{}", b"0", b'"a string"', b"true", b"not json", b"<html>oops</html>",
    b"\xef\xbb\xbf" + RIGHT, RIGHT + b"\n", b"\n\t " + RIGHT + b"  ", RIGHT + RIGHT, RIGHT + b"garbage",
    b"\xff\xfe\x00", b"\x00" * 10, RIGHT.replace(b'"ok"', b'"\xc3\x28"'), RIGHT.replace(b'"ok"', b'"\\ud800"'),
    RIGHT.replace(b'"ok"', b'"\\u0000 \x01"'), RIGHT.replace(b'"ok"', b'"\x1f"'), b'{"a":1,"a":2}',
    RIGHT.replace(b"7", b"7.0"), RIGHT.replace(b"7", b"7e0"), RIGHT.replace(b"7", b"1" * 5000),
    RIGHT.replace(b'"ok"', b"1" * 5000), RIGHT.replace(b'"ok"', b"1e999"), RIGHT.replace(b'"ok"', b"-1e999"),
    RIGHT.replace(b'"ok"', b"1e-999"), RIGHT.replace(b'"ok"', b"NaN"), RIGHT.replace(b'"ok"', b"Infinity"),
    RIGHT.replace(b'"ok"', b"-Infinity"), RIGHT.replace(b'"ok"', b"nan"), json.dumps(answer()).encode("utf-16"),
    json.dumps(answer(text="é")).encode("latin-1"), RIGHT.replace(b"{", b"{ ", 1),
]  # fmt: skip


def _deep(depth: int, opener: bytes) -> bytes:
    closer = b"]" if opener == b"[" else b"}"
    inner = b'{"a":' if opener == b"{" else b"["
    return b'{"jsonrpc":"2.0","id":%d,"result":' % CALL_ID + inner * depth + b"1" + closer * depth + b"}"


@st.composite
def _body(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["text", "shape", "wrong-id", "batch", "deep", "cut", "big", "binary"]))
    if kind == "text":
        return draw(st.sampled_from(_TEXTS))
    if kind == "shape":
        return packed(draw(st.sampled_from(_SHAPES)))
    if kind == "wrong-id":
        return packed(answer(draw(st.sampled_from(_WRONG_IDS))))
    if kind == "batch":
        ids = draw(st.lists(st.sampled_from([CALL_ID, *_WRONG_IDS[:3]]), max_size=3))
        return packed([answer(one) for one in ids])
    if kind == "deep":
        return _deep(draw(st.sampled_from([120, 126, 127, 128, 129, 200, 5000])), draw(st.sampled_from([b"[", b"{"])))
    if kind == "cut":
        return RIGHT[: draw(st.integers(0, len(RIGHT) - 1))]
    if kind == "big":
        return packed(answer(text="b" * draw(st.sampled_from([MAX_BODY - 200, MAX_BODY - 60, MAX_BODY, 2 * MAX_BODY]))))
    return draw(st.binary(min_size=1, max_size=300))


@st.composite
def bodies(draw: st.DrawFn) -> Odd:
    """A body drawn from right to absurd (not JSON, cut, deep, NaN, wrong shapes and ids, batches) under a right
    head: 200 (or an error status), application/json, its length right."""
    payload = draw(_body())
    status = draw(st.sampled_from([200] * 6 + [202, 400, 500]))
    content_type = draw(st.sampled_from([b"application/json"] * 8 + [b"text/plain"]))
    framing, body, _, _ = draw(framed(payload, draw(st.sampled_from([b"length", b"length", b"chunked", b"close"]))))
    head = b"HTTP/1.1 %d X\r\ncontent-type: %s\r\n" % (status, content_type)
    head += b"".join(line + b"\r\n" for line in framing) + b"\r\n"
    return Odd("bodies", head + body, status, payload, False)


# -- SSE -------------------------------------------------------------------------------------------------------------

_NOTE = packed({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "n"}})
_PROGRESS = packed(
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
)


@st.composite
def _event(draw: st.DrawFn) -> bytes:
    """One SSE event, ended, from right to absurd."""
    end = draw(st.sampled_from([b"\n\n"] * 4 + [b"\r\n\r\n", b"\r\r", b"\n\r\n", b"\r\n\n"]))
    kind = draw(st.sampled_from(["answer", "answer", "note", "no-data", "comment", "retry", "id", "bare-data",
                                 "multiline", "not-json", "nan", "deep", "wrong-id", "other-event", "unknown-field",
                                 "huge", "nul", "bom", "empty-data"]))  # fmt: skip
    if kind == "answer":
        return b"event: message\ndata: " + RIGHT + end
    if kind == "note":
        return b"event: message\ndata: " + draw(st.sampled_from([_NOTE, _PROGRESS])) + end
    if kind == "no-data":
        return b"event: message" + end
    if kind == "comment":
        return b": keep-alive" + end
    if kind == "retry":
        return draw(st.sampled_from([b"retry: 1000", b"retry: -1", b"retry: soon"])) + end
    if kind == "id":
        return b"id: " + draw(st.sampled_from([b"1", b"", b"\xff", b"x" * 200])) + b"\ndata: " + _NOTE + end
    if kind == "bare-data":
        return b"data:" + RIGHT + end
    if kind == "multiline":
        return b"data: " + RIGHT[:10] + b"\ndata: " + RIGHT[10:] + end
    if kind == "not-json":
        return b"data: " + draw(st.sampled_from([b"not json", b"{", RIGHT[:-3], b"\xc3\x28"])) + end
    if kind == "nan":
        return b"data: " + RIGHT.replace(b'"ok"', draw(st.sampled_from([b"NaN", b"Infinity", b"1e999"]))) + end
    if kind == "deep":
        return b"data: " + _deep(draw(st.sampled_from([129, 1000])), b"[") + end
    if kind == "wrong-id":
        return b"data: " + packed(answer(draw(st.sampled_from(_WRONG_IDS)))) + end
    if kind == "other-event":
        return b"event: other\ndata: " + RIGHT + end
    if kind == "unknown-field":
        return b"weird: value\ndata: " + _NOTE + end
    if kind == "huge":
        return (
            b"data: " + packed(answer(text="h" * draw(st.sampled_from([MAX_BODY // 2, MAX_BODY, 2 * MAX_BODY])))) + end
        )
    if kind == "nul":
        return b"data: " + RIGHT.replace(b"ok", b"o\x00k") + end
    if kind == "bom":
        return b"\xef\xbb\xbfdata: " + RIGHT + end
    return b"data:" + end


@st.composite
def streams(draw: st.DrawFn) -> Odd:
    """An SSE answer of events drawn from right to absurd, perhaps cut mid-event (the stream ending with the
    connection, or its chunks without their end)."""
    events = draw(st.lists(_event(), max_size=5))
    payload = b"".join(events)
    if draw(st.integers(0, 3)) == 0:
        tail = draw(st.sampled_from([b"event: message\ndata: " + RIGHT[:20], b"data: " + RIGHT, b"data", b": c"]))
        payload += tail
    framing = draw(st.sampled_from([b"chunked"] * 3 + [b"close", b"chunked-no-end", b"length", b"length-long"]))
    lines, body, cut, _ = draw(framed(payload, framing))
    head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
    head += b"".join(line + b"\r\n" for line in lines) + b"\r\n"
    return Odd("sse", head + body, 200, payload, True, cut=cut)


# -- stdout ----------------------------------------------------------------------------------------------------------


def line_of(drawn: bytes) -> bytes:
    """A drawn stdout line as written: `<huge N>` (a stand-in, so that a failing case prints short) is a JSON string
    line of N bytes."""
    if drawn.startswith(b"<huge ") and drawn.endswith(b">"):
        return b'"' + b"h" * (int(drawn[6:-1]) - 2) + b'"'
    return drawn


@dataclass(frozen=True)
class Stdout:
    """What a stdio server writes on stdout for one `tools/call`: `lines` (raw bytes, each ended unless it is the
    last of a `partial` write), then perhaps the right answer, then perhaps its exit (`exit`: a status, or a
    negative signal number)."""

    lines: tuple[bytes, ...]
    answers: bool
    exit: int | None
    partial: bytes = b""

    def __repr__(self) -> str:
        shown = [line[:80] for line in self.lines]
        return f"Stdout({shown}, answers={self.answers}, exit={self.exit}, partial={self.partial[:80]!r})"


_STDOUT = [
    b"not json", b"", b"   ", b"\r", b"5", b'"a string"', b"[]", b"{}", b'{"foo":1}', b"null", b"true",
    b"\xef\xbb\xbf" + packed(answer(CALL_ID + 1)), _NOTE, _PROGRESS, packed(answer(CALL_ID + 1)),
    packed(answer(str(CALL_ID))), packed(answer(None)), packed(answer(True)), packed([answer()]),
    RIGHT.replace(b'"ok"', b"NaN"), _deep(1000, b"["), b"\x00\x01\x02\xff\xfe", b"\xc3\x28 invalid utf-8",
    b"Traceback (most recent call last):", b"INFO server started on stdout", b'{"jsonrpc":"2.0","id":7,"res',
    packed({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}), b"\x1b[31mred\x1b[0m",
    packed({"jsonrpc": "2.0", "method": 5}), packed({"jsonrpc": "2.0", "id": CALL_ID}),
]  # fmt: skip


@st.composite
def stdouts(draw: st.DrawFn) -> Stdout:
    """Lines a stdio server writes while it answers a call: odd, huge, binary, a partial last line, the answer or
    not, an exit or not (but never neither: a server that neither answers nor exits keeps the call waiting)."""
    lines = draw(st.lists(st.sampled_from(_STDOUT) | st.binary(max_size=100).map(lambda b: b.replace(b"\n", b"")),
                          max_size=5))  # fmt: skip
    if draw(st.integers(0, 5)) == 0:
        lines.insert(
            draw(st.integers(0, len(lines))), b"<huge %d>" % draw(st.sampled_from([MAX_BODY - 10, 2 * MAX_BODY]))
        )
    answers = draw(st.booleans())
    exit_status = (
        draw(st.sampled_from([None, None, 0, 1, 3, -9, -15])) if answers else draw(st.sampled_from([0, 1, 3, -9, -15]))
    )
    partial = (
        draw(st.sampled_from([b"", b"", b"partial", b'{"jsonrpc":"2.0","id":7,'])) if exit_status is not None else b""
    )
    return Stdout(tuple(lines), answers, exit_status, partial)
