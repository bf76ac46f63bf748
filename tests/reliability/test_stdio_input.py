"""Bad input over `mcp-testkit serve --stdio`: answered with a JSON-RPC error, journaled, and the server goes on."""

from __future__ import annotations

from pathlib import Path

from ._support import STDIO_INIT, STDIO_PING, run_stdio


def test_deeply_nested_line_is_a_parse_error_and_the_server_goes_on(tmp_path: Path) -> None:
    """Item 2: a line nested 100,000 deep gets -32700 (no traceback, no exit 1) and the next line is answered."""
    deep = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
    status, answers, stderr, journal = run_stdio([STDIO_INIT, deep, STDIO_PING], tmp_path)
    assert status == 0, stderr
    assert "Traceback" not in stderr
    assert [a.get("error", {}).get("code") for a in answers] == [None, -32700, None]
    assert "deep" in answers[1]["error"]["message"]
    assert len(journal) == 3
    assert journal[1]["error"] is not None


def test_cancellation_with_an_invalid_request_id_is_ignored_over_stdio(tmp_path: Path) -> None:
    """Item 3: notifications/cancelled with a list or object requestId is ignored and journaled; no exit 1."""
    lines = [
        STDIO_INIT,
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": 1}}},
        STDIO_PING,
    ]
    status, answers, stderr, journal = run_stdio(lines, tmp_path)
    assert status == 0, stderr
    assert [a["id"] for a in answers] == [1, 2]
    assert [r["rpc_method"] for r in journal] == ["initialize", *["notifications/cancelled"] * 2, "ping"]
    assert all("ignored" in r["error"] for r in journal[1:3])


def test_a_line_over_max_body_is_answered_and_skipped(tmp_path: Path) -> None:
    """Item 8: a line longer than --max-body gets -32600 'line too long', is journaled cut, and the next is answered."""
    long_line = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + b"x" * 1_000_000 + b'"}}'
    status, answers, stderr, journal = run_stdio([STDIO_INIT, long_line, STDIO_PING], tmp_path, "--max-body", "65536")
    assert status == 0, stderr
    assert [a.get("error", {}).get("code") for a in answers] == [None, -32600, None]
    assert "line too long" in answers[1]["error"]["message"]
    assert answers[2]["id"] == 2
    assert len(journal) == 3
    assert len(journal[1]["body"]) <= 4096
    assert "cut" in journal[1]["error"]


def test_nan_and_non_utf8_lines_are_parse_errors_over_stdio(tmp_path: Path) -> None:
    """Item 10: NaN and a UTF-16 line are -32700 over stdio too, and the journal file stays strict JSON."""
    nan = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":NaN}}'
    utf16 = '{"jsonrpc":"2.0","id":4,"method":"ping"}'.encode("utf-16-le")
    status, answers, stderr, journal = run_stdio([STDIO_INIT, nan, utf16, STDIO_PING], tmp_path)
    assert status == 0, stderr
    assert [a.get("error", {}).get("code") for a in answers] == [None, -32700, -32700, None]
    assert len(journal) == 4
