"""Faults at the level of bytes over `serve --stdio`: Latency, Bandwidth, Slice, LimitData and StdoutNoise as the
client reads stdout's bytes, with the journal's notes; ResetPeer and SlowClose refused with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ._support import INIT, INITIALIZED, LIMIT_S, STOP_TIMEOUT_S, StdioFault, command

CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {}}}
ANSWER = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"hi"}]}}\n'


class _Stdio(StdioFault):
    """A `serve --stdio` process whose stdout bytes a thread collects as they come, and its journal file."""

    def __init__(self, tmp_path: Path, fault: dict[str, Any]) -> None:
        self.journal = tmp_path / "journal.jsonl"
        self.data = b""
        self.changed = threading.Condition()
        self.ended = False
        super().__init__(tmp_path, fault, journal=self.journal)

    def _read(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while piece := os.read(fd, 65536):
            with self.changed:
                self.data += piece
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def until(self, lines: int) -> bytes:
        """Stdout once it holds `lines` lines (or ended); fails the test after LIMIT_S."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.data.count(b"\n") >= lines or self.ended, LIMIT_S)
            return self.data

    def until_end(self) -> bytes:
        with self.changed:
            assert self.changed.wait_for(lambda: self.ended, LIMIT_S)
            return self.data

    def notes(self) -> list[str | None]:
        """The journal's error notes of the calls of 'hello' (the journal is written as each record finishes)."""
        deadline = time.monotonic() + LIMIT_S
        while time.monotonic() < deadline:
            if self.journal.exists():
                records = [json.loads(line) for line in self.journal.read_text().splitlines()]
                calls = [r for r in records if r.get("tool") == "hello"]
                if calls:
                    return [r.get("error") for r in calls]
            time.sleep(0.01)
        raise AssertionError("no call of 'hello' in the journal")


@pytest.fixture
def stdio(tmp_path: Path) -> Iterator[Any]:
    """`stdio(fault)` starts `serve --stdio` with `fault` on the tool 'hello', initialized; stopped after the test."""
    started: list[_Stdio] = []

    def start(fault: dict[str, Any]) -> _Stdio:
        server = _Stdio(_fresh(tmp_path, len(started)), fault)
        started.append(server)
        server.send(INIT, INITIALIZED)
        server.until(1)
        return server

    yield start
    for server in started:
        server.stop()


def _fresh(tmp_path: Path, number: int) -> Path:
    folder = tmp_path / str(number)
    folder.mkdir()
    return folder


def _after_initialize(data: bytes) -> bytes:
    return data.split(b"\n", 1)[1]


def test_latency_writes_the_line_late(stdio: Any) -> None:
    """Latency over stdio: the normal answer line, no sooner than the delay; the journal notes the delay."""
    server = stdio({"type": "Latency", "mean_s": 0.2, "seed": 4})
    started = time.monotonic()
    server.send(CALL)
    data = server.until(2)
    assert time.monotonic() - started >= 0.2
    assert _after_initialize(data) == ANSWER
    assert server.notes() == ["answered after a latency of 0.2 s by a fault (Latency, seed 4)"]


def test_slice_writes_the_line_in_the_pieces_its_seed_draws(stdio: Any) -> None:
    """Slice over stdio: the bytes join to the normal line; two processes with one seed write the same pieces."""
    notes = []
    for _ in range(2):
        server = stdio({"type": "Slice", "seed": 12, "pieces": 3, "gap_s": 0.02})
        server.send(CALL)
        assert _after_initialize(server.until(2)) == ANSWER
        notes += server.notes()
    assert notes[0] == notes[1]
    assert notes[0] is not None
    assert notes[0].endswith("bytes by a fault (Slice, seed 12)")
    sizes = notes[0].split("writes of ")[1].split(" bytes")[0].split(", ")
    assert sum(int(size) for size in sizes) == len(ANSWER)
    assert len(sizes) == 3


