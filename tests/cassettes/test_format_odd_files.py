"""Odd cassette files (issue 22, items 5 and 6): each is a one-line CassetteError naming the file and the field,
and the CLI exits 2 with that line, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_testkit.cassettes import Cassette, CassetteError

from ._support import minimal_cassette

_MARK = '"MARK"'


def _text(request: Any = None, response: Any = None) -> str:
    """A valid cassette of one exchange, as text; `"MARK"` in `request` or `response` is replaced afterwards."""
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    empty = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    return json.dumps(minimal_cassette(request or listing, response or empty))


def _call(arguments: str) -> str:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": "MARK"}}
    return _text(request=request).replace(_MARK, arguments)


ODD = {
    "deep-100k": (_call("[" * 100_000 + "]" * 100_000), "exchanges/0/request/params/arguments/0/0/0/", "nested"),
    "deep-900": (_call('{"a": ' * 900 + "1" + "}" * 900), "exchanges/0/request/params/arguments/a/a/a/", "nested"),
    "dict-next-cursor": (
        _text(response={"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": {"p": 2}}}),
        "exchanges/0/response/result/nextCursor",
        "a cursor is a string, not an object",
    ),
    "list-cursor": (
        _text(request={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": ["p2"]}}),
        "exchanges/0/request/params/cursor",
        "a cursor is a string, not an array",
    ),
    "nan": (
        _text(response={"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "x": "MARK"}}).replace(_MARK, "NaN"),
        "exchanges/0/response/result/x",
        "NaN is not JSON",
    ),
    "infinity": (_call('{"n": [1, -Infinity]}'), "exchanges/0/request/params/arguments/n/1", "Infinity is not JSON"),
    "huge-number": (_call('{"n": 1e999}'), "exchanges/0/request/params/arguments/n", "out of range"),
}


@pytest.mark.parametrize("case", sorted(ODD))
def test_an_odd_cassette_is_one_line_naming_the_file_and_the_field(case: str, tmp_path: Path) -> None:
    """A cassette nested 100k or 900 deep, a cursor that is no string, NaN or Infinity: one line, file and field."""
    text, field, said = ODD[case]
    path = tmp_path / f"{case}.json"
    path.write_text(text)
    with pytest.raises(CassetteError) as raised:
        Cassette.load(path)
    message = str(raised.value)
    assert message.startswith(f"cassette {path}: {field}"), message
    assert said in message
    assert "\n" not in message
    assert len(message) < 500


def test_a_valid_cassette_text_still_loads() -> None:
    """The odd cases above differ from a cassette that loads by their one odd value only."""
    assert len(Cassette.loads(_call('{"n": [1, 2.5, {"deep": [[["x"]]]}]}'))) == 1
    loaded = Cassette.loads(
        _text(response={"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "nextCursor": None}})
    )
    assert loaded.exchanges[0].result == {"tools": [], "nextCursor": None}


@pytest.mark.parametrize("case", ["deep-100k", "dict-next-cursor", "nan"])
@pytest.mark.parametrize("command", ["serve", "verify"])
def test_the_cli_exits_2_with_one_line(case: str, command: str, tmp_path: Path) -> None:
    """`serve --cassette` and `verify` refuse an odd cassette with exit status 2 and one line, no traceback."""
    text, field, _ = ODD[case]
    path = tmp_path / f"{case}.json"
    path.write_text(text)
    if command == "serve":
        argv = ["serve", "--cassette", str(path), "--port", "0"]
    else:
        argv = ["verify", str(path), "--upstream", "http://127.0.0.1:9/mcp"]
    command_line = [sys.executable, "-m", "mcp_testkit", *argv]
    done = subprocess.run(command_line, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"cassette {path}: {field}" in lines[0]
    assert "Traceback" not in done.stderr
