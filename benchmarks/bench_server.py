"""``tools/call`` throughput of TestMcpServer against its ceiling and the official SDK server.

Run it from the repository root::

    sudo apt-get install -y wrk                   # the load generator (Debian/Ubuntu)
    python benchmarks/bench_server.py             # 3 interleaved rounds of 5 s per server
    python benchmarks/bench_server.py --quick     # 1 round of 2 s per server
    python benchmarks/bench_server.py --baseline main   # before/after in one run: main's code beside this one
    python benchmarks/bench_server.py --baseline /path/to/an/older/checkout

Each server runs under uvicorn (httptools, uvloop when installed, 127.0.0.1, a free port) in
its own process (``benchmarks/_serve.py``), so the load generator never shares a process or
an event loop with the server it measures.  For each server the script opens a session with
httpx2 (``initialize``, then ``notifications/initialized``), checks one ``tools/call`` answer,
and then lets ``wrk -t1 -c8`` post the call with the session headers, a fresh JSON-RPC id each
time.  A Lua ``response`` callback counts every answer that is not a 200 or lacks the echoed
text, and the run fails on any such answer or on connections left waiting (Little's law).

Rows: a bare Starlette JSON echo (the ceiling of the stack), the SDK's ``MCPServer`` with JSON
and with SSE answers, and ``TestMcpServer`` with JSON and with SSE answers, each in both protocol
eras: the handshake era (a session, as above) and the stateless era of 2026-07-28 (no session: a
``server/discover`` check first, then every call carries ``_meta`` and the ``Mcp-Method`` and
``Mcp-Name`` headers; the SDK server serves these through its stateless per-request path); with
``--baseline DIR`` or ``--baseline REF``, also TestMcpServer as the checkout in DIR, or the git
commit REF of this repository (exported with ``git archive`` into a temporary directory), has it
(in the eras measured, before/after in one run); and a replay of a cassette of 1,000 recorded calls and the recording
proxy, in both eras (docs/cassettes.md).  Every server is measured
``--rounds`` times, interleaved, and its best round is kept, since other load on the
machine only ever slows a round down; the server's own CPU time per call, which such load
hardly changes, is printed beside it as a cross-check, and so is wrk's CPU use.  Figures
compare with each other within one run only (DESIGN.md section 8).  The exit status is 2 when
a server could not be measured and, with ``--strict``, 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import io
import json
import os
import platform
import re
import resource
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import httpx2

if TYPE_CHECKING:
    from collections.abc import Iterator

HERE = Path(__file__).resolve().parent
SERVE = HERE / "_serve.py"
PROTOCOL_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
ECHO_TEXT = "bench-echo-7f3a"
ACCEPT = "application/json, text/event-stream"
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "echo", "arguments": {"text": ECHO_TEXT}},
}
STARTUP_TIMEOUT = 30.0
PR_SET_PDEATHSIG = 1
STARVED = 0.5  # CPU share of a server below which its round says more about other load than about it

META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench_server", "version": "1"},
}
ERAS = ("handshake", "stateless")

# (label, server kind for _serve.py, framing, era)
ROWS = [
    ("Starlette echo (ceiling)", "ceiling", "json", "handshake"),
    ("SDK MCPServer", "sdk", "json", "handshake"),
    ("SDK MCPServer", "sdk", "sse", "handshake"),
    ("TestMcpServer", "testkit", "json", "handshake"),
    ("TestMcpServer", "testkit", "sse", "handshake"),
    ("SDK MCPServer", "sdk", "json", "stateless"),
    ("SDK MCPServer", "sdk", "sse", "stateless"),
    ("TestMcpServer", "testkit", "json", "stateless"),
    ("TestMcpServer", "testkit", "sse", "stateless"),
    ("TestMcpServer replay, 1,000 calls", "replay", "json", "handshake"),
    ("recording proxy, TestMcpServer", "proxy", "json", "handshake"),
    ("TestMcpServer replay, 1,000 calls", "replay", "json", "stateless"),
    ("recording proxy, TestMcpServer", "proxy", "json", "stateless"),
]

WRK_SCRIPT = """\
-- Written by bench_server.py: POST tools/call with the session headers, a fresh JSON-RPC id
-- each time (servers route answers by id), and count the answers that are not right.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "{accept}"
wrk.headers["Mcp-Session-Id"] = {session}
wrk.headers["MCP-Protocol-Version"] = "{version}"
wrk.headers["Mcp-Method"] = {method}
wrk.headers["Mcp-Name"] = {name}
local body_head = {body_head}
local body_tail = {body_tail}

