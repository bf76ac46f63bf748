"""``tools/call`` throughput through the chaos proxy: against TestMcpServer directly, and with recording on.

Run it from the repository root (wrk needed, as for ``bench_server.py``)::

    python benchmarks/bench_proxy.py            # 3 interleaved rounds of 5 s per row
    python benchmarks/bench_proxy.py --quick    # 1 round of 2 s per row
    python benchmarks/bench_proxy.py --baseline main   # before/after in one run: main's proxy beside this one

One TestMcpServer (JSON answers) serves in a process of its own; the rows are that server directly, the chaos
proxy in front of it (no fault, not recording), and the recording proxy (the same proxy recording into a tape), each
proxy in a process of its own too, in both protocol eras. It prints calls/s and each proxy's ratio to the direct
server (target at least 0.5) and recording's cost over plain proxying (target at most 10%). With ``--baseline DIR``
or ``--baseline REF`` (as for ``bench_server.py``), both proxies as that checkout has them run too, interleaved in front
of the same upstream, and a before/after table follows. Figures compare within one run only (DESIGN.md section 8);
on a loaded machine, the best of the rounds is kept, and the proxy's CPU time per call is the steadier figure.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_server  # the benchmark machinery, from beside this file

ROWS = [
    ("TestMcpServer", "testkit"),
    ("chaos proxy, TestMcpServer", "chaos"),
    ("recording proxy, TestMcpServer", "proxy"),
]


def main(argv: list[str] | None = None) -> int:
    args = bench_server.parse_args(argv)
    wrk = bench_server.find_wrk()
    eras = args.era or list(bench_server.ERAS)
    kinds = list(ROWS)
    load_before = _load()
    with contextlib.ExitStack() as stack:
        if args.baseline is not None:
            bench_server.BASELINE["dir"] = bench_server.baseline_checkout(args.baseline, stack)
            # each baseline row just before the row it compares with, so that the two meet the same load
            kinds = [ROWS[0]] + [
                row for label, kind in ROWS[1:] for row in ((f"{label} (baseline)", f"baseline-{kind}"), (label, kind))
            ]
        upstream, _ = stack.enter_context(bench_server.served("testkit", "json"))
        os.environ["MCP_TESTKIT_BENCH_UPSTREAM"] = upstream  # the proxies forward to this one server
        rows = [(label, kind, "json", era) for era in eras for label, kind in kinds]
        results = bench_server.measure_all(rows, wrk, args)
    print(bench_server.environment(wrk))
    if args.baseline is not None:
        print(f"baseline: {args.baseline}, imported from {bench_server.SOURCES.get('baseline-chaos')}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {_load()}")
    print(f"{'row':34} {'era':10} {'calls/s':>9} {'ratio':>7} {'µs CPU/call':>12}")
    missed = False
    for era in eras:
        by_kind = {r.kind: r for r in results if r.era == era}
        direct = by_kind["testkit"].calls_per_s
        for result in (by_kind[kind] for _, kind in kinds):
            ratio = bench_server._ratio(result.calls_per_s, direct)
            cpu = bench_server._fmt(result.cpu_us_per_call, ".0f")
            shown = bench_server._fmt(result.calls_per_s, ",.0f")
            print(f"{result.label:34} {era:10} {shown:>9} {bench_server._fmt(ratio, '.2f'):>7} {cpu:>12}")
            if result.error:
                print(f"  error: {result.error}")
        chaos, recording = by_kind["chaos"].calls_per_s, by_kind["proxy"].calls_per_s
        through = bench_server._ratio(chaos, direct)
        cost = None if not chaos or recording is None else 1 - recording / chaos
        print(f"  {era}: proxy/direct {bench_server._fmt(through, '.2f')} (target >= 0.5), recording costs "
              f"{bench_server._fmt(None if cost is None else cost * 100, '.1f')}% over plain proxying (target <= 10%)")
        missed = missed or through is None or through < 0.5 or cost is None or cost > 0.10
        if args.baseline is not None:
            for label, kind in ROWS[1:]:
                before, after = by_kind[f"baseline-{kind}"], by_kind[kind]
                print(
                    f"  {era}: {label}, before -> after: {bench_server._fmt(before.calls_per_s, ',.0f')} -> "
                    f"{bench_server._fmt(after.calls_per_s, ',.0f')} calls/s, "
                    f"{bench_server._fmt(before.cpu_us_per_call, '.0f')} -> "
                    f"{bench_server._fmt(after.cpu_us_per_call, '.0f')} µs CPU per call"
                )
    return 1 if missed and args.strict else 0


def _load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
