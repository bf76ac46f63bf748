"""`mcp-testkit check`: run the resilience contract against bridges and print the guarantee matrix."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from mcp_testkit._wire.eras import ERAS, HANDSHAKE, STATELESS
from mcp_testkit.contract._ctrl_c import CtrlC
from mcp_testkit.contract._ticker import Ticker

if TYPE_CHECKING:
    from mcp_testkit.contract import PropertyResult

__all__ = ["add_parser", "load_factory", "run"]

_REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
_SDK_AUTO = "mcp_testkit.adapters:SdkClientAdapter"
_SDK_LEGACY = "mcp_testkit.adapters:SdkClientAdapter.legacy"
_DEFAULTS = (_REFERENCE, _SDK_AUTO, _SDK_LEGACY)
_SHIPPED = {
    # adapter spec: the module that must import for its bridge to count as installed
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter": "fastmcp",
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter": "pydantic_ai.mcp",
    "mcp_testkit.adapters.openai_agents:ServerAdapter": "agents.mcp",
    "mcp_testkit.adapters.openai_agents:InvokeAdapter": "agents.mcp",
    "mcp_testkit.adapters.openai_agents:RetryingServerAdapter": "agents.mcp",
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter": "llama_index.tools.mcp",
}
"""The adapters for third-party bridges that `--all-installed` runs when their bridge imports."""
_FELL_BACK = "fell back"
_KNOWN_FAILS: dict[str, dict[str, tuple[str, ...] | str]] = {
    _REFERENCE: {HANDSHAKE: (), STATELESS: ()},
    # P13: a connection lost under one of several calls in flight ends the SDK's one session (docs/matrix.md).
    _SDK_AUTO: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: ("P1", "P4", "P6", "P13")},
    _SDK_LEGACY: {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13"), STATELESS: _FELL_BACK},
    "mcp_testkit.adapters.fastmcp:FastMcpClientAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P7", "P13")},
    "mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P13")},
    "mcp_testkit.adapters.openai_agents:ServerAdapter": {HANDSHAKE: ("P1", "P4", "P5", "P6", "P10")},
    "mcp_testkit.adapters.openai_agents:InvokeAdapter": {HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10")},
    "mcp_testkit.adapters.llama_index:ToolSpecAdapter": {HANDSHAKE: ("P1", "P2", "P4", "P5", "P6", "P7", "P10")},
}
"""What each shipped bridge is expected to fail, era by era: the reference bridge nothing, the SDK client its
known gaps (in legacy mode it never speaks the stateless era, so there it falls back), the third-party bridges
what docs/matrix.md records (for the handshake era; their stateless era is not documented yet). Only
failures are listed: P8 and P9 are n/a, never failed, for every bridge here but the reference one (no
adapter of theirs declares approvals or a tool cache), and the closing line says so per bridge."""
_SDK_VERDICTS = 'docs/contract.md, "The SDK client\'s verdicts"'
_MATRIX_VERDICTS = "docs/matrix.md"

Verdicts = dict[str, dict[tuple[str, str], "PropertyResult"]]
"""Bridge label -> (property id, era) -> its result."""


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
        help="run the resilience contract (P1-P9, P11-P13, P5s) against bridges and print which guarantees hold",
        description=(
            "Checks the resilience properties against each bridge adapter, given as module:factory "
            "(default: the reference bridge and the official SDK client in auto and legacy mode), in both "
            "protocol eras (the handshake, and the stateless 2026-07-28), and prints a property x era x "
            "bridge matrix with a shrunk counterexample under it for every failure; a property that does "
            "not apply (to the era, or to an adapter without the capability it needs) is n/a. Exits 1 when "
            "a bridge named on the command line fails a property or falls back to the handshake era in the "
            "stateless era, 2 when a property could not be checked (an error of the harness or of an "
            "adapter)."
        ),
    )
    check.add_argument("adapters", nargs="*", metavar="module:factory", help="adapter factories to check")
    check.add_argument(
        "--examples", type=_positive, default=100, metavar="N", help="Hypothesis examples per property (default 100)"
    )
    check.add_argument("--property", action="append", dest="properties", metavar="P1", help="only this property")
    check.add_argument(
        "--era",
        action="append",
        dest="eras",
        type=_eras,
        metavar="ERA",
        help="only this protocol era: handshake or stateless (repeat it, or give both as handshake,stateless; "
        "default both)",
    )
    check.add_argument(
        "--transport",
        choices=["asgi", "socket"],
        default=None,
        help="in-process (the default) or over 127.0.0.1 (always, for a driver)",
    )
    check.add_argument(
        "--example-timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="seconds one example may take before it is reported as a hang (default: 10 plus the waits the "
        "adapter declares for the example's faults)",
    )
    check.add_argument(
        "--budget",
        type=_seconds,
        default=None,
        metavar="S",
        help=(
            "seconds one property may take, shrinking included (default: every declared case, however long the "
            "bridge's timeouts make them, then 60 s of draws and shrinking)"
        ),
    )
    check.add_argument(
        "--driver",
        action="append",
        dest="drivers",
        default=[],
        metavar="COMMAND",
        help="a driver command for a bridge in another process (docs/driver.md); runs over the socket",
    )
    check.add_argument(
        "--all-installed",
        action="store_true",
        help="also check every shipped adapter whose bridge is importable here (fastmcp, pydantic-ai, ...)",
    )
    check.add_argument("--json", metavar="FILE", help="also write every verdict, with its counterexample, to FILE")
    check.add_argument(
        "--html", metavar="FILE", help="also write the matrix as one HTML page, each cell opening its counterexample"
    )
    shown = check.add_mutually_exclusive_group()
    shown.add_argument(
        "-v", "--verbose", action="store_true", help="also print each property's coverage (what its examples exercised)"
    )
    shown.add_argument(
        "-q", "--quiet", action="store_true", help="print only the matrix, the failures and the closing line"
    )


def _eras(text: str) -> list[str]:
    """An argparse type: one era, or a comma-separated list of them."""
    named = [part.strip() for part in text.split(",")]
    unknown = [era for era in named if era not in ERAS]
    if unknown or not named:
        raise argparse.ArgumentTypeError(f"{text!r} is not an era: name handshake, stateless or both")
    return named


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
    """The object `module:attribute` (or `module:attribute.attribute`, as entry points name objects) names;
    `_BadSpec` with a clear message when it cannot be loaded."""
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
    factory: Any = module
    for part in attribute.split("."):
        try:
            factory = getattr(factory, part)
        except AttributeError:
            raise _BadSpec(f"module {module_name!r} has no {attribute!r}") from None
    if not callable(factory):
        raise _BadSpec(f"{spec!r} is not callable; it must make an adapter")
    _makes_an_adapter(spec, factory)
    return factory


_ADAPTER_MEMBERS = ("name", "page_limit", "retry", "connect", "list_tools", "call", "set_headers", "close")


def _makes_an_adapter(spec: str, factory: Any) -> None:
    """`_BadSpec`, one line, when `factory(transport=None)` raises or makes something that is not an adapter."""
    try:
        made = factory(transport=None)
    except Exception as exc:
        raise _BadSpec(
            f"{spec} did not make an adapter: {spec}(transport=None) raised {type(exc).__name__}: {exc} "
            "(an adapter factory takes transport= and returns a BridgeAdapter; see docs/adapters.md)"
        ) from None
    missing = [member for member in _ADAPTER_MEMBERS if not hasattr(made, member)]
    if missing:
        raise _BadSpec(
            f"{spec} made a {type(made).__name__}, not an adapter: it has no {', '.join(missing)} "
            "(a BridgeAdapter; see docs/adapters.md)"
        )


def _label(factory: Any, spec: str) -> str:
    """The bridge's column: the factory's `name`, else the name of an adapter it makes (a factory function or
    a classmethod has none of its own), else the spec's attribute."""
    name = getattr(factory, "name", None)
    if name is None:
        try:
            name = getattr(factory(transport=None), "name", None)
        except Exception:  # the run reports what the factory raises; here only a label is at stake
            name = None
    return str(name or spec.rpartition(":")[2])


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Run the contract, print progress, the matrix and the counterexamples; the exit status."""
    from mcp_testkit.adapters import DriverFactory
    from mcp_testkit.contract import PROPERTIES

    named = list(args.adapters) + [f"--driver {command}" for command in args.drivers]
    specs = list(args.adapters)
    if args.all_installed:
        specs += [spec for spec in (*_DEFAULTS, *_SHIPPED) if spec not in specs and _installed(spec)]
    elif not named:
        specs = list(_DEFAULTS)
    if args.drivers and args.transport == "asgi":
        print(
            "mcp-testkit check: a driver runs its bridge in another process, which reaches the server over a "
            "socket only: leave out --transport asgi",
            file=sys.stderr,
        )
        return 2
    try:
        factories: list[tuple[str, Any]] = [(spec, load_factory(spec)) for spec in specs]
    except _BadSpec as exc:
        print(f"mcp-testkit check: {exc}", file=sys.stderr)
        return 2
    factories += [(f"--driver {command}", DriverFactory(command)) for command in args.drivers]
    chosen = args.properties or list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        print(f"mcp-testkit check: unknown property {unknown[0]!r}; known: {', '.join(PROPERTIES)}", file=sys.stderr)
        return 2
    eras = tuple(dict.fromkeys(era for group in (args.eras or [list(ERAS)]) for era in group))
    labels = {spec: _label(factory, spec) for spec, factory in factories}
    if not args.quiet:
        print(_opening(labels, chosen, eras, args, named=bool(named)), file=out)
    verdicts: Verdicts = {label: {} for label in labels.values()}
    ticker = Ticker(out, args.examples) if not args.quiet and out.isatty() else None
    try:
        with CtrlC() as ctrl_c:
            for spec, factory in factories:
                label = labels[spec]
                transport = "socket" if isinstance(factory, DriverFactory) else (args.transport or "asgi")
                for era in eras:
                    _check_one(factory, label, spec, era, transport, chosen, args, verdicts[label], out, ticker, ctrl_c)
    except KeyboardInterrupt:
        if ticker is not None:
            ticker.stop()
        done = sum(len(results) for results in verdicts.values())
        print(f"\nmcp-testkit check: cut by Ctrl-C after {done} verdict{'s' * (done != 1)}; those so far:", file=out)
        _matrix(verdicts, chosen, eras, out)
        _counterexamples(verdicts, out)
        print("\nExit status 130: the run was cut; a cell marked '-' was not checked.", file=out)
        return 130
    if args.json:
        _write_json(args.json, factories, verdicts)
    if args.html:
        from mcp_testkit.contract._matrix_html import write_matrix_page

        write_matrix_page(args.html, _report(factories, verdicts))
    if not args.quiet:
        print(file=out)
    _matrix(verdicts, chosen, eras, out)
    _counterexamples(verdicts, out)
    errored = sorted({label for label, results in verdicts.items() if any(r.error for r in results.values())})
    if errored:
        print(
            f"\nExit status 2: the harness or the adapter of {', '.join(errored)} raised (ERROR above, with its "
            "traceback); that is no verdict on the bridge: fix the adapter or report the harness bug.",
            file=out,
        )
        return 2
    failed_named = [labels[spec] for spec in named if _unsettled(verdicts[labels[spec]])]
    print(f"\n{_expected(labels, verdicts, chosen, eras, failed_named, named=bool(named))}", file=out)
    return 1 if failed_named else 0


def _opening(
    labels: dict[str, str], chosen: Sequence[str], eras: Sequence[str], args: argparse.Namespace, *, named: bool
) -> str:
    """The first line: what this run compares, and (for the default run) that the SDK client's failures are known."""
    properties = ", ".join(chosen) if len(chosen) <= 3 else f"{len(chosen)} properties ({chosen[0]}-{chosen[-1]})"
    said = {HANDSHAKE: "the handshake era", STATELESS: "the stateless (2026-07-28) era"}
    where = "both eras (the handshake and 2026-07-28)" if len(eras) == 2 else said[eras[0]]
    text = (
        f"mcp-testkit check: {properties} against {', '.join(labels.values())}, in {where}, "
        f"{args.examples} example{'s' * (args.examples != 1)} per property"
    )
    if not named and any(spec in _KNOWN_FAILS and spec != _REFERENCE for spec in labels):
        text += (
            "; the reference bridge holds every one, and the SDK client's failures below are known and expected "
            f"({_SDK_VERDICTS})"
        )
    return text + "."