def test_bandwidth_writes_the_whole_line_at_its_rate(stdio: Any) -> None:
    """Bandwidth over stdio: the normal line, taking at least the rate's time."""
    server = stdio({"type": "Bandwidth", "bytes_per_s": 400})
    started = time.monotonic()
    server.send(CALL)
    assert _after_initialize(server.until(2)) == ANSWER
    assert time.monotonic() - started >= (len(ANSWER) // 20 - 1) * 0.05
    assert server.notes() == ["answered at 400 bytes/s by a fault (Bandwidth)"]


def test_limit_data_writes_that_many_bytes_and_ends_stdout(stdio: Any) -> None:
    """LimitData over stdio: exactly N bytes of the answer's line, then stdout ends and the process exits 1."""
    server = stdio({"type": "LimitData", "bytes": 25})
    server.send(CALL)
    data = server.until_end()
    assert _after_initialize(data) == ANSWER[:25]
    assert server.process.wait(STOP_TIMEOUT_S) == 1
    assert server.notes() == [
        "sent 25 bytes of the answer, then closed the connection, by a fault (LimitData(25)); "
        "the server exited with status 1 by a fault"
    ]


def test_stdout_noise_writes_log_lines_before_the_answer(stdio: Any) -> None:
    """StdoutNoise: its log lines come on stdout before the answer line, which is unchanged."""
    server = stdio({"type": "StdoutNoise", "lines": ["INFO ready", "DEBUG call"]})
    server.send(CALL)
    assert _after_initialize(server.until(4)) == b"INFO ready\nDEBUG call\n" + ANSWER
    assert server.notes() == ["2 log lines on stdout before the answer by a fault (StdoutNoise)"]


@pytest.mark.parametrize("fault", ["ResetPeer", "SlowClose"])
def test_http_only_byte_faults_are_refused_over_stdio(tmp_path: Path, fault: str) -> None:
    """`serve --stdio` refuses ResetPeer and SlowClose with one line naming the fault, before serving (status 2)."""
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"faults": [{"fault": {"type": fault}}]}))
    done = subprocess.run(
        command("--stdio", "--scenario", str(scenario)),
        input=b"",
        capture_output=True,
        timeout=LIMIT_S,
        check=False,
    )
    assert done.returncode == 2
    assert f"{fault} means nothing over stdio (it is an HTTP fault)" in done.stderr.decode()
    assert done.stdout == b""


# -- the SDK's stdio client -------------------------------------------------------------------------------------------


def _sdk_params(tmp_path: Path, fault: dict[str, Any]) -> Any:
    from mcp import StdioServerParameters

    scenario = tmp_path / "sdk.json"
    tools = [{"name": "hello", "returns": "hi"}]
    scenario.write_text(json.dumps({"name": "b", "tools": tools, "faults": [{"fault": fault, "tool": "hello"}]}))
    args = ["-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario)]
    return StdioServerParameters(command=sys.executable, args=args)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fault",
    [
        {"type": "Latency", "mean_s": 0.05, "seed": 1},
        {"type": "Bandwidth", "bytes_per_s": 2000},
        {"type": "Slice", "seed": 2, "gap_s": 0.005},
        {"type": "StdoutNoise", "lines": ["INFO ready", "DEBUG call"]},
    ],
    ids=lambda fault: fault["type"],
)
async def test_the_sdk_stdio_client_gets_the_answer_through_shaped_bytes(tmp_path: Path, fault: dict[str, Any]) -> None:
    """The SDK's stdio client returns the normal result through a late, paced or sliced line, and skips log lines
    on stdout."""
    import anyio
    from mcp import Client

    with anyio.fail_after(LIMIT_S):
        async with Client(_sdk_params(tmp_path, fault), mode="legacy") as client:
            result = await client.call_tool("hello", {})
    assert result.content[0].text == "hi"  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_the_sdk_stdio_client_fails_when_stdout_ends_mid_line(tmp_path: Path) -> None:
    """LimitData over stdio: the SDK's stdio client gets half a line and the end of stdout; its call fails."""
    import anyio
    from mcp import Client

    with anyio.fail_after(LIMIT_S):
        with pytest.raises(Exception) as caught:  # noqa: PT011 - what the SDK raises is shown below
            async with Client(_sdk_params(tmp_path, {"type": "LimitData", "bytes": 25}), mode="legacy") as client:
                await client.call_tool("hello", {})
    from mcp import MCPError

    assert caught.group_contains(MCPError, match="Connection closed")