local threads = {{}}
function setup(thread)
  table.insert(threads, thread)
end

local next_id = 0
function request()
  next_id = next_id + 1
  return wrk.format(nil, nil, nil, body_head .. next_id .. body_tail)
end

bad_status = 0
bad_body = 0
first_bad = ""
function response(status, headers, body)
  if status ~= 200 then
    bad_status = bad_status + 1
    if first_bad == "" then first_bad = "status " .. status .. ": " .. string.sub(body or "", 1, 200) end
  elseif not string.find(body or "", "{echo}", 1, true) then
    bad_body = bad_body + 1
    if first_bad == "" then first_bad = "body: " .. string.sub(body or "", 1, 200) end
  end
end

function done(summary, latency, requests)
  local statuses, bodies, first = 0, 0, ""
  for _, thread in ipairs(threads) do
    statuses = statuses + thread:get("bad_status")
    bodies = bodies + thread:get("bad_body")
    if first == "" then first = thread:get("first_bad") end
  end
  io.write(string.format("BENCH requests=%d duration_us=%d bad_status=%d bad_body=%d "
    .. "connect_errors=%d read_errors=%d write_errors=%d timeouts=%d "
    .. "mean_us=%d p50_us=%d p99_us=%d\\n",
    summary.requests, summary.duration, statuses, bodies, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout,
    latency.mean, latency:percentile(50), latency:percentile(99)))
  io.write("BENCH_FIRST_BAD " .. first .. "\\n")
end
"""


def _die_with_parent() -> None:
    """In a child before exec: have Linux send SIGTERM to it when the benchmark dies, even by SIGKILL."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: _serve.py still stops on EOF of its stdin
        pass


class BenchError(RuntimeError):
    """A server could not be started, handshaken or measured."""


@dataclass
class Result:
    label: str
    kind: str
    framing: str
    era: str = "handshake"
    calls_per_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    cpu_us_per_call: float | None = None
    cpu_busy: float | None = None
    wrk_busy: float | None = None
    error: str | None = None
    rounds: list[float] = field(default_factory=list)


def lua_string(text: str) -> str:
    """A Lua long-bracket string literal holding ``text`` verbatim."""
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    return f"[{eq}[{text}]{eq}]"


def find_wrk() -> str:
    """The path of wrk, or a clear way out with the command that installs it."""
    path = shutil.which("wrk")
    if path is None:
        sys.exit(
            "bench_server.py: wrk, the load generator, is not on PATH.\n"
            "  Install it with:  sudo apt-get update && sudo apt-get install -y wrk   (Debian/Ubuntu)\n"
            "              or:  brew install wrk   (macOS)\n"
            "  then run this script again."
        )
    return path


BASELINE: dict[str, Path] = {}
"""The checkout the 'baseline' rows import mcp_testkit from (set by --baseline)."""
SOURCES: dict[str, str] = {}
"""Where each kind's server imported mcp_testkit from, as _serve.py reported it."""


