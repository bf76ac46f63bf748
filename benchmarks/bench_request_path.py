"""CPU per ``tools/call`` through the request path, in-process, for the four rows of bench_server.py.

Run it from the repository root::

    python benchmarks/bench_request_path.py                     # 4 rows, best of 5 runs of 20,000 calls
    python benchmarks/bench_request_path.py --baseline f2824ea  # a git commit (or a directory) first, then this one
    python benchmarks/bench_request_path.py --profile json/handshake   # cProfile one row, own time first
    python benchmarks/bench_request_path.py --rows ceiling/- json/handshake  # with the Starlette echo, for scale

Each row runs in its own process: a ``TestMcpServer`` with the echo tool whose ASGI app is called
directly with the headers and body wrk sends in bench_server.py (no socket, no load generator), so
the figure is the package's own CPU time per call: HTTP server and event loop costs are left out,
and other load on the machine moves it far less than a wall-clock rate.  A run's figure is
``time.process_time`` over its calls, each run a process of its own (with ``--baseline``, the two
checkouts take turns); the lowest of the runs is printed, since load only ever adds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS = ("ceiling/-", "json/handshake", "sse/handshake", "json/stateless", "sse/stateless")

MEASURE = r"""
import asyncio, cProfile, json, pstats, sys, time

import mcp_testkit
from mcp_testkit import TestMcpServer

framing, era = sys.argv[1].split("/")
calls, runs, profile = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
if framing == "ceiling":  # the Starlette echo of bench_server.py, for scale
    sys.path.insert(0, "benchmarks")
    from _serve import ceiling_app

    server, app = None, ceiling_app("json")
else:
    server = TestMcpServer(name="bench", response_mode=framing)
    server.tool("echo", returns=lambda arguments: arguments["text"])
    app = server.asgi_app
ACCEPT = "application/json, text/event-stream"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "bench_server", "version": "1"},
}


class Exchange:
    # receive and send of one request, as uvicorn has them: the body once, then wait for the answer's end
    # and tell of a disconnect (what a 2026-07-28 tools/call watches for its client's close).

    def __init__(self, body):
        self.message = {"type": "http.request", "body": body, "more_body": False}
        self.answered = asyncio.Event()
        self.read = False

    async def receive(self):
        if not self.read:
            self.read = True
            return self.message
        await self.answered.wait()
        return {"type": "http.disconnect"}

    async def send(self, message):
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.answered.set()


async def post(headers, body):
    sent = []

    exchange = Exchange(body)

    async def send(message):
        sent.append(message)
        await exchange.send(message)

    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": raw, "http_version": "1.1"}
    await app(scope, exchange.receive, send)
    return sent


async def main():
    headers = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": ACCEPT}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
    if framing == "ceiling":  # sent a session as TestMcpServer is, which it echoes (the same bytes each way)
        headers["mcp-session-id"] = "0123456789abcdef0123456789abcdef"
        headers["mcp-protocol-version"] = "2025-11-25"
    elif era == "handshake":
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        sent = await post(headers, json.dumps(initialize).encode())
        headers["mcp-session-id"] = dict(sent[0]["headers"])[b"mcp-session-id"].decode()
        headers["mcp-protocol-version"] = "2025-11-25"
    else:
        headers |= {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"}
        call["params"]["_meta"] = META
    body = json.dumps(call, separators=(",", ":")).encode()
    answer = await post(headers, body)
    if profile:
        print(f"first answer: {answer}", file=sys.stderr)
    text = b"".join(message.get("body", b"") for message in answer).replace(b" ", b"")
    assert answer[0]["status"] == 200 and b'"text":"x"' in text, answer
    # One scope reused, as a server's per-request objects are not the package's cost (an Exchange is
    # a few hundred ns: uvicorn makes its own per request too).
    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": raw, "http_version": "1.1"}

    async def loop():
        for _ in range(calls):
            exchange = Exchange(body)
            await app(dict(scope), exchange.receive, exchange.send)

    best = None
    for _ in range(runs):
        if server is not None:
            server.journal.clear()
        if profile:
            profiler = cProfile.Profile()
            profiler.enable()
        cpu = time.process_time()
        await loop()
        cpu = time.process_time() - cpu
        if profile:
            profiler.disable()
        best = cpu if best is None else min(best, cpu)
        last = server and server.journal.last
        answered = server is None or len(server.journal) == calls and last.status == 200 and last.error is None
        assert answered, (len(server.journal), last)
    if profile:
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(40)
    source = mcp_testkit.__file__.rsplit("/mcp_testkit/", 1)[0]
    print(json.dumps({"source": source, "cpu_us_per_call": best / calls * 1e6}))


asyncio.run(main())
"""


def measure(source: Path, row: str, calls: int, runs: int, profile: bool = False) -> float:
    """CPU microseconds per call of ``row`` for the package in ``source``, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, row, str(calls), str(runs), "1" if profile else "0"],
        env=env,
        cwd=source,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if profile:
        sys.stderr.write(done.stderr)
    result = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    if Path(str(result.get("source", ""))).resolve() != source.resolve():
        sys.exit(f"bench_request_path.py: the measurement of {row} in {source} failed or imported another "
                 f"mcp_testkit:\n{done.stdout[-1000:]}{done.stderr[-3000:]}")
    return float(result["cpu_us_per_call"])


def checkout(spec: str, cleanup: contextlib.ExitStack) -> Path:
    """A directory holding ``spec``: itself if it is one, else the git commit exported to a temporary one."""
    if Path(spec).is_dir():
        return Path(spec).resolve()
    target = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="bench_request_path_")))
    archive = subprocess.run(["git", "archive", spec], cwd=HERE.parent, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls per run (default 20,000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per row; the lowest is printed (default 5)")
    parser.add_argument("--baseline", help="a directory or git commit measured first, for a before/after")
    parser.add_argument("--profile", choices=ROWS, help="print cProfile's own-time table for one row")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS[1:]))
    args = parser.parse_args(argv)
    here = HERE.parent
    if args.profile:
        measure(here, args.profile, args.calls, 1, profile=True)
        return 0
    with contextlib.ExitStack() as cleanup:
        base = checkout(args.baseline, cleanup) if args.baseline else None
        print(f"{'row':<16} {'baseline us/call':>17} {'this us/call':>13} {'change':>7}")
        for row in args.rows:
            # Baseline and this checkout take turns, a process each, so that a change of load hits both alike.
            befores, afters = [], []
            for _ in range(args.runs):
                if base:
                    befores.append(measure(base, row, args.calls, 1))
                afters.append(measure(here, row, args.calls, 1))
            before, after = min(befores, default=None), min(afters)
            change = "" if before is None else f"{(after - before) / before:+.0%}"
            shown = "-" if before is None else f"{before:.1f}"
            print(f"{row:<16} {shown:>17} {after:>13.1f} {change:>7}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
