"""Wait and size faults over `serve --stdio`: NeverAnswer, Dribble, ProgressOnly, HugeResult, StopReading."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._support import INIT, INITIALIZED, LIMIT_S, StdioFault

HOLD_S = 0.5
"""How long a test lets an answer that must not come fail to come."""


def _call(request_id: int, tool: str = "hello", meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class _Stdio(StdioFault):
    """A `serve --stdio` process fed line by line, its stdout lines read by a thread into a queue."""

    def __init__(self, tmp_path: Path, fault: dict[str, Any]) -> None:
        self.lines: queue.Queue[bytes] = queue.Queue()
        super().__init__(tmp_path, fault)

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def next(self, timeout: float = LIMIT_S) -> dict[str, Any]:
        return json.loads(self.lines.get(timeout=timeout))  # type: ignore[no-any-return]

    def nothing_within(self, seconds: float) -> bool:
        try:
            self.lines.get(timeout=seconds)
        except queue.Empty:
            return True
        return False


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[Any]:
    """`stdio(fault)` starts `serve --stdio` whose one rule puts `fault` on the tool 'hello'; stopped after the test."""
    started: list[_Stdio] = []

    def start(fault: dict[str, Any]) -> _Stdio:
        server = _Stdio(tmp_path, fault)
        started.append(server)
        server.send(INIT, INITIALIZED)
        assert server.next()["id"] == 1
        return server

    yield start
    for server in started:
        server.stop()


def test_never_answer_writes_nothing_for_the_call_and_answers_the_next(stdio: Any) -> None:
    """NeverAnswer over stdio writes nothing for its call; the server goes on answering later calls."""
    server = stdio({"type": "NeverAnswer"})
    server.send(_call(2))
    assert server.nothing_within(HOLD_S)
    server.send(_call(3))
    assert server.next() == {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "hi"}]}}


def test_dribble_writes_the_whole_line_in_pieces(stdio: Any) -> None:
    """Dribble over stdio writes the normal answer line, in pieces at its rate."""
    server = stdio({"type": "Dribble", "bytes_per_s": 400})
    server.send(_call(2))
    assert server.next() == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "hi"}]}}


def test_progress_only_writes_progress_lines_and_no_answer(stdio: Any) -> None:
    """ProgressOnly over stdio writes progress notifications with the call's token, never its answer."""
    server = stdio({"type": "ProgressOnly", "interval_s": 0.01})
    server.send(_call(2, meta={"progressToken": 7}))
    seen = [server.next() for _ in range(3)]
    assert [(m["method"], m["params"]["progressToken"]) for m in seen] == [("notifications/progress", 7)] * 3


def test_huge_result_is_one_line_of_its_size(stdio: Any) -> None:
    """HugeResult over stdio writes one answer line whose text block has `size` bytes; the next call is normal."""
    size = 2 * 1024 * 1024
    server = stdio({"type": "HugeResult", "size": size})
    server.send(_call(2), _call(3))
    first, second = server.next(), server.next()
    assert first["result"]["content"] == [{"type": "text", "text": "x" * size}]
    assert second["result"]["content"] == [{"type": "text", "text": "hi"}]


def test_stop_reading_leaves_later_lines_unread(stdio: Any) -> None:
    """StopReading: the server answers neither the call nor any later line, until it is killed."""
    server = stdio({"type": "StopReading"})
    server.send(_call(2))
    server.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    assert server.nothing_within(HOLD_S)
    assert server.process.poll() is None