@contextlib.contextmanager
def served(kind: str, framing: str) -> Iterator[tuple[str, int]]:
    """Start ``_serve.py`` for one app and yield its /mcp URL and pid; stop it on the way out, always."""
    env = dict(os.environ)
    # "baseline" is TestMcpServer as the baseline checkout has it; "baseline-KIND" is that checkout's KIND
    source = BASELINE["dir"] if kind.startswith("baseline") else HERE.parent
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    app_kind = "testkit" if kind == "baseline" else kind.removeprefix("baseline-")
    # A file, not a pipe, for the server's log: a chatty server must never block on a full pipe.
    log = tempfile.TemporaryFile("w+")
    proc = subprocess.Popen(
        [sys.executable, str(SERVE), app_kind, framing],
        env=env,
        preexec_fn=_die_with_parent,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        port = _wait_ready(proc, kind, framing, log)
        yield f"http://127.0.0.1:{port}/mcp", proc.pid
    finally:
        _stop(proc)
        log.close()


def _wait_ready(proc: subprocess.Popen[str], kind: str, framing: str, log: IO[str]) -> int:
    assert proc.stdout is not None
    deadline = time.monotonic() + STARTUP_TIMEOUT
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not selector.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stdout.readline()
            if not line:  # the server exited before it was ready
                proc.wait(timeout=5)
                log.seek(0)
                err = log.read().strip()
                raise BenchError(f"server {kind}/{framing} exited with {proc.returncode}: {err[-2000:]}")
            match = re.fullmatch(r"READY (\d+) (.*?)\s*", line)
            if match:
                SOURCES[kind] = match.group(2)
                return int(match.group(1))
    raise BenchError(f"server {kind}/{framing} was not ready after {STARTUP_TIMEOUT:.0f} s")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            assert proc.stdin is not None
            proc.stdin.close()  # _serve.py stops itself on EOF
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _decode(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC message of a JSON or single-message SSE answer."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data:
                    message: dict[str, Any] = json.loads(data)
                    if "id" in message:
                        return message
        raise BenchError(f"SSE answer without a JSON-RPC response: {response.text[:300]!r}")
    decoded: dict[str, Any] = response.json()
    return decoded


def call_body(era: str) -> dict[str, Any]:
    """The tools/call every request of a run sends: with `_meta` in the stateless era."""
    if era == "handshake":
        return CALL
    return {**CALL, "params": {**CALL["params"], "_meta": META}}  # type: ignore[dict-item]


def stateless_headers(method: str) -> dict[str, str]:
    """The headers mirroring a 2026-07-28 request's body."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    headers |= {"MCP-Protocol-Version": STATELESS_VERSION, "Mcp-Method": method}
    if method == "tools/call":
        headers["Mcp-Name"] = "echo"
    return headers


def discover(client: httpx2.Client, url: str) -> None:
    """Check the server speaks 2026-07-28: server/discover answers and offers it."""
    probe = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META}}
    response = client.post(url, json=probe, headers=stateless_headers("server/discover"))
    if response.status_code != 200:
        raise BenchError(f"server/discover answered {response.status_code}: {response.text[:300]}")
    offered = _decode(response).get("result", {}).get("supportedVersions", [])
    if STATELESS_VERSION not in offered:
        raise BenchError(f"server/discover does not offer {STATELESS_VERSION}: {offered!r}")


def handshake(url: str, kind: str, era: str = "handshake") -> str | None:
    """Connect the way a client of the era does and check one tools/call; the session id, if any."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    with httpx2.Client(timeout=10.0) as client:
        session_id: str | None = None
        if era == "stateless" and kind != "ceiling":
            discover(client, url)
            headers = stateless_headers("tools/call")
        elif kind != "ceiling":
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "bench_server", "version": "1"},
                },
            }
            response = client.post(url, json=init, headers=headers)
            if response.status_code != 200:
                raise BenchError(f"initialize answered {response.status_code}: {response.text[:300]}")
            result = _decode(response).get("result", {})
            session_id = response.headers.get("mcp-session-id")
            if not session_id:
                raise BenchError("initialize answered without an Mcp-Session-Id header")
            negotiated = result.get("protocolVersion")
            if negotiated != PROTOCOL_VERSION:
                raise BenchError(f"server negotiated {negotiated!r}, expected {PROTOCOL_VERSION!r}")
            headers["Mcp-Session-Id"] = session_id
            headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
            response = client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
            if response.status_code != 202:
                raise BenchError(f"notifications/initialized answered {response.status_code}")
        if kind == "ceiling":
            # The ceiling keeps no sessions, but is sent one, as TestMcpServer is, and echoes it (_serve.py):
            # the same request and answer bytes, so that the two differ only in the work they do.
            session_id = uuid.uuid4().hex
            headers["Mcp-Session-Id"] = session_id
            headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
        response = client.post(url, json=call_body(era), headers=headers)
        if response.status_code != 200:
            raise BenchError(f"tools/call answered {response.status_code}: {response.text[:300]}")
        if session_id and response.headers.get("mcp-session-id") != session_id:
            raise BenchError(f"tools/call answered without the session's Mcp-Session-Id: {dict(response.headers)}")
        message = _decode(response)
        expected = {"type": "text", "text": ECHO_TEXT}
        result = message.get("result") or {}
        if message.get("id") != CALL["id"] or result.get("isError") or expected not in result.get("content", ()):
            raise BenchError(f"tools/call gave a wrong answer: {json.dumps(message)[:300]}")
        return session_id


