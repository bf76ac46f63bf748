"""The chaos proxy's own CPU per ``tools/call``, in-process: plain proxying against recording, in both eras.

Run it from the repository root::

    python benchmarks/bench_proxy_path.py               # 3 runs of 20,000 calls a row, lowest kept
    python benchmarks/bench_proxy_path.py --calls 5000  # a quick look
    python benchmarks/bench_proxy_path.py --count       # Python function calls a request instead (load-free)

``bench_proxy.py`` measures calls/s through the proxy with wrk, three processes on the machine's cores: the figure
moves by 10 to 15% from run to run, as much as the cost of recording it is meant to show. Here the proxy's ASGI app
is called directly, one call at a time, with the headers and body wrk sends, in front of a ``TestMcpServer`` that
serves in a process of its own over loopback (the proxy's pooled client and its socket are real). A run's figure is
``time.process_time`` of this process over its calls, so neither the upstream nor other load on the machine is in
it; the rows take turns and the lowest of the runs is printed. A recording row keeps every exchange it saw until it
ends (60,000 at the defaults), as ``mcp-testkit record`` keeps them until it writes the cassette.

On a machine whose CPU time itself moves from run to run (a shared virtual machine), ``--count`` gives the figure
no load can move: the Python function calls a request costs (cProfile's count over the calls, the driver's own
included, the same in every row), once per row.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import bench_server  # the benchmark machinery, from beside this file

ROWS = [("chaos proxy", False), ("recording proxy", True)]


class _Exchange:
    """receive and send of one request, as uvicorn has them: the body once, then a disconnect after the answer."""

    def __init__(self, body: bytes) -> None:
        self.message = {"type": "http.request", "body": body, "more_body": False}
        self.answered = asyncio.Event()
        self.read = False
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if not self.read:
            self.read = True
            return self.message
        await self.answered.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.answered.set()


async def _post(app: Any, headers: dict[str, str], body: bytes) -> list[dict[str, Any]]:
    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    raw.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": raw, "http_version": "1.1"}
    exchange = _Exchange(body)
    await app(scope, exchange.receive, exchange.send)
    return exchange.sent


async def _headers_for(app: Any, era: str) -> dict[str, str]:
    """The headers of the era's tools/call: a session opened through the proxy first in the handshake era."""
    headers = {"host": "127.0.0.1:8000", "content-type": "application/json", "accept": bench_server.ACCEPT}
    if era == "stateless":
        return headers | {name.lower(): value for name, value in bench_server.stateless_headers("tools/call").items()}
    hello = {
        "protocolVersion": bench_server.PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    }
    sent = await _post(
        app, headers, json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}).encode()
    )
    session = dict(sent[0]["headers"]).get(b"mcp-session-id")
    if sent[0]["status"] != 200 or session is None:
        raise bench_server.BenchError(f"initialize through the proxy answered {sent[0]['status']} without a session")
    headers |= {"mcp-session-id": session.decode(), "mcp-protocol-version": bench_server.PROTOCOL_VERSION}
    await _post(app, headers, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    return headers


async def _measure(upstream: str, era: str, recording: bool, calls: int, count: bool = False) -> float:
    """CPU µs per call of one run (Python function calls per call with `count`): a fresh proxy, checked on its
    first answer, then `calls` calls one at a time."""
    from mcp_testkit.cassettes import Tape
    from mcp_testkit.cassettes._record import TapeRecorder
    from mcp_testkit.proxy import ChaosProxy

    proxy = ChaosProxy(upstream, journal_limit=1, recording=TapeRecorder(Tape()) if recording else None)
    app = proxy.asgi_app
    try:
        headers = await _headers_for(app, era)
        body = json.dumps(bench_server.call_body(era), separators=(",", ":")).encode()
        sent = await _post(app, headers, body)
        text = b"".join(message.get("body", b"") for message in sent)
        if sent[0]["status"] != 200 or bench_server.ECHO_TEXT.encode() not in text:
            raise bench_server.BenchError(f"tools/call through the proxy gave a wrong answer: {text[:300]!r}")
        for _ in range(min(500, calls)):  # warm the pool and the caches
            await _post(app, headers, body)
        if count:
            import cProfile
            import pstats

            profile = cProfile.Profile()
            profile.enable()
            for _ in range(calls):
                await _post(app, headers, body)
            profile.disable()
            return float(pstats.Stats(profile).total_calls) / calls  # type: ignore[attr-defined]
        started = time.process_time()
        for _ in range(calls):
            await _post(app, headers, body)
        return (time.process_time() - started) / calls * 1e6
    finally:
        await app.link.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000, help="calls a run (default 20,000)")
    parser.add_argument("--runs", type=int, default=3, help="runs a row, the rows taking turns (default 3)")
    parser.add_argument("--count", action="store_true", help="Python function calls a request, one run a row")
    parser.add_argument("--era", choices=list(bench_server.ERAS), action="append", help="one era (default both)")
    args = parser.parse_args(argv)
    eras = args.era or list(bench_server.ERAS)
    if args.count:
        args.runs, args.calls = 1, min(args.calls, 5_000)
    unit = "calls/request" if args.count else "µs CPU/call"
    best: dict[tuple[str, str], float] = {}
    with bench_server.served("testkit", "json") as (upstream, _):
        loop = _new_loop()
        try:
            for run in range(1, args.runs + 1):
                for era in eras:
                    for label, recording in ROWS:
                        print(f"  run {run}/{args.runs}: {label} / {era} ...", file=sys.stderr, flush=True)
                        measured = _measure(upstream, era, recording, args.calls, args.count)
                        figure = loop.run_until_complete(measured)
                        best[label, era] = min(figure, best.get((label, era), figure))
        finally:
            loop.close()
    print(_environment())
    print(f"{'row':18} {'era':10} {unit:>14}")
    for era in eras:
        for label, _ in ROWS:
            print(f"{label:18} {era:10} {best[label, era]:14.1f}")
        cost = best["recording proxy", era] / best["chaos proxy", era] - 1
        what = "Python calls" if args.count else "CPU"
        print(f"  {era}: recording costs {cost * 100:.1f}% of {what} over plain proxying (target <= 10%)")
    return 0


def _environment() -> str:
    try:
        return bench_server.environment(bench_server.find_wrk())
    except Exception:  # no wrk: the versions that matter here are Python's and the loop's
        return f"Python {sys.version.split()[0]}"


def _new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when it is installed, as uvicorn serves the proxy on it; else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


if __name__ == "__main__":
    sys.exit(main())