def _check_one(
    factory: Any,
    label: str,
    spec: str,
    era: str,
    transport: str,
    chosen: Sequence[str],
    args: argparse.Namespace,
    results: dict[tuple[str, str], PropertyResult],
    out: TextIO,
    ticker: Ticker | None,
    ctrl_c: CtrlC,
) -> None:
    """Run the contract on one bridge in one era, printing a line per property as it ends; none after Ctrl-C."""
    from mcp_testkit.contract import run_contract

    if not args.quiet:
        print(
            f"checking {label} ({spec}) in the {era} era, {args.examples} examples per property, {transport}",
            file=out,
        )
    pending = list(chosen)

    def progress(result: PropertyResult) -> None:
        ctrl_c.check()  # a verdict reached after Ctrl-C may be the interrupt's doing: the cell stays '-'
        results[result.property_id, era] = result
        if ticker is not None:
            ticker.stop()
        if not args.quiet:
            print(
                f"  {result.property_id:3} {result.mark:9} {result.examples:4} examples {result.seconds:6.1f} s  "
                f"{result.title}",
                file=out,
            )
            if args.verbose:
                print(f"        coverage: {result.coverage_line()}", file=out)
            # An n/a result's one note is its reason, which its mark and the matrix already give.
            for note in () if result.not_applicable else result.notes:
                print(f"        note: {note}", file=out)
        out.flush()
        following = pending.index(result.property_id) + 1 if result.property_id in pending else len(pending)
        if ticker is not None and following < len(pending):
            ticker.start(f"  {pending[following]:3} running")

    def example(_: str, number: int, shrinking: bool) -> None:
        ctrl_c.check()  # within an example of Ctrl-C, even where a bridge's code swallowed the KeyboardInterrupt
        if ticker is not None:
            ticker.example(number, shrinking)

    if ticker is not None and pending:
        ticker.start(f"  {pending[0]:3} running")
    for result in run_contract(
        factory,
        max_examples=args.examples,
        properties=chosen,
        eras=(era,),
        via=transport,
        example_timeout_s=args.example_timeout,
        budget_s=args.budget,
        progress=progress,
        on_example=example,
    ):
        results[result.property_id, era] = result
    if ticker is not None:
        ticker.stop()