def run_wrk(
    wrk: str, url: str, session_id: str | None, seconds: int, connections: int, era: str = "handshake"
) -> dict[str, Any]:
    """Load ``url`` with wrk for ``seconds``; the counters printed by the Lua ``done`` callback."""
    body_head, body_tail = json.dumps({**call_body(era), "id": "ID"}, separators=(",", ":")).split('"ID"')
    stateless = era == "stateless"
    script = WRK_SCRIPT.format(
        body_head=lua_string(body_head),
        body_tail=lua_string(body_tail),
        accept=ACCEPT,
        session=lua_string(session_id) if session_id else "nil",
        version=STATELESS_VERSION if stateless else PROTOCOL_VERSION,
        method=lua_string("tools/call") if stateless else "nil",
        name=lua_string("echo") if stateless else "nil",
        echo=ECHO_TEXT,
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="bench_server_") as lua:
        lua.write(script)
        lua.flush()
        command = [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", lua.name, url]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=seconds + 60, preexec_fn=_die_with_parent
        )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        output = (completed.stderr + completed.stdout).strip()
        raise BenchError(f"wrk exited with {completed.returncode}: {output[:500]}")
    match = re.search(r"^BENCH (.*)$", completed.stdout, re.MULTILINE)
    if match is None:
        raise BenchError(f"wrk printed no BENCH line:\n{completed.stdout}{completed.stderr}")
    counters = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", match.group(1))}
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    counters["wrk_cpu_us"] = round(cpu * 1e6)
    first = re.search(r"^BENCH_FIRST_BAD (.*)$", completed.stdout, re.MULTILINE)
    bad = {key: counters[key] for key in ("bad_status", "bad_body") if counters[key]}
    errors = {
        key: counters[key] for key in ("connect_errors", "read_errors", "write_errors", "timeouts") if counters[key]
    }
    if bad or errors or counters["requests"] == 0:
        detail = first.group(1) if first else ""
        raise BenchError(f"wrk saw bad answers {bad or ''} errors {errors or ''}; first: {detail}")
    # Little's law: a connection whose answer never comes shows up neither as an error nor in the
    # latency figures, only as throughput x mean latency falling short of the connection count.
    busy = counters["requests"] / counters["duration_us"] * counters["mean_us"]
    if busy < connections / 2:
        raise BenchError(
            f"only {busy:.1f} of {connections} connections were busy on average: some requests were never answered"
        )
    return counters


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a process so far (Linux), or None where /proc is missing."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure_all(rows: list[tuple[str, str, str, str]], wrk: str, args: argparse.Namespace) -> list[Result]:
    """Start every server, then measure them in turn, ``--rounds`` times; keep each one's best round.

    Interleaving the rows and keeping the best of several rounds makes the ratios robust against
    load from other processes, which only ever slows a round down.  The server's own CPU time per
    call is kept too: it hardly depends on such load, so it cross-checks the throughput ratios.
    """
    results = [Result(label, kind, framing, era) for label, kind, framing, era in rows]
    targets: dict[int, tuple[str, int, str | None]] = {}
    with contextlib.ExitStack() as stack:
        for index, result in enumerate(results):
            try:
                url, pid = stack.enter_context(served(result.kind, result.framing))
                targets[index] = (url, pid, handshake(url, result.kind, result.era))
            except BenchError as exc:
                result.error = str(exc)
        for round_number in range(1, args.rounds + 1):
            for index, (url, pid, session_id) in targets.items():
                result = results[index]
                if result.error:
                    continue
                print(
                    f"  round {round_number}/{args.rounds}: {result.label} / {result.framing} / {result.era} ...",
                    file=sys.stderr,
                    flush=True,
                )
                try:
                    if round_number == 1 and args.warmup > 0:
                        run_wrk(wrk, url, session_id, args.warmup, args.connections, result.era)
                    cpu_before = _cpu_seconds(pid)
                    counters = run_wrk(wrk, url, session_id, args.duration, args.connections, result.era)
                    cpu_after = _cpu_seconds(pid)
                except BenchError as exc:
                    result.error = str(exc)
                    continue
                seconds = counters["duration_us"] / 1e6
                calls_per_s = counters["requests"] / seconds
                result.rounds.append(calls_per_s)
                if cpu_before is not None and cpu_after is not None:
                    cpu_us = (cpu_after - cpu_before) * 1e6 / counters["requests"]
                    if result.cpu_us_per_call is None or cpu_us < result.cpu_us_per_call:
                        result.cpu_us_per_call = cpu_us
                if result.calls_per_s is None or calls_per_s > result.calls_per_s:
                    result.calls_per_s = calls_per_s
                    result.p50_ms = counters["p50_us"] / 1000
                    result.p99_ms = counters["p99_us"] / 1000
                    result.wrk_busy = counters["wrk_cpu_us"] / counters["duration_us"]
                    if cpu_before is not None and cpu_after is not None:
                        result.cpu_busy = (cpu_after - cpu_before) / seconds
    for result in results:
        if result.error:
            result.calls_per_s = None
    return results


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment(wrk: str) -> str:
    wrk_version = subprocess.run([wrk, "-v"], capture_output=True, text=True).stdout.split("[")[0].strip()
    try:
        import uvloop  # noqa: F401

        loop = f"uvloop {_version('uvloop')}"
    except ImportError:
        loop = "asyncio (uvloop not installed)"
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"uvicorn {_version('uvicorn')} (httptools {_version('httptools')}, {loop}), "
        f"starlette {_version('starlette')}, mcp {_version('mcp')}, "
        f"nproc {len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()}, "
        f"{wrk_version}, {platform.system()} {platform.machine()}"
    )


