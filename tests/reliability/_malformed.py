"""Hypothesis strategies for malformed MCP traffic: HTTP requests (as raw bytes) and stdio lines."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

MAX_BODY = 16 * 1024
"""The max_body of the fuzzed servers: small, so that oversized bodies are cheap to send."""
LIVE = "<live session>"
"""Stands for the id of a live session, filled in when the request is sent."""

_METHODS = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "logging/setLevel",
    "server/discover",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "resources/list",
    "",
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
_ids = st.one_of(st.integers(), st.text(max_size=6), st.none(), st.booleans(), st.floats(allow_nan=False), json_values)


@st.composite
def _messages(draw: st.DrawFn) -> Any:
    """A JSON-RPC-like message: right or wrong in any field."""
    message: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        message["jsonrpc"] = draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2]))
    if draw(st.integers(0, 5)):
        message["method"] = draw(st.sampled_from(_METHODS) | st.text(max_size=10) | json_values)
    if draw(st.booleans()):
        message["id"] = draw(_ids)
    if draw(st.integers(0, 3)):
        name = draw(st.sampled_from(["echo", "match", "defs", "nope"]) | st.text(max_size=6) | json_values)
        params = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "name": st.just(name),
                    "arguments": json_values,
                    "cursor": st.text(max_size=20) | json_values,
                    "requestId": _ids,
                    "protocolVersion": st.sampled_from(["2025-11-25", "2025-03-26", "1.0"]) | json_values,
                    "capabilities": json_values,
                    "clientInfo": json_values,
                    "level": st.sampled_from(["debug", "nope"]) | json_values,
                    "_meta": json_values,
                },
            )
        )
        message["params"] = draw(st.just(params) | json_values)
    if draw(st.integers(0, 7)) == 0:
        message["result" if draw(st.booleans()) else "error"] = draw(json_values)
    return message


def _deep(depth: int, opener: bytes) -> bytes:
    closer = b"]" if opener == b"[" else b"}"
    inner = b'{"a":' if opener == b"{" else b"["
    return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + inner * depth + b"1" + (closer * depth) + b"}"


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """A body (or a stdio line) that is anything from right to absurd."""
    kinds = ["message"] * 3 + ["batch", "json", "deep", "constant", "encoding", "bytes", "cut", "huge", "empty"]
    kind = draw(st.sampled_from(kinds))
    if kind == "message":
        return json.dumps(draw(_messages())).encode()
    if kind == "batch":
        return json.dumps(draw(st.lists(_messages(), max_size=4))).encode()
    if kind == "json":
        return json.dumps(draw(json_values)).encode()
    if kind == "deep":
        depth = draw(st.integers(500, MAX_BODY // 2 - 100))  # deep enough for the decoder, small enough to be read
        if draw(st.booleans()):
            return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + b"[" * depth + b"]" * depth + b"}}"
        return b'{"a":' * depth + b"1" + b"}" * depth
    if kind == "constant":
        constant = draw(st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-0", b"1E400"]))
        head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":'
        return head + constant + b"}}}"
    if kind == "encoding":
        encoding = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1", "utf-8-sig"]))
        return json.dumps(draw(_messages()), ensure_ascii=False).encode(encoding, errors="replace")
    if kind == "bytes":
        return draw(st.binary(min_size=1, max_size=200))
    if kind == "cut":
        data = json.dumps(draw(_messages())).encode()
        return data[: draw(st.integers(0, max(len(data) - 1, 0)))]
    if kind == "huge":
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * draw(
            st.integers(MAX_BODY - 100, 3 * MAX_BODY)
        ) + b'"}}'
    return b""


@st.composite
def http_requests(draw: st.DrawFn, port: int) -> tuple[str, str, list[tuple[str, str]], bytes]:
    """(HTTP method, path, headers, body): a request a bridge, a browser or an attacker might send."""
    method = draw(st.sampled_from(["POST"] * 6 + ["GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD", "TRACE"]))
    paths = ["/mcp"] * 8 + ["/mcp/", "/", "/other", "/mcp?x=1", "/MCP", "/%2e%2e/mcp", "/_testkit"]
    path = draw(st.sampled_from(paths))
    headers: list[tuple[str, str]] = []
    host = draw(st.sampled_from(["ok"] * 6 + ["LOCALHOST", "missing", "twice", "evil", "ipv6", "empty", "port-less"]))
    hosts = {
        "ok": [f"127.0.0.1:{port}"],
        "LOCALHOST": [f"LOCALHOST:{port}"],
        "missing": [],
        "twice": [f"127.0.0.1:{port}", f"127.0.0.1:{port}"],
        "evil": ["evil.example"],
        "ipv6": [f"[::1]:{port}"],
        "empty": [""],
        "port-less": ["localhost"],
    }[host]
    headers += [("Host", value) for value in hosts]
    accept = draw(
        st.sampled_from(
            ["application/json, text/event-stream"] * 5
            + ["application/json", "text/event-stream", "*/*", "", "text/html", None]
        )
    )
    if accept is not None:
        headers.append(("Accept", accept))
    content_type = draw(
        st.sampled_from(
            ["application/json"] * 5
            + ["application/json; charset=utf-16", "text/plain", "", "APPLICATION/JSON", None, "application/json;;"]
        )
    )
    if content_type is not None:
        headers.append(("Content-Type", content_type))
    session = draw(st.sampled_from([LIVE] * 5 + [None, "0" * 32, "not a session", ""]))
    if session is not None:
        headers.append(("Mcp-Session-Id", session))
    version = draw(st.sampled_from(["2025-11-25"] * 4 + [None, "2025-03-26", "2025-06-18", "2026-07-28", "x", ""]))
    if version is not None:
        headers.append(("MCP-Protocol-Version", version))
    origin = draw(st.sampled_from([None] * 6 + ["http://localhost", "http://evil.example", "null", "::::", "http://[::1"]))
    if origin is not None:
        headers.append(("Origin", origin))
    if draw(st.integers(0, 9)) == 0:
        headers.append(("Authorization", "Bearer fuzz-token"))
    headers.append(("Connection", "close"))
    body = draw(bodies()) if method in ("POST", "PUT", "PATCH") or draw(st.integers(0, 9)) == 0 else b""
    return method, path, headers, body


stdio_lines = bodies().map(lambda data: data.replace(b"\n", b" ").replace(b"\r", b" "))
"""A stdio line: any body, with its line breaks turned into spaces (a line break would make two lines)."""