def _unsettled(results: dict[tuple[str, str], PropertyResult]) -> bool:
    """Whether a bridge fails a property or hangs, or has no verdict in an era it was checked in (it fell back)."""
    return any(r.failed or r.hung or r.status == "fell_back" for r in results.values())


def _in_eras(parts: dict[str, str], eras: Sequence[str]) -> str:
    """`P1, P5 in the handshake era and P1 in the stateless era`, or without the era when only one is checked."""
    if len(eras) == 1:
        return parts[eras[0]]
    if len(set(parts.values())) == 1:
        return f"{parts[eras[0]]} in both eras"
    return " and ".join(f"{text} in the {era} era" for era, text in parts.items())


def _expected(
    labels: dict[str, str],
    verdicts: Verdicts,
    chosen: Sequence[str],
    eras: Sequence[str],
    failed_named: Sequence[str],
    *,
    named: bool,
) -> str:
    """The closing line: which verdicts were expected, any that were not, and what the exit status means."""
    from mcp_testkit.contract import PROPERTIES

    def failures(label: str, era: str) -> list[str]:
        return [
            p + (" (hung)" if verdicts[label][p, era].hung else "")
            for p in chosen
            if verdicts[label][p, era].failed or verdicts[label][p, era].hung
        ]

    def fell_back(label: str, era: str) -> bool:
        return any(verdicts[label][p, era].status == "fell_back" for p in chosen)

    def shortfalls(label: str, era: str) -> list[str]:
        if fell_back(label, era):
            return [f"{_FELL_BACK} in the {era} era"]
        return [f"{p} in the {era} era" for p in failures(label, era)]

    def inapplicable(label: str, to: str) -> str:
        """`P8, P9 do not apply to {to} (...)`: what this bridge gets no verdict on for want of a capability or a
        declared fact (P11, P13); "" when none. A property of another era (P5, P5s) is n/a for every bridge there,
        and goes unsaid."""
        parts = {
            era: [p for p in chosen if era in PROPERTIES[p].eras and verdicts[label][p, era].not_applicable]
            for era in eras
        }
        skipped = list(dict.fromkeys(p for names in parts.values() for p in names))
        if not skipped:
            return ""
        if len({tuple(names) for names in parts.values()}) == 1:
            which = ", ".join(skipped)
        else:
            which = " and ".join(f"{', '.join(names)} in the {era} era" for era, names in parts.items() if names)
        verb = "does" if len(skipped) == 1 else "do"
        return f"{which} {verb} not apply to {to} (its adapter declares no capability or fact they need)"

    if named:
        if failed_named:
            which = "; ".join(
                f"{label}: {', '.join(said for era in eras for said in shortfalls(label, era))}"
                for label in failed_named
            )
            if any(fell_back(label, era) for label in failed_named for era in eras):
                return (
                    "Exit status 1: a bridge named on the command line fails a property, or fell back to the "
                    f"handshake era where the stateless era was checked ({which}); check a bridge of the handshake "
                    "era only with --era handshake."
                )
            return f"Exit status 1: a bridge named on the command line fails a property ({which})."
        skipped = "; ".join(text for label in verdicts if (text := inapplicable(label, label)))
        return "Exit status 0: every bridge named on the command line holds every property checked" + (
            f"; {skipped}." if skipped else "."
        )
    expected, surprises = [], []
    for spec, label in labels.items():
        known = _KNOWN_FAILS.get(spec, {})
        said: dict[str, str] = {}
        for era in eras:
            if era not in known and spec in _SHIPPED:
                said[era] = "is not documented"
                continue
            wanted = known.get(era, ())
            if wanted == _FELL_BACK:
                said[era] = "falls back to the handshake"
                if not fell_back(label, era):
                    surprises.append(f"{label} speaks the {era} era here (update {_SDK_VERDICTS})")
                continue
            fails = [p for p in wanted if p in chosen]
            said[era] = f"fails {', '.join(fails)}" if fails else "holds every property checked"
            if fell_back(label, era):
                surprises.append(f"{label} fell back to the handshake era in the {era} era (a bug: please report it)")
                continue
            if wrong := [p for p in failures(label, era) if p not in fails]:
                surprises.append(
                    f"{label} fails {', '.join(wrong)} in the {era} era, which it should hold (a bug: please report it)"
                )
            if held := [p for p in fails if verdicts[label][p, era].passed]:
                surprises.append(
                    f"{label} holds {', '.join(held)} in the {era} era here (too few --examples to find the known "
                    "failure)"
                )
        documented = any(text != "holds every property checked" for text in said.values())
        where = _SDK_VERDICTS if spec in _DEFAULTS else _MATRIX_VERDICTS
        as_documented = f", as documented ({where})" if documented else ""
        skipped = inapplicable(label, "it")
        expected.append(f"{label} {_in_eras(said, eras)}{as_documented}" + (f", and {skipped}" if skipped else ""))
    text = "Expected: " + "; ".join(expected) + "."
    if surprises:
        text += f" UNEXPECTED: {'; '.join(surprises)}."
    return text + (
        " Exit status 0: no bridge was named, so this run only reports;"
        " name yours (module:factory) to get exit status 1 when it fails a property."
    )