def _ratio(value: float | None, base: float | None) -> float | None:
    if value is None or not base:
        return None
    return value / base


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _pair(row: Any, framing: str, era: str) -> tuple[Result | None, Result | None]:
    return row("testkit", framing, era), row("sdk", framing, era)


def report(results: list[Result], args: argparse.Namespace) -> tuple[str, bool]:
    """The table and the targets; whether every target was met."""
    by_key = {(r.kind, r.framing, r.era): r for r in results}

    def row(kind: str, framing: str, era: str = "handshake") -> Result | None:
        found = by_key.get((kind, framing, era))
        return found if found is not None and found.calls_per_s is not None else None

    ceiling = row("ceiling", "json")
    header = (
        f"{'server':<25} {'framing':<7} {'era':<9} {'calls/s':>8} {'x ceiling':>9} {'x SDK':>6} {'p50 ms':>7} "
        f"{'p99 ms':>7} {'CPU us/call':>11} {'CPU busy':>8} {'wrk CPU':>7}"
    )
    if args.rounds > 1:
        header += "  calls/s per round"
    lines = [header, "-" * len(header)]
    for r in results:
        era = "-" if r.kind == "ceiling" else r.era
        if r.calls_per_s is None:
            lines.append(f"{r.label:<25} {r.framing:<7} {era:<9} {'failed':>8}  {r.error}")
            continue
        sdk = row("sdk", r.framing, r.era) if r.kind != "sdk" else None
        busy = "-" if r.cpu_busy is None else f"{100 * r.cpu_busy:.0f}%"
        line = (
            f"{r.label:<25} {r.framing:<7} {era:<9} {r.calls_per_s:>8,.0f} "
            f"{_fmt(_ratio(r.calls_per_s, ceiling.calls_per_s if ceiling else None), '.2f'):>9} "
            f"{_fmt(_ratio(r.calls_per_s, sdk.calls_per_s if sdk else None), '.2f'):>6} "
            f"{_fmt(r.p50_ms, '.2f'):>7} {_fmt(r.p99_ms, '.1f'):>7} "
            f"{_fmt(r.cpu_us_per_call, '.0f'):>11} {busy:>8} {_fmt(r.wrk_busy and 100 * r.wrk_busy, '.0f'):>6}%"
        )
        if args.rounds > 1:
            line += "  " + " ".join(f"{value:,.0f}" for value in r.rounds)
        lines.append(line)
    starved = [
        f"{r.label} / {r.framing} / {r.era}" for r in results if r.cpu_busy is not None and r.cpu_busy < STARVED
    ]
    if starved:
        lines += [
            "",
            f"WARNING: the machine is busy: {', '.join(starved)} got under {STARVED:.0%} of a CPU in the best",
            "round, so the calls/s ratios are unreliable; rerun when the machine is quiet, or go by the CPU column.",
        ]
    lines += [
        "",
        "x ceiling, x SDK: ratios of calls/s (x SDK against the SDK server with the same framing and era).",
        "CPU us/call: the server process's CPU time per call (lowest of the rounds); CPU busy: its",
        "CPU use in the best round (well under 100% means other load starved it); wrk CPU: the load",
        "generator's CPU use then (far under 100%: it is not the bottleneck).",
        "",
        "targets (issues 2, 13 and 20)              calls/s ratio     cross-check by CPU per call",
    ]
    targets = [
        ("TestMcpServer JSON >= 0.9 x ceiling", row("testkit", "json"), ceiling, 0.9),
        ("TestMcpServer JSON >= 3 x SDK JSON", row("testkit", "json"), row("sdk", "json"), 3.0),
        ("TestMcpServer SSE  >= 3 x SDK SSE", row("testkit", "sse"), row("sdk", "sse"), 3.0),
        ("2026-07-28 JSON >= 3 x SDK 2026-07-28 JSON", *_pair(row, "json", "stateless"), 3.0),
        ("2026-07-28 SSE  >= 3 x SDK 2026-07-28 SSE", *_pair(row, "sse", "stateless"), 3.0),
    ]
    all_met = True
    for name, subject, base, goal in targets:
        if subject is None or base is None:
            lines.append(f"  {name:<40} n/a (not measured)")
            all_met = False
            continue
        ratio = _ratio(subject.calls_per_s, base.calls_per_s)
        by_cpu = _ratio(base.cpu_us_per_call, subject.cpu_us_per_call)
        met = ratio is not None and ratio >= goal
        all_met = all_met and met
        cross = "-" if by_cpu is None else f"{by_cpu:.2f} ({'meets' if by_cpu >= goal else 'misses'})"
        lines.append(f"  {name:<40} {'PASS' if met else 'MISS'} {_fmt(ratio, '.2f'):>6}      {cross}")
    lines.append("targets (issues 11 and 20)                 p99 ratio")
    for framing in ("json", "sse"):
        subject = row("testkit", framing)
        ratio = _ratio(subject.p99_ms if subject else None, ceiling.p99_ms if ceiling else None)
        met = ratio is not None and ratio <= 3.0
        all_met = all_met and met
        name = f"TestMcpServer {framing.upper():<4} p99 <= 3 x ceiling p99"
        lines.append(f"  {name:<40} {'PASS' if met else 'MISS'} {_fmt(ratio, '.2f'):>6}")
    return "\n".join(lines), all_met


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="whole seconds of load per server (default 5)")
    parser.add_argument("--quick", action="store_true", help="one round of 2 s per server (a quick look)")
    parser.add_argument("--warmup", type=int, default=1, help="whole seconds of unmeasured load first (default 1)")
    parser.add_argument("--connections", type=int, default=8, help="wrk keep-alive connections (default 8)")
    parser.add_argument(
        "--only",
        choices=sorted({kind for _, kind, _, _ in ROWS} - {"ceiling"}),
        action="append",
        help="measure only these servers besides the ceiling (repeatable)",
    )
    parser.add_argument(
        "--era",
        choices=ERAS,
        action="append",
        help="measure only the rows of this protocol era (repeatable; default both)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="measure every server this many times, interleaved, and keep its best (default 3)",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--baseline",
        metavar="DIR|REF",
        help="also measure TestMcpServer as the checkout in DIR has it, or as the git commit REF of this "
        "repository has it (e.g. main; exported into a temporary directory)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.duration, args.rounds = 2, 1
    if args.duration < 1 or args.warmup < 0:
        parser.error("wrk takes whole seconds: --duration >= 1, --warmup >= 0")
    if args.rounds < 1 or args.connections < 1:
        parser.error("--rounds and --connections must be at least 1")
    return args


def baseline_checkout(spec: str, cleanup: contextlib.ExitStack) -> Path:
    """The directory the baseline rows import mcp_testkit from: ``spec`` itself when it is a checkout,
    else the git commit ``spec`` names in this repository, exported into a temporary directory."""
    path = Path(spec)
    if (path / "mcp_testkit" / "__init__.py").is_file():
        return path.resolve()
    repo = str(HERE.parent)
    found = subprocess.run(
        ["git", "-C", repo, "rev-parse", "--verify", "--quiet", f"{spec}^{{commit}}"], capture_output=True, text=True
    )
    if found.returncode != 0:
        sys.exit(f"bench_server.py: --baseline {spec}: neither a checkout with an mcp_testkit package nor a git commit")
    commit = found.stdout.strip()
    archive = subprocess.run(["git", "-C", repo, "archive", "--format=tar", commit], capture_output=True, check=True)
    where = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix=f"bench_baseline_{commit[:10]}_")))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(where, filter="data")
    return where


