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

`--property` measures another property the same way (issue 23). P12 and P14 have a target of 50 examples/s
in-process. P10, P11 and P13 have none: their examples wait by design (P10 for the application's deadline on the
abandoned call, and in its declared cases for the bridge's own timeout and a late answer; P11's server never
answers, so each waits for the bridge's timeouts; a third of P13's hold a call for a late answer, a cancel or a
close), so what they report is how long a run of 100 examples takes, and the CPU time per example shows what is
not waiting.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import ContractHarness, check_property

TARGETS = {"asgi": 500.0, "socket": 100.0}
PROPERTY_TARGETS: dict[str, dict[str, float | None]] = {
    "P1": TARGETS,
    "P10": {"asgi": None, "socket": None},
    "P11": {"asgi": None, "socket": None},
    "P12": {"asgi": 50.0, "socket": None},
    "P13": {"asgi": None, "socket": None},
    "P14": {"asgi": 50.0, "socket": None},
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

    @property
    def label(self) -> str:
        return f"{LABELS[self.transport]}, {self.era}"

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


def _round(harness: ContractHarness, examples: int) -> tuple[int, float, float, str | None]:
    cpu = time.process_time()
    result = check_property(harness, PROPERTY, max_examples=examples)
    cpu = time.process_time() - cpu
    return result.examples, result.seconds, cpu, result.counterexample


def measure(transports: list[str], examples: int, rounds: int, eras: tuple[str, ...] = ERAS) -> list[Measure]:
    """Open a harness per transport and era, warm each up, then run the rounds interleaved."""
    measures = [Measure(t, era) for era in eras for t in transports]
    harnesses = [
        ContractHarness(ReferenceBridgeAdapter, via=m.transport, era=m.era).__enter__() for m in measures
    ]
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
        lines.append(
            f"| {m.label} | {m.rate:.1f} | {shown} | {verdict} | {m.cpu_ms:.2f} | {100 / m.rate:.1f} |"
        )
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
    transports = [args.only] if args.only else list(TARGETS)
    if args.property not in PROPERTY_TARGETS:
        print(f"note: {args.property} has no target here; its rate is reported as measured")
    print(environment())
    eras = (args.era,) if args.era else ERAS
    print(
        f"{PROPERTY} with the reference bridge: {args.rounds} round(s) of {args.examples} examples per transport "
        "and era\n"
    )
    measures = measure(transports, args.examples, args.rounds, eras)
    table, met = report(measures)
    print()
    print(table)
    for m in measures:
        if m.failure is not None:
            print(f"\n{PROPERTY} did not hold over {m.transport} in the {m.era} era:\n{m.failure}")
    failed = any(m.failure is not None for m in measures)
    return 1 if failed or (args.strict and not met) else 0


if __name__ == "__main__":
    sys.exit(main())
