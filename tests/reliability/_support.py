"""Raw HTTP/1.1 over a socket (for requests no HTTP client would send) and `serve --stdio` runs."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIMIT_S = 20.0
"""Bounds one exchange; generous, since it only stops a broken test from hanging, it never decides a pass."""
ACCEPT = "application/json, text/event-stream"
LATEST = "2025-11-25"


@dataclass
class Reply:
    """One HTTP answer read off a socket."""

    status: int
    headers: dict[str, str]
    body: bytes
    raw: bytes = field(repr=False, default=b"")

    def json(self) -> Any:
        return json.loads(self.body)


def parse_reply(data: bytes) -> Reply:
    """Parse the first HTTP response in `data` (Content-Length, chunked, or read to the end)."""
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body, left = b"", rest
        while left:
            size_line, _, left = left.partition(b"\r\n")
            size = int(size_line.split(b";")[0] or b"0", 16)
            if size == 0:
                break
            body, left = body + left[:size], left[size + 2 :]
        return Reply(status, headers, body, data)
    if "content-length" in headers:
        return Reply(status, headers, rest[: int(headers["content-length"])], data)
    return Reply(status, headers, rest, data)


def _complete(data: bytes) -> bool:
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        return rest.endswith(b"0\r\n\r\n")
    for line in lowered.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            return len(rest) >= int(line.split(b":", 1)[1])
    return False


def exchange(port: int, request: bytes, *, host: str = "127.0.0.1", timeout: float = LIMIT_S) -> Reply:
    """Send raw bytes on a fresh connection and read one whole response (or to the end of the stream)."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        data = b""
        while not _complete(data):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    if not data:
        raise ConnectionError("the server closed the connection without an answer")
    return parse_reply(data)


def http_request(
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes = b"",
    *,
    content_length: bool = True,
) -> bytes:
    """The bytes of one HTTP/1.1 request, headers sent exactly as given (no Host added)."""
    lines = [f"{method} {path} HTTP/1.1"]
    lines += [f"{name}: {value}" for name, value in headers]
    if content_length and body and not any(name.lower() == "content-length" for name, _ in headers):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def post_headers(port: int, session_id: str | None = None, **extra: str) -> list[tuple[str, str]]:
    """The headers of a well-formed POST to the endpoint, with `extra` added (as given, not merged)."""
    headers = [
        ("Host", f"127.0.0.1:{port}"),
        ("Accept", ACCEPT),
        ("Content-Type", "application/json"),
        ("Connection", "close"),
    ]
    if session_id is not None:
        headers += [("Mcp-Session-Id", session_id), ("MCP-Protocol-Version", LATEST)]
    headers += [(name.replace("_", "-"), value) for name, value in extra.items()]
    return headers


def initialize(port: int) -> str:
    """Open a session over a raw socket; its id."""
    params = {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode()
    reply = exchange(port, http_request("POST", "/mcp", post_headers(port), body))
    assert reply.status == 200, reply
    session_id = reply.headers["mcp-session-id"]
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert exchange(port, http_request("POST", "/mcp", post_headers(port, session_id), note)).status == 202
    return session_id


def ping(port: int, session_id: str, request_id: int = 99) -> dict[str, Any]:
    """A ping on the session over a raw socket; the JSON-RPC response."""
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()
    reply = exchange(port, http_request("POST", "/mcp", post_headers(port, session_id), body))
    assert reply.status == 200, reply
    return reply.json()  # type: ignore[no-any-return]


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_testkit", "serve", *args]


def run_stdio(lines: list[Any], tmp_path: Path, *args: str) -> tuple[int, list[Any], str, list[dict[str, Any]]]:
    """Run `serve --stdio` on these lines (bytes as given, else JSON); exit status, answers, stderr, journal."""
    journal = tmp_path / "stdio.jsonl"
    journal.unlink(missing_ok=True)
    data = b"".join((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines)
    done = subprocess.run(
        serve_command("--stdio", "--journal", str(journal), *args), input=data, capture_output=True, timeout=120
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    records = [json.loads(line) for line in journal.read_text().splitlines()] if journal.exists() else []
    return done.returncode, answers, done.stderr.decode(errors="replace"), records


STDIO_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
STDIO_PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


INNER_INI = """
[pytest]
addopts = --strict-markers -p no:cacheprovider -p no:benchmark
asyncio_default_fixture_loop_scope = function
"""
"""The ini of inner pytest runs (pytester): strict markers, and pytest-asyncio's loop scope set (it warns if unset)."""


@contextmanager
def serve_process(*args: str) -> Iterator[tuple[str, str, str]]:
    """Run `mcp-testkit serve ARGS` over HTTP; yields (url, admin url, admin token), the last two '' without --admin."""
    process = subprocess.Popen(
        serve_command(*args), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        url = re.search(r" at (http://\S+) \(", line)
        assert url is not None, line
        admin = re.search(r"admin at (http://\S+) with token ([^;\s]+)", line)
        yield url[1], admin[1] if admin else "", admin[2] if admin else ""
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(LIMIT_S)
        if process.stdout is not None:
            process.stdout.close()
