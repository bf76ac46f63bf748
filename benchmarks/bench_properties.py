"""Hypothesis examples per second of a property (the listing property P1 by default), with the reference bridge,
in-process and over loopback, in each protocol era.

Run it from the repository root::

    python benchmarks/bench_properties.py            # 3 rounds of 500 examples per transport and era, best kept
    python benchmarks/bench_properties.py --quick    # 1 round of 100 examples per transport and era
    python benchmarks/bench_properties.py --era stateless
    python benchmarks/bench_properties.py --property P13 --examples 100 --rounds 1

Each round is one `check_property(harness, "P1", max_examples=N)` on a `ContractHarness` that stays
open across rounds, as it does across the properties of a contract run. The handshake era's harness
serves that era only and the bridge opens a session (`initialize`, `notifications/initialized`,
the listing, a DELETE); the stateless era's serves both eras and the bridge probes with
`server/discover`, then lists, with no session to open or end. `asgi` routes the bridge's
HTTP through `httpx2.ASGITransport` into the server's app, `socket` serves it with uvicorn on
127.0.0.1 in the same process. A warm-up round comes first and is not counted. Every example is a
fresh server reset, a fresh bridge, a connect with the whole paged listing under up to two listing
faults, and a close; the property's declared cases (every listing fault class, a listing of exactly
the page limit) run first and count, as in a contract run. Transports and eras are measured in
interleaved rounds and the best is kept, since other load only ever slows a round down; the process
CPU time per example is printed beside it as a cross-check that such load hardly changes. Targets
(issue 12), in each era: 500 examples/s in-process, 100 over loopback. The exit status is 1 with
`--strict` when a target is missed, or when P1 does not hold.

`--property` measures another property the same way (issue 23). P12, P14, P15, P18 and P19 have a target of 50
examples/s in-process. P10, P11 and P13 have none: their examples wait by design (P10 for the application's deadline
on the abandoned call, and in its declared cases for the bridge's own timeout and a late answer; P11's server never
answers, so each waits for the bridge's timeouts; a third of P13's hold a call for a late answer, a cancel or a
close), so what they report is how long a run of 100 examples takes, and the CPU time per example shows what is
not waiting.

``--baseline DIR|REF`` (a checkout, or a git commit of this repository; it may be given more than once) measures
the property as that code has it beside this checkout's, in one run. Each round of each checkout is then a
process of its own (a warm-up, then the round), and the rounds alternate between the checkouts, so that each
meets the same load. On a shared virtual machine whose CPU runs faster or slower from one hour to the next, that
before/after is what tells whether a change made a property slower; a rate measured on another day does not.
``--count`` reports the Python function calls per example instead (cProfile's count over one round, Hypothesis'
own calls included), a figure no load moves.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

TARGETS: dict[str, float | None] = {"asgi": 500.0, "socket": 100.0}
PROPERTY_TARGETS: dict[str, dict[str, float | None]] = {
    "P1": TARGETS,
    "P10": {"asgi": None, "socket": None},
    "P11": {"asgi": None, "socket": None},
    "P12": {"asgi": 50.0, "socket": None},
    "P13": {"asgi": None, "socket": None},
    "P14": {"asgi": 50.0, "socket": None},
    "P18": {"asgi": 50.0, "socket": None},
    "P15": {"asgi": 50.0, "socket": None},
    "P19": {"asgi": 50.0, "socket": None},
}
"""Examples/s each property must reach, by transport; None: no target. P10, P11 and P13 wait by design."""
PROPERTY = "P1"
LABELS = {"asgi": "in-process (ASGI)", "socket": "loopback (socket)"}
ERAS = ("handshake", "stateless")


@dataclass
class Measure:
    """The rounds of one transport in one era: examples, wall seconds and process CPU seconds of each."""

    transport: str
    era: str = "handshake"
    rounds: list[tuple[int, float, float]] = field(default_factory=list)
    failure: str | None = None
    source: str = "this"
    """Whose code: "this" checkout, or the --baseline it names."""
    calls: float | None = None
    """Python function calls per example (--count)."""

    @property
    def label(self) -> str:
        whose = "" if self.source == "this" else f" [{self.source}]"
        return f"{LABELS[self.transport]}, {self.era}{whose}"

    def best(self) -> tuple[int, float, float]:
        return max(self.rounds, key=lambda r: r[0] / r[1])

    @property
    def rate(self) -> float:
        examples, seconds, _ = self.best()
        return examples / seconds

    @property
    def cpu_ms(self) -> float:
        examples, _, cpu = self.best()
        return 1000 * cpu / examples

    @property
    def median_cpu_ms(self) -> float:
        """The median round's CPU per example: a before/after on a noisy machine compares these, not one best."""
        return statistics.median(1000 * cpu / examples for examples, _, cpu in self.rounds)