def _installed(spec: str) -> bool:
    """Whether the bridge of a shipped adapter imports here (the reference bridge and SDK client always do)."""
    module = _SHIPPED.get(spec)
    if module is None:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


def _write_json(path: str, factories: Sequence[tuple[str, Any]], verdicts: Verdicts) -> None:
    """Every verdict as JSON: per bridge, its spec and per `property@era` the status, counts and counterexample."""
    with open(path, "w", encoding="utf-8") as file:
        json.dump(_report(factories, verdicts), file, indent=2, sort_keys=True)
        file.write("\n")


def _report(factories: Sequence[tuple[str, Any]], verdicts: Verdicts) -> dict[str, Any]:
    """The verdicts as JSON data (what --json writes and --html draws); a failure keeps its example's requests."""
    specs = {_label(factory, spec): spec for spec, factory in factories}
    report = {
        label: {
            "spec": specs[label],
            "properties": {
                f"{pid}@{era}": {
                    "status": result.status,
                    "examples": result.examples,
                    "seconds": round(result.seconds, 2),
                    "counterexample": result.counterexample,
                    "notes": list(result.notes),
                    "coverage": dict(result.coverage),
                    **({"journal": [record.to_json() for record in result.journal]} if result.journal else {}),
                }
                for (pid, era), result in results.items()
            },
        }
        for label, results in verdicts.items()
    }
    return report


