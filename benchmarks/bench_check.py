"""Wall time against CPU time of a contract run: README's first command, and the reference bridge with a 30 s timeout.

Run it from the repository root::

    python benchmarks/bench_check.py                        # this checkout, on virtual time and on the real clock
    python benchmarks/bench_check.py --baseline ef26d25     # and a git commit (or a checkout) beside it
    python benchmarks/bench_check.py --only readme          # README's `mcp-testkit check` only
    python benchmarks/bench_check.py --clock virtual        # this checkout on virtual time only

A contract run in-process mostly waits: the bridges' declared timeouts, backoffs and the faults' late answers. On
the real clock that waiting is wall time with the CPU idle; on virtual time (the default since issue 35) the event
loop skips it. Each row is one run in a process of its own (`mcp-testkit check` for README's command; `run_contract`
of `ReferenceBridgeAdapter(timeout_s=30)` for the long-timeout one), its wall time by the clock and its CPU time by
the child's rusage; the ratio wall / CPU says how much of the run was waiting. The target (issue 35) is wall at most
2.5 x CPU on virtual time. Figures compare within one run only (DESIGN.md section 8).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

TIMEOUT_30 = r"""
import sys
from mcp_testkit import ReferenceBridgeAdapter, run_contract

def factory(**keywords):
    return ReferenceBridgeAdapter(timeout_s=30, **keywords)

clock = sys.argv[1]
extra = {} if clock == "default" else {"clock": clock}
results = run_contract(factory, max_examples=int(sys.argv[2]), **extra)
bad = [r for r in results if r.status not in ("passed", "not_applicable")]
print(f"{len(results)} verdicts, {len(bad)} not held: {[(r.property_id, r.era, r.status) for r in bad]}")
sys.exit(1 if bad else 0)
"""


@dataclass(frozen=True)
class Row:
    """One measured run: whose code, what ran, on which clock, and its times."""

    source: str
    what: str
    clock: str
    wall_s: float
    cpu_s: float
    status: int

    @property
    def ratio(self) -> float:
        return self.wall_s / self.cpu_s if self.cpu_s else float("inf")


def _run(source: Path, what: str, clock: str, examples: int) -> tuple[float, float, int]:
    """Run one contract run in a child process importing mcp_testkit from `source`: its wall and CPU seconds."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    if what == "readme":
        command = [sys.executable, "-m", "mcp_testkit", "check", "-q"]
        if clock != "default":
            command += ["--clock", clock]
    else:
        command = [sys.executable, "-c", TIMEOUT_30, clock, str(examples)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=source, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
    return wall, cpu, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="DIR|REF", help="also measure this checkout or git commit (before)")
    parser.add_argument("--only", choices=["readme", "timeout30"], action="append", help="only these runs")
    parser.add_argument("--examples", type=int, default=100, help="examples per property of the timeout-30 run")
    parser.add_argument(
        "--clock", choices=["virtual", "real"], action="append", help="this checkout's clocks (default both)"
    )
    args = parser.parse_args(argv)
    whats = args.only or ["readme", "timeout30"]
    rows: list[Row] = []
    with contextlib.ExitStack() as cleanup:
        sources: list[tuple[str, Path, list[str]]] = []
        if args.baseline:
            from bench_server import baseline_checkout

            sources.append((f"baseline {args.baseline}", baseline_checkout(args.baseline, cleanup), ["default"]))
        sources.append(("this checkout", HERE.parent, args.clock or ["virtual", "real"]))
        for what in whats:
            for label, source, clocks in sources:
                for clock in clocks:
                    wall, cpu, status = _run(source, what, clock, args.examples)
                    rows.append(Row(label, what, clock, wall, cpu, status))
                    print(f"  {label:24} {what:9} {clock:8} wall {wall:7.1f} s  CPU {cpu:6.1f} s", flush=True)
    print()
    print(f"{'code':24} {'run':9} {'clock':8} {'wall s':>8} {'CPU s':>7} {'wall/CPU':>9} {'exit':>5}")
    for row in rows:
        print(
            f"{row.source:24} {row.what:9} {row.clock:8} {row.wall_s:8.1f} {row.cpu_s:7.1f} {row.ratio:9.2f} "
            f"{row.status:5d}"
        )
    virtual = [row for row in rows if row.clock == "virtual"]
    met = all(row.ratio <= 2.5 for row in virtual)
    print(f"\ntarget (issue 35): on virtual time wall <= 2.5 x CPU: {'PASS' if met else 'MISS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
