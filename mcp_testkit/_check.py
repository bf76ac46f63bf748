"""`mcp-testkit check`: run the resilience contract against bridges and print the guarantee matrix."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mcp_testkit.contract import PropertyResult

__all__ = ["add_parser", "load_factory", "run"]

_DEFAULTS = ("mcp_testkit.adapters:ReferenceBridgeAdapter", "mcp_testkit.adapters:SdkClientAdapter")
_KNOWN_FAILS = {_DEFAULTS[0]: (), _DEFAULTS[1]: ("P1", "P5", "P6")}
"""What each shipped bridge is expected to fail: the reference bridge nothing, the SDK client its known gaps."""
_SDK_VERDICTS = 'docs/contract.md, "The SDK client\'s verdicts"'


def _positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"{number} is too few: check at least 1 example per property")
    return number


def add_parser(commands: Any) -> None:
    """Register `check` on the CLI's subcommands."""
    check = commands.add_parser(
        "check",
        help="run the resilience contract (P1-P9) against bridges and print which guarantees hold",
        description=(
            "Checks the resilience properties P1-P9 against each bridge adapter, given as module:factory "
            "(default: the reference bridge and the official SDK client), and prints a property x bridge "
            "matrix with a shrunk counterexample under it for every failure. Exits 1 when a bridge named "
            "on the command line fails a property, 2 when a property could not be checked (an error of "
            "the harness or of an adapter)."
        ),
    )
    check.add_argument("adapters", nargs="*", metavar="module:factory", help="adapter factories to check")
    check.add_argument(
        "--examples", type=_positive, default=100, metavar="N", help="Hypothesis examples per property (default 100)"
    )
    check.add_argument("--property", action="append", dest="properties", metavar="P1", help="only this property")
    check.add_argument(
        "--transport", choices=["asgi", "socket"], default="asgi", help="in-process (default) or over 127.0.0.1"
    )
    check.add_argument(
        "--example-timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="seconds one example may take before it is reported as a hang (default 10)",
    )
    check.add_argument(
        "--budget",
        type=_seconds,
        default=60.0,
        metavar="S",
        help="seconds one property may take, shrinking included (default 60)",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive number of seconds")
    return value


class _BadSpec(Exception):
    """A module:factory that cannot be loaded; the message says why."""


def load_factory(spec: str) -> Any:
    """The object `module:attribute` names; `_BadSpec` with a clear message when it cannot be loaded."""
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise _BadSpec(f"{spec!r} is not module:factory (e.g. mypkg.testing:MyAdapter)")
    here = os.getcwd()
    if here not in sys.path and "" not in sys.path:
        # As `python -m` does: a module of the current folder can be named, as from the console script too.
        sys.path.insert(0, here)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _BadSpec(f"cannot import {module_name!r}: {exc}") from None
    try:
        factory = getattr(module, attribute)
    except AttributeError:
        raise _BadSpec(f"module {module_name!r} has no {attribute!r}") from None
    if not callable(factory):
        raise _BadSpec(f"{spec!r} is not callable; it must make an adapter")
    return factory


def _label(factory: Any, spec: str) -> str:
    return str(getattr(factory, "name", None) or spec.rpartition(":")[2])


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Run the contract, print progress, the matrix and the counterexamples; the exit status."""
    from mcp_testkit.contract import PROPERTIES, run_contract

    named = list(args.adapters)
    specs = named or list(_DEFAULTS)
    try:
        factories = [(spec, load_factory(spec)) for spec in specs]
    except _BadSpec as exc:
        print(f"mcp-testkit check: {exc}", file=sys.stderr)
        return 2
    chosen = args.properties or list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        print(f"mcp-testkit check: unknown property {unknown[0]!r}; known: {', '.join(PROPERTIES)}", file=sys.stderr)
        return 2
    verdicts: dict[str, dict[str, PropertyResult]] = {}
    for spec, factory in factories:
        label = _label(factory, spec)
        print(f"checking {label} ({spec}), {args.examples} examples per property, {args.transport}", file=out)

        def progress(result: PropertyResult) -> None:
            print(
                f"  {result.property_id} {result.mark:5} {result.examples:4} examples {result.seconds:6.1f} s  "
                f"{result.title}",
                file=out,
            )
            if not result.not_applicable:
                print(f"       coverage: {result.coverage_line()}", file=out)
            for note in result.notes:
                print(f"       note: {note}", file=out)
            out.flush()

        results = run_contract(
            factory,
            max_examples=args.examples,
            properties=chosen,
            transport=args.transport,
            example_timeout=args.example_timeout,
            budget=args.budget,
            progress=progress,
        )
        verdicts[label] = {result.property_id: result for result in results}
    print(file=out)
    _matrix(verdicts, chosen, out)
    _counterexamples(verdicts, out)
    errored = sorted({label for label, results in verdicts.items() if any(r.error for r in results.values())})
    if errored:
        print(
            f"\nExit status 2: the harness or the adapter of {', '.join(errored)} raised (ERROR above, with its "
            "traceback); that is no verdict on the bridge: fix the adapter or report the harness bug.",
            file=out,
        )
        return 2
    failed_named = [
        _label(factory, spec)
        for spec, factory in factories
        if spec in named and any(r.failed for r in verdicts[_label(factory, spec)].values())
    ]
    print(f"\n{_expected(factories, verdicts, chosen, failed_named, named=bool(named))}", file=out)
    return 1 if failed_named else 0


def _expected(
    factories: Sequence[tuple[str, Any]],
    verdicts: dict[str, dict[str, PropertyResult]],
    chosen: Sequence[str],
    failed_named: Sequence[str],
    *,
    named: bool,
) -> str:
    """The closing line: which verdicts were expected, any that were not, and what the exit status means."""

    def failures(label: str) -> list[str]:
        return [p for p in chosen if verdicts[label][p].failed]

    def inapplicable(label: str) -> str:
        skipped = [p for p in chosen if verdicts[label][p].not_applicable]
        if not skipped:
            return ""
        verb = "does" if len(skipped) == 1 else "do"
        return f", and {', '.join(skipped)} {verb} not apply to it (its adapter declares no capability they need)"

    if named:
        if failed_named:
            which = "; ".join(f"{label}: {', '.join(failures(label))}" for label in failed_named)
            return f"Exit status 1: a bridge named on the command line fails a property ({which})."
        skipped = "; ".join(f"{label}{inapplicable(label)}" for label in verdicts if inapplicable(label))
        return "Exit status 0: every bridge named on the command line holds every property checked" + (
            f"; {skipped}." if skipped else "."
        )
    expected, surprises = [], []
    for spec, factory in factories:
        label = _label(factory, spec)
        known = [p for p in _KNOWN_FAILS.get(spec, ()) if p in chosen]
        if known:
            expected.append(f"{label} fails {', '.join(known)}, as documented ({_SDK_VERDICTS}){inapplicable(label)}")
        else:
            expected.append(f"{label} holds every property checked{inapplicable(label)}")
        if wrong := [p for p in failures(label) if p not in known]:
            surprises.append(f"{label} fails {', '.join(wrong)}, which it should hold (a bug: please report it)")
        if held := [p for p in known if p not in failures(label)]:
            surprises.append(f"{label} holds {', '.join(held)} here (too few --examples to find the known failure)")
    said = "Expected: " + "; ".join(expected) + "."
    if surprises:
        said += f" UNEXPECTED: {'; '.join(surprises)}."
    return said + (
        " Exit status 0: no bridge was named, so this run only reports;"
        " name yours (module:factory) to get exit status 1 when it fails a property."
    )


def _matrix(verdicts: dict[str, dict[str, PropertyResult]], chosen: Sequence[str], out: TextIO) -> None:
    from mcp_testkit.contract import PROPERTIES

    labels = list(verdicts)
    widths = [max(len(label), 5) for label in labels]
    header = "property".ljust(82) + "  ".join(label.ljust(width) for label, width in zip(labels, widths, strict=True))
    print(header, file=out)
    print("-" * len(header), file=out)
    for property_id in chosen:
        title = f"{property_id} {PROPERTIES[property_id].title}"
        cells = []
        for label, width in zip(labels, widths, strict=True):
            result = verdicts[label][property_id]
            cells.append(result.mark.ljust(width))
        print(title[:80].ljust(82) + "  ".join(cells), file=out)


def _counterexamples(verdicts: dict[str, dict[str, PropertyResult]], out: TextIO) -> None:
    for label, results in verdicts.items():
        for result in results.values():
            if result.passed or result.not_applicable:
                continue
            if result.error:
                print(f"\n{label}: {result.property_id} ({result.title}) could not be checked (error):", file=out)
            else:
                print(f"\n{label} fails {result.property_id} ({result.title}):", file=out)
            for line in (result.counterexample or "(no counterexample)").splitlines():
                print(f"    {line}", file=out)