def compare_baseline(results: list[Result]) -> str:
    """Before (the baseline) against after (this checkout), per framing and era: calls/s, CPU per call, p99."""
    by_key = {(r.kind, r.framing, r.era): r for r in results if r.calls_per_s is not None}
    lines = ["before -> after             calls/s (after/before)  paired   CPU us/call        p99 ms"]
    for (kind, framing, era), before in by_key.items():
        after = by_key.get(("testkit", framing, era))
        if kind != "baseline" or after is None:
            continue
        calls = f"{_fmt(before.calls_per_s, ',.0f'):>7} -> {_fmt(after.calls_per_s, ',.0f'):>7}"
        lines.append(
            f"  {framing.upper():<4} {era:<9}  {calls} ({_fmt(_ratio(after.calls_per_s, before.calls_per_s), '.2f')})"
            f"  {_fmt(paired_ratio(before.rounds, after.rounds), '.2f'):>6}"
            f"   {_fmt(before.cpu_us_per_call, '.0f'):>4} -> {_fmt(after.cpu_us_per_call, '.0f'):>4}"
            f"     {_fmt(before.p99_ms, '.1f'):>6} -> {_fmt(after.p99_ms, '.1f')}"
        )
    lines.append(
        "paired: the median over rounds of after/before within one round (the two ran back to back there), which\n"
        "a round slowed by other load moves less than the best rounds' ratio; measure an unchanged checkout\n"
        "against itself (--baseline HEAD) to see this machine's spread."
    )
    return "\n".join(lines)


