"""Starting `mcp-testkit serve` as a real subprocess, reading the line it prints, and always stopping it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2

START_TIMEOUT_S = 30.0
"""How long a server may take to print its line (a cold interpreter imports mcp, uvicorn, pydantic)."""
STOP_TIMEOUT_S = 15.0
LIMIT_S = 30.0
"""The bound of one test's client work."""

_LINE = re.compile(r"at (?P<url>http://\S+) \(")
_ADMIN = re.compile(r"admin at (?P<admin>http://\S+) with token (?P<token>[^;\s]+)")


@dataclass(eq=False)
class Served:
    """One running `mcp-testkit serve` process and what its start line said."""

    process: subprocess.Popen[bytes]
    line: str
    stderr_path: Path
    url: str = ""
    admin_url: str = ""
    token: str = ""
    _admin: httpx2.Client | None = field(default=None, repr=False)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def admin(self, token: str | None = None) -> httpx2.Client:
        """An httpx2 client on the admin API, sending the printed token (or `token`)."""
        if token is not None:
            return httpx2.Client(base_url=self.admin_url, headers={"authorization": f"Bearer {token}"}, timeout=LIMIT_S)
        if self._admin is None:
            self._admin = httpx2.Client(
                base_url=self.admin_url, headers={"authorization": f"Bearer {self.token}"}, timeout=LIMIT_S
            )
        return self._admin

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Signal the process and wait for it; its exit status (killed if it does not stop in time)."""
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT_S)
        if self.process.stdout is not None:
            self.process.stdout.close()
        return self.process.returncode


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "mcp_testkit", "serve", *args]


def first_line(process: subprocess.Popen[bytes], timeout: float = START_TIMEOUT_S) -> str:
    """The first line the process prints on stdout, waited for at most `timeout` s ('' if it exited first)."""
    assert process.stdout is not None
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        process.kill()
        reader.join(STOP_TIMEOUT_S)
        raise TimeoutError(f"mcp-testkit serve printed no line within {timeout} s")
    return lines[0].decode() if lines else ""


def start(tmp_path: Path, *args: str, env: dict[str, Any] | None = None) -> Served:
    """Start `mcp-testkit serve ARGS` over HTTP and parse its start line; the caller must `stop()` it."""
    stderr_path = tmp_path / f"serve-{len(list(tmp_path.glob('serve-*.err')))}.err"
    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(
            command(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **(env or {})},
        )
    served = Served(process, "", stderr_path)
    try:
        served.line = first_line(process)
    except BaseException:
        served.stop(signal.SIGKILL)
        raise
    found = _LINE.search(served.line)
    if found is None:
        served.stop(signal.SIGKILL)
        raise AssertionError(f"no URL in the start line {served.line!r}; stderr: {served.stderr}")
    served.url = found["url"]
    admin = _ADMIN.search(served.line)
    if admin is not None:
        served.admin_url, served.token = admin["admin"], admin["token"]
    return served


def run_refused(*args: str, timeout: float = START_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run a `serve` command line that must refuse to start; its exit status and output."""
    return subprocess.run(command(*args), capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


async def journal_lines(path: Path, until: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
    """The journal file's lines once `until(lines)` holds, re-read until LIMIT_S runs out.

    A file another process appends to offers no event to wait on, so this re-reads it: the
    server writes a record just after it sent the answer, and the client may read that first.
    """
    with anyio.fail_after(LIMIT_S):
        while True:
            file = anyio.Path(path)
            text = await file.read_text(encoding="utf-8") if await file.exists() else ""
            lines = [json.loads(line) for line in text.splitlines() if line.endswith("}")]
            if until(lines):
                return lines
            await anyio.sleep(0.02)


INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class StdioFault:
    """A `serve --stdio` process whose one rule puts `fault` on the tool 'hello' (which returns 'hi'), fed JSON lines;
    a subclass reads its stdout in `_read`, on a thread, and sets up what `_read` fills before calling this."""

    def __init__(self, folder: Path, fault: dict[str, Any], *, journal: Path | None = None) -> None:
        scenario = folder / "scenario.json"
        tools = [{"name": "hello", "returns": "hi"}]
        scenario.write_text(json.dumps({"name": "s", "tools": tools, "faults": [{"fault": fault, "tool": "hello"}]}))
        journaled = ("--journal", str(journal)) if journal is not None else ()
        self.process = subprocess.Popen(
            command("--stdio", "--scenario", str(scenario), *journaled),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        raise NotImplementedError

    def send(self, *messages: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(STOP_TIMEOUT_S)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