def _round(harness: Any, examples: int) -> tuple[int, float, float, str | None]:
    from mcp_testkit.contract import check_property

    cpu = time.process_time()
    result = check_property(harness, PROPERTY, max_examples=examples)
    cpu = time.process_time() - cpu
    return result.examples, result.seconds, cpu, result.counterexample


def _harness(transport: str, era: str) -> Any:
    """An open harness of whichever checkout is imported (before issue 21, `via` was called `transport`)."""
    from mcp_testkit.adapters import ReferenceBridgeAdapter
    from mcp_testkit.contract import ContractHarness

    keyword = "via" if "via" in inspect.signature(ContractHarness).parameters else "transport"
    options: dict[str, Any] = {keyword: transport, "era": era}
    return ContractHarness(ReferenceBridgeAdapter, **options).__enter__()


def _counted(harness: Any, examples: int) -> tuple[int, float, str | None]:
    """One round under cProfile: the examples, the Python function calls each cost, and the failure if any."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    try:
        done, _, _, failure = _round(harness, examples)
    finally:
        profile.disable()
    return done, pstats.Stats(profile).total_calls / done, failure  # type: ignore[attr-defined]


def worker(transport: str, era: str, examples: int, count: bool) -> None:
    """One round in this process (for --baseline): a warm-up, then the round; its figures as a JSON line."""
    harness = _harness(transport, era)
    try:
        _round(harness, min(examples, 50))
        figures: dict[str, Any] = {"calls": None}
        if count:
            done, figures["calls"], failure = _counted(harness, examples)
            seconds = cpu = 0.0
        else:
            done, seconds, cpu, failure = _round(harness, examples)
        figures.update(examples=done, seconds=seconds, cpu=cpu, failure=failure)
        print(json.dumps(figures))
    finally:
        harness.__exit__(None, None, None)


def _one_round(source: Path, measure_: Measure, examples: int, count: bool) -> dict[str, Any]:
    """One round of `source`'s code in a process of its own."""
    command = [sys.executable, str(HERE / "bench_properties.py"), "--worker", measure_.transport, measure_.era]
    command += ["--examples", str(examples), "--property", PROPERTY, *(["--count"] if count else [])]
    path = os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(command, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_properties.py: a round of the code in {source} failed:\n{done.stderr[-3000:]}")
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def measure_sources(
    sources: dict[str, Path], transports: list[str], examples: int, rounds: int, eras: tuple[str, ...], count: bool
) -> list[Measure]:
    """Each checkout's rounds, a process each, alternating between the checkouts within a transport and era."""
    measures = [Measure(t, era, source=name) for era in eras for t in transports for name in sources]
    for number in range(1, (1 if count else rounds) + 1):
        for measure_ in measures:
            got = _one_round(sources[measure_.source], measure_, examples, count)
            measure_.failure = got["failure"] or measure_.failure
            done, seconds, cpu = got["examples"], got["seconds"], got["cpu"]
            if count:
                measure_.calls = got["calls"]
                measure_.rounds.append((done, 1.0, 0.0))
                print(f"  {measure_.label:50} {got['calls']:8.0f} Python calls/example", flush=True)
                continue
            measure_.rounds.append((done, seconds, cpu))
            print(
                f"  round {number}: {measure_.label:50} {done:4} examples in {seconds:6.2f} s "
                f"({done / seconds:6.1f}/s, CPU {1000 * cpu / done:5.2f} ms/example)",
                flush=True,
            )
    return measures


def compare(measures: list[Measure], count: bool) -> str:
    """Each baseline against this checkout, per transport and era: Python calls per example (--count), else the
    best round's examples/s and the median round's CPU per example."""
    mine = {(m.transport, m.era): m for m in measures if m.source == "this"}
    unit = "Python calls/example" if count else "examples/s (best round), CPU ms/example (median round)"
    lines = [f"before -> after, {unit}:"]
    for m in measures:
        after = mine[(m.transport, m.era)]
        if m.source == "this":
            continue
        where = f"{LABELS[m.transport]}, {m.era}"
        if count:
            assert m.calls is not None
            assert after.calls is not None
            change = f"{100 * (after.calls / m.calls - 1):+.1f}%"
            lines.append(f"  {where:32} {m.source:>12}: {m.calls:8.0f} -> {after.calls:8.0f} ({change})")
        else:
            change = f"{100 * (after.median_cpu_ms / m.median_cpu_ms - 1):+.1f}% CPU"
            lines.append(
                f"  {where:32} {m.source:>12}: {m.rate:6.1f}/s -> {after.rate:6.1f}/s, "
                f"{m.median_cpu_ms:5.2f} -> {after.median_cpu_ms:5.2f} ms ({change})"
            )
    return "\n".join(lines)


def measure(transports: list[str], examples: int, rounds: int, eras: tuple[str, ...] = ERAS) -> list[Measure]:
    """Open a harness per transport and era, warm each up, then run the rounds interleaved."""
    measures = [Measure(t, era) for era in eras for t in transports]
    harnesses = [_harness(m.transport, m.era) for m in measures]
    try:
        for harness in harnesses:
            _round(harness, min(examples, 50))
        for number in range(1, rounds + 1):
            for measure_, harness in zip(measures, harnesses, strict=True):
                done, seconds, cpu, failure = _round(harness, examples)
                if failure is not None:
                    measure_.failure = failure
                measure_.rounds.append((done, seconds, cpu))
                print(
                    f"  round {number}: {measure_.label:29} {done:4} examples in {seconds:6.2f} s "
                    f"({done / seconds:6.1f}/s, CPU {1000 * cpu / done:5.2f} ms/example)",
                    flush=True,
                )
    finally:
        for harness in harnesses:
            harness.__exit__(None, None, None)
    return measures


def report(measures: list[Measure]) -> tuple[str, bool]:
    """The table of best rounds against the targets; whether every target was met."""
    lines = [
        f"| {PROPERTY}, reference bridge, era | examples/s | target | verdict | CPU ms/example | s per 100 examples |",
        "| --- | ---: | ---: | --- | ---: | ---: |",
    ]
    met = True
    targets = PROPERTY_TARGETS[PROPERTY]
    for m in measures:
        target = targets.get(m.transport)
        ok = (target is None or m.rate >= target) and m.failure is None
        met &= ok
        verdict = "PASS" if ok else (f"FAIL ({PROPERTY} did not hold)" if m.failure else "MISS")
        shown = f">= {target:.0f}" if target is not None else "none (waits)"
        lines.append(f"| {m.label} | {m.rate:.1f} | {shown} | {verdict} | {m.cpu_ms:.2f} | {100 / m.rate:.1f} |")
    return "\n".join(lines), met


def environment() -> str:
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in ("hypothesis", "mcp", "httpx2", "uvicorn"))
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    return f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs, load {load}; {versions}"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=500, help="examples of P1 per round (default 500)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per transport, best kept (default 3)")
    parser.add_argument("--quick", action="store_true", help="one round of 100 examples per transport")
    parser.add_argument("--only", choices=sorted(TARGETS), help="measure one transport only")
    parser.add_argument("--era", choices=ERAS, help="measure one protocol era only")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--property", choices=sorted(PROPERTY_TARGETS), default="P1", help="the property (default P1)")
    parser.add_argument(
        "--baseline", action="append", metavar="DIR|REF", help="also measure this checkout or git commit, in one run"
    )
    parser.add_argument("--count", action="store_true", help="Python function calls per example (one round)")
    parser.add_argument("--worker", nargs=2, metavar=("TRANSPORT", "ERA"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.examples, args.rounds = 100, 1
    if args.examples < 1 or args.rounds < 1:
        parser.error("--examples and --rounds must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    global PROPERTY
    args = parse_args(argv)
    PROPERTY = args.property
    if args.worker:
        transport, era = args.worker
        worker(transport, era, args.examples, args.count)
        return 0
    transports = [args.only] if args.only else list(TARGETS)
    print(environment())
    eras = (args.era,) if args.era else ERAS
    rounds = 1 if args.count else args.rounds
    print(
        f"{PROPERTY} with the reference bridge: {rounds} round(s) of {args.examples} examples per transport and era\n"
    )
    with contextlib.ExitStack() as cleanup:
        if args.baseline or args.count:
            from bench_server import baseline_checkout

            sources = {spec: baseline_checkout(spec, cleanup) for spec in args.baseline or []}
            sources["this"] = HERE.parent
            measures = measure_sources(sources, transports, args.examples, args.rounds, eras, args.count)
        else:
            measures = measure(transports, args.examples, args.rounds, eras)
    print()
    met = True
    if not args.count:
        table, met = report(measures)
        print(table)
    if args.baseline:
        print()
        print(compare(measures, args.count))
    for m in measures:
        if m.failure is not None:
            print(f"\n{PROPERTY} did not hold over {m.transport} in the {m.era} era ({m.source}):\n{m.failure}")
    failed = any(m.failure is not None for m in measures)
    return 1 if failed or (args.strict and not met) else 0


if __name__ == "__main__":
    sys.exit(main())