def paired_ratio(before: list[float], after: list[float]) -> float | None:
    """The median of after/before over the rounds both measured (None without one)."""
    ratios = [a / b for b, a in zip(before, after, strict=False) if b > 0]
    return statistics.median(ratios) if ratios else None


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with contextlib.ExitStack() as cleanup:
        return _main(args, cleanup)


def _main(args: argparse.Namespace, cleanup: contextlib.ExitStack) -> int:
    wrk = find_wrk()
    signal.signal(signal.SIGTERM, _raise_interrupt)  # so that `finally` stops the servers
    rows = [
        row
        for row in ROWS
        if row[1] == "ceiling" or ((not args.only or row[1] in args.only) and (not args.era or row[3] in args.era))
    ]
    if args.baseline is not None:
        BASELINE["dir"] = baseline_checkout(args.baseline, cleanup)
        here = ("TestMcpServer", "testkit", "json", "handshake")
        at = rows.index(here) if here in rows else len(rows)
        eras = args.era or list(ERAS)
        rows[at:at] = [
            ("TestMcpServer (baseline)", "baseline", framing, era) for era in eras for framing in ("json", "sse")
        ]
    print(environment(wrk))
    if args.baseline is not None:
        print(f"baseline: {BASELINE['dir']} ({args.baseline})")
    rounds = f", best of {args.rounds} interleaved rounds" if args.rounds > 1 else ""
    print(f"wrk -t1 -c{args.connections} -d{args.duration}s per server (after a {args.warmup}s warm-up{rounds})\n")
    try:
        results = measure_all(rows, wrk, args)
    except KeyboardInterrupt:
        print("interrupted; servers stopped", file=sys.stderr)
        return 130
    table, all_met = report(results, args)
    print(table)
    if args.baseline is not None:
        print("\n" + compare_baseline(results))
        where = f"{SOURCES.get('baseline')}, the others from {SOURCES.get('testkit')}"
        print(f"\nbaseline rows imported mcp_testkit from {where}")
    failed = [r for r in results if r.error]
    if failed:
        return 2
    return 1 if args.strict and not all_met else 0


if __name__ == "__main__":
    sys.exit(main())
