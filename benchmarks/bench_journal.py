"""What a growing journal costs the garbage collector: ``tools/call`` after ``tools/call`` in-process.

Run it from the repository root::

    python benchmarks/bench_journal.py                      # 200,000 calls into one journal
    python benchmarks/bench_journal.py --baseline main      # the same for main's code first, then this one's

Each measurement runs in its own process: a ``TestMcpServer`` whose ASGI app is called directly (no
socket, so no load generator shares the CPU), one session, and ``--calls`` echo calls whose
records all stay in the journal, as they do in a long ``serve`` run or a benchmark of several
rounds.  ``gc.callbacks`` time every collection (in CPU time of the thread, which other load on
the machine hardly changes); at the end one more full collection is timed over the whole journal.
A full collection walks every object the collector tracks, so a journal whose records it tracks
makes the rare full collection that lands on a request that request's latency (the p99 of
``bench_server.py``).  ``--baseline DIR|REF`` measures another checkout, or a git commit of this
repository exported into a temporary directory, the same way first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

MEASURE = r"""
import asyncio, gc, json, sys, time

import mcp_testkit
from mcp_testkit import TestMcpServer

calls = int(sys.argv[1])
server = TestMcpServer(name="bench", response_mode="json")
server.tool("echo", returns=lambda arguments: arguments["text"])
app = server.asgi_app
pauses = []
started = [0.0]


def timed(phase, info):
    if phase == "start":
        started[0] = time.thread_time()
    else:
        pauses.append((time.thread_time() - started[0], info["generation"]))


async def post(headers, body):
    sent = []

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message):
        sent.append(message)

    raw = [(name.encode(), value.encode()) for name, value in headers.items()]
    await app({"type": "http", "method": "POST", "path": "/mcp", "headers": raw, "http_version": "1.1"}, receive, send)
    return sent


async def main():
    headers = {"host": "127.0.0.1:8000", "content-type": "application/json"}
    headers["accept"] = "application/json, text/event-stream"
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
    sent = await post(headers, json.dumps(initialize).encode())
    headers["mcp-session-id"] = dict(sent[0]["headers"])[b"mcp-session-id"].decode()
    headers["mcp-protocol-version"] = "2025-11-25"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
    body = json.dumps(call).encode()
    answer = await post(headers, body)
    assert b'"text":"x"' in answer[-1]["body"].replace(b" ", b""), answer
    gc.callbacks.append(timed)
    cpu = time.process_time()
    for _ in range(calls):
        await post(headers, body)
    cpu = time.process_time() - cpu
    gc.callbacks.remove(timed)
    full = time.thread_time()
    gc.collect()
    full = time.thread_time() - full
    spent = sum(pause for pause, _ in pauses)
    fulls = sum(1 for _, generation in pauses if generation == 2)
    print(json.dumps({
        "source": str(mcp_testkit.__file__).rsplit("/mcp_testkit/", 1)[0],
        "records": len(server.journal),
        "cpu_us_per_call": cpu / calls * 1e6,
        "collector_us_per_call": spent / calls * 1e6,
        "full_collections": fulls,
        "longest_pause_ms": max((pause for pause, _ in pauses), default=0.0) * 1e3,
        "final_full_collection_ms": full * 1e3,
        "tracked_objects": len(gc.get_objects()),
    }))


asyncio.run(main())
"""


def measure(source: Path, calls: int) -> dict[str, float | str]:
    """Run the measurement in a fresh process that imports mcp_testkit from ``source``."""
    import json

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")])))
    # Run from `source`: `python -c` puts the working directory first on the path.
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(calls)], env=env, cwd=source, capture_output=True, text=True, timeout=3600
    )
    result: dict[str, float | str] = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    if Path(str(result.get("source", ""))).resolve() != source.resolve():
        sys.exit(f"bench_journal.py: the measurement of {source} failed or imported another mcp_testkit:\n"
                 f"{done.stdout[-1000:]}{done.stderr[-3000:]}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200_000, help="tools/call requests into one journal")
    parser.add_argument("--baseline", metavar="DIR|REF", help="measure this checkout or git commit first")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from bench_server import baseline_checkout

    with contextlib.ExitStack() as cleanup:
        sources = [("this checkout", HERE.parent)]
        if args.baseline is not None:
            sources.insert(0, ("baseline", baseline_checkout(args.baseline, cleanup)))
        print(f"{'code':<24} {'CPU us/call':>11} {'collector us/call':>17} {'full GCs':>8} {'longest ms':>10} "
              f"{'last full GC ms':>15} {'tracked objects':>15}")
        for label, source in sources:
            r = measure(source, args.calls)
            print(f"{label:<24} {r['cpu_us_per_call']:>11.1f} {r['collector_us_per_call']:>17.2f} "
                  f"{r['full_collections']:>8} {r['longest_pause_ms']:>10.1f} {r['final_full_collection_ms']:>15.1f} "
                  f"{r['tracked_objects']:>15,}")
        print(f"\n{args.calls:,} calls into one journal per row; the last full GC walks a journal that long.")
        for label, source in sources:
            named = f" ({args.baseline})" if label == "baseline" else ""
            print(f"{label}: mcp_testkit imported from {source}{named}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