def _matrix(verdicts: Verdicts, chosen: Sequence[str], eras: Sequence[str], out: TextIO) -> None:
    """A row per property and era, a column per bridge; titles wrapped in their column, never cut."""
    from mcp_testkit.contract import PROPERTIES

    labels = list(verdicts)
    widths = [max(len(label), 9) for label in labels]
    title_width = 56
    header = (
        "property".ljust(title_width + 2)
        + "era".ljust(11)
        + "  ".join(label.ljust(width) for label, width in zip(labels, widths, strict=True))
    )
    print(header.rstrip(), file=out)
    print("-" * len(header.rstrip()), file=out)
    for property_id in chosen:
        title = textwrap.wrap(f"{property_id} {PROPERTIES[property_id].title}", title_width, subsequent_indent="    ")
        for index in range(max(len(eras), len(title))):
            era = eras[index] if index < len(eras) else ""
            cells = [
                (verdicts[label][property_id, era].mark if (property_id, era) in verdicts[label] else "-").ljust(width)
                for label, width in zip(labels, widths, strict=True)
            ] if era else []
            first = title[index] if index < len(title) else ""
            print((first.ljust(title_width + 2) + era.ljust(11) + "  ".join(cells)).rstrip(), file=out)


def _counterexamples(verdicts: Verdicts, out: TextIO) -> None:
    for label, results in verdicts.items():
        shown_fallback: set[str] = set()
        for (property_id, era), result in results.items():
            if result.passed or result.not_applicable or result.status == "not_run":
                continue
            if result.status == "fell_back":
                if era in shown_fallback:
                    continue
                shown_fallback.add(era)
                print(f"\n{label} has no verdict in the {era} era (it fell back to the handshake era):", file=out)
            elif result.error:
                what = f"{property_id} ({result.title}) could not be checked in the {era} era (error)"
                print(f"\n{label}: {what}:", file=out)
            elif result.hung:
                print(f"\n{label} hung in an example of {property_id} ({result.title}) in the {era} era:", file=out)
            else:
                print(f"\n{label} fails {property_id} ({result.title}) in the {era} era:", file=out)
            for line in (result.counterexample or "(no counterexample)").splitlines():
                print(f"    {line}", file=out)
