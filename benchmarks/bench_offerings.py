"""``resources/read`` of a small text resource against ``tools/call`` on the same TestMcpServer, in both eras.

Run it from the repository root (wrk installed, as for ``bench_server.py``)::

    python benchmarks/bench_offerings.py              # 3 interleaved rounds of 5 s per request kind
    python benchmarks/bench_offerings.py --quick      # 1 round of 2 s
    python benchmarks/bench_offerings.py --strict     # exit 1 when resources/read is under 0.8x tools/call

One server process (``benchmarks/_serve.py offerings json``: the echo tool and ``file:///bench.txt``,
whose text is the echoed text) is loaded by ``wrk -t1 -c8`` in turn with ``tools/call`` and with
``resources/read``, each request a fresh JSON-RPC id; an answer that is not a 200 holding that
text fails the run, as in ``bench_server.py``, whose machinery this script reuses.  Each kind keeps
its best round (other load only slows a round down); the figures compare within one run only.
The target (docs/benchmarks.md): ``resources/read`` at least 0.8x the ``tools/call`` rate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_server as bench

TARGET = 0.8
READ = {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///bench.txt"}}
KINDS = {"tools/call": (bench.CALL, "echo"), "resources/read": (READ, "file:///bench.txt")}


def _body(kind: str, era: str) -> dict[str, Any]:
    message, _ = KINDS[kind]
    if era == "handshake":
        return message
    return {**message, "params": {**message["params"], "_meta": bench.META}}


def run(wrk: str, url: str, session: str | None, kind: str, era: str, seconds: int, connections: int) -> float:
    """Requests per second of one wrk run posting `kind`; BenchError on any wrong answer."""
    head, tail = json.dumps({**_body(kind, era), "id": "ID"}, separators=(",", ":")).split('"ID"')
    stateless = era == "stateless"
    script = bench.WRK_SCRIPT.format(
        body_head=bench.lua_string(head),
        body_tail=bench.lua_string(tail),
        accept=bench.ACCEPT,
        session=bench.lua_string(session) if session else "nil",
        version=bench.STATELESS_VERSION if stateless else bench.PROTOCOL_VERSION,
        method=bench.lua_string(kind) if stateless else "nil",
        name=bench.lua_string(KINDS[kind][1]) if stateless else "nil",
        echo=bench.ECHO_TEXT,
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", prefix="bench_offerings_") as lua:
        lua.write(script)
        lua.flush()
        command = [wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", lua.name, url]
        done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    found = re.search(r"^BENCH (.*)$", done.stdout, re.MULTILINE)
    if done.returncode != 0 or found is None:
        raise bench.BenchError(f"wrk failed: {(done.stderr + done.stdout)[:500]}")
    counters = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", found.group(1))}
    wrong = {key: counters[key] for key in ("bad_status", "bad_body", "timeouts") if counters[key]}
    if wrong or not counters["requests"]:
        first = re.search(r"^BENCH_FIRST_BAD (.*)$", done.stdout, re.MULTILINE)
        raise bench.BenchError(f"{kind}: wrong answers {wrong}; first: {first.group(1) if first else ''}")
    return counters["requests"] / counters["duration_us"] * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round of 2 s per request kind")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--strict", action="store_true", help=f"exit 1 when the ratio is under {TARGET}")
    args = parser.parse_args(argv)
    rounds, seconds = (1, 2) if args.quick else (args.rounds, args.seconds)
    wrk = bench.find_wrk()
    best: dict[tuple[str, str], float] = {}
    with bench.served("offerings", "json") as (url, _pid):
        sessions = {era: bench.handshake(url, "testkit", era) for era in bench.ERAS}
        for _ in range(rounds):
            for era in bench.ERAS:
                for kind in KINDS:
                    rate = run(wrk, url, sessions[era], kind, era, seconds, args.connections)
                    best[(era, kind)] = max(best.get((era, kind), 0.0), rate)
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"bench_offerings: {rounds} round(s) of {seconds} s, wrk -t1 -c{args.connections}, load average {load}")
    print(f"{'era':<10} {'tools/call':>12} {'resources/read':>15} {'ratio':>7}")
    missed = False
    for era in bench.ERAS:
        call, read = best[(era, "tools/call")], best[(era, "resources/read")]
        ratio = read / call
        missed |= ratio < TARGET
        under = "  (under the target)" if ratio < TARGET else ""
        print(f"{era:<10} {call:>10.0f}/s {read:>13.0f}/s {ratio:>6.2f}x{under}")
    print(f"target: resources/read >= {TARGET}x tools/call")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
