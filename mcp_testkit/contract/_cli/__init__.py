"""`mcp-testkit check`: run the resilience contract against bridges and print the guarantee matrix.

The adapters and how they load are `_adapter_specs.py`'s, the lines printed as it runs `_progress.py`'s, the matrix
`_matrix_text.py`'s, the header and the judgement of the verdicts `_expectations.py`'s, the lines under the matrix
`_summary.py`'s, the file of counterexamples `_details.py`'s, the JSON and HTML `_report.py`'s and `_matrix_html.py`'s;
this module holds the options and the run in order.

Exit status: 0 every property holds or fails as expected, 1 a property fails (or hangs, or falls back) where it was
not expected to, 2 a usage or configuration error (before anything runs), 3 the tool's own crash or an adapter's
(an ERROR verdict), 130 Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

from mcp_testkit._wire.eras import ERAS
from mcp_testkit.contract._cli._adapter_specs import BadSpec, chosen_specs, label, load_factory
from mcp_testkit.contract._cli._details import DETAILS, write_details
from mcp_testkit.contract._cli._expectations import judge, opening_lines
from mcp_testkit.contract._cli._keep import add_keep_option, keep_failures
from mcp_testkit.contract._cli._matrix_text import counterexamples, matrix
from mcp_testkit.contract._cli._progress import Progress
from mcp_testkit.contract._cli._report import Verdicts, report, write_json
from mcp_testkit.contract._cli._summary import summary_lines, verdict_line
from mcp_testkit.contract._cli._ticker import Ticker
from mcp_testkit.contract._ctrl_c import CtrlC

__all__ = ["add_parser", "run"]


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
            "bridge matrix, a line per verdict nobody expected, and writes every counterexample in full to "
            f"{DETAILS} (-v prints them); a property that does not apply (to the era, or to an adapter without "
            "the capability it needs) is n/a. Exit status: 0 every property holds or fails as expected (the "
            "shipped bridges' known failures), 1 a property fails, hangs or falls back where it was not "
            "expected to (a bridge named on the command line is expected to hold all), 2 a usage or "
            "configuration error, 3 a property could not be checked (the adapter or the tool itself raised)."
        ),
    )
    _what_to_check(check)
    _how_to_run(check)
    _what_to_share(check)
    _what_to_write(check)
    add_keep_option(check)


def _what_to_check(check: Any) -> None:
    """The bridges, properties and eras."""
    check.add_argument("adapters", nargs="*", metavar="module:factory", help="adapter factories to check")
    check.add_argument(
        "--examples", type=_positive, default=100, metavar="N", help="Hypothesis examples per property (default 100)"
    )
    check.add_argument(
        "--property",
        action="append",
        dest="properties",
        metavar="P1",
        help="only this property (repeatable); a property is blocked where the bridge fails P0's declared cases",
    )
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


def _how_to_run(check: Any) -> None:
    """The transport, the clock and the time limits."""
    check.add_argument(
        "--transport",
        choices=["asgi", "socket"],
        default=None,
        help="in-process (the default) or over 127.0.0.1 (always, for a driver)",
    )
    check.add_argument(
        "--clock",
        choices=["virtual", "real"],
        default=None,
        help="in-process, examples run on virtual time (the default: declared timeouts cost no wall time, and a "
        "failure is confirmed on the real clock before it is reported); 'real' waits them out. Over a socket the "
        "clock is always the real one",
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


def _what_to_share(check: Any) -> None:
    """The example database runs share."""
    check.add_argument(
        "--database",
        metavar="DIR|redis://HOST:PORT",
        help="keep the failing examples Hypothesis finds in this folder, or in a Redis server (pip install "
        "'hypothesis[redis]'), and try those it holds first: a failure found by one run, here or on another "
        "machine sharing it, is the first example of the next (default: none kept)",
    )


def _example_database(args: argparse.Namespace) -> str | None:
    """Open `--database` into `args.example_db` (None without it); why it cannot be opened, or None."""
    from mcp_testkit.contract._database import example_database

    try:
        args.example_db = example_database(getattr(args, "database", None))
    except ValueError as exc:
        return f"--database: {exc}"
    return None


def _what_to_write(check: Any) -> None:
    """The reports and how much is printed."""
    check.add_argument("--json", metavar="FILE", help="also write every verdict, with its counterexample, to FILE")
    check.add_argument(
        "--html", metavar="FILE", help="also write the matrix as one HTML page, each cell opening its counterexample"
    )
    shown = check.add_mutually_exclusive_group()
    shown.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also print a line per property (with its coverage and notes) and every counterexample in full",
    )
    shown.add_argument(
        "-q", "--quiet", action="store_true", help="print only the matrix, the failures and the closing line"
    )
    check.add_argument(
        "--debug", action="store_true", help="print the traceback of an error (an adapter's, or the tool's own crash)"
    )


def _unwritable(args: argparse.Namespace) -> str | None:
    """Why an output file asked for cannot be written, found before the run (its folder is made), or None."""
    for option, path in (("--json", args.json), ("--html", args.html)):
        if path is None:
            continue
        target = Path(path)
        if target.is_dir():
            return f"{option} {path} is a folder: give a file name"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return f"{option} {path}: cannot make its folder ({exc.strerror or exc})"
        if not os.access(target.parent, os.W_OK):
            return f"{option} {path}: its folder is not writable"
    return None


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


def run(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    """Run the contract, print progress, the matrix and what the verdicts mean; the exit status. A crash of the
    tool itself is one line and exit 3 (its traceback with `--debug`)."""
    try:
        return _run(args, out)
    except Exception as exc:
        if getattr(args, "debug", False):
            traceback.print_exc(file=sys.stderr)
        print(
            f"mcp-testkit check: the tool itself failed: {type(exc).__name__}: {exc} (a bug of mcp-testkit: please "
            "report it; --debug prints the traceback)",
            file=sys.stderr,
        )
        return 3


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from mcp_testkit.adapters import DriverFactory
    from mcp_testkit.contract._properties import PROPERTIES

    named = list(args.adapters) + [f"--driver {command}" for command in args.drivers]
    if args.drivers and args.transport == "asgi":
        print(
            "mcp-testkit check: a driver runs its bridge in another process, which reaches the server over a "
            "socket only: leave out --transport asgi",
            file=sys.stderr,
        )
        return 2
    try:
        factories: list[tuple[str, Any]] = [(spec, load_factory(spec)) for spec in chosen_specs(args, named)]
    except BadSpec as exc:
        print(f"mcp-testkit check: {exc}", file=sys.stderr)
        return 2
    factories += [(f"--driver {command}", DriverFactory(command)) for command in args.drivers]
    chosen = args.properties or list(PROPERTIES)
    unknown = [p for p in chosen if p not in PROPERTIES]
    if unknown:
        print(f"mcp-testkit check: unknown property {unknown[0]!r}; known: {', '.join(PROPERTIES)}", file=sys.stderr)
        return 2
    unwritable = _unwritable(args) or _example_database(args)
    if unwritable:
        print(f"mcp-testkit check: {unwritable}", file=sys.stderr)
        return 2
    eras = tuple(dict.fromkeys(era for group in (args.eras or [list(ERAS)]) for era in group))
    labels = {spec: label(factory, spec) for spec, factory in factories}
    header = opening_lines(labels, chosen, eras, args, named=bool(named))
    if not args.quiet:
        print("\n".join(header), file=out)
    verdicts: Verdicts = {bridge: {} for bridge in labels.values()}
    ticker = Ticker(out, args.examples) if not args.quiet and out.isatty() else None
    try:
        with CtrlC() as ctrl_c:
            progress = Progress(args, out, ticker, ctrl_c, named)
            for spec, factory in factories:
                transport = "socket" if isinstance(factory, DriverFactory) else (args.transport or "asgi")
                for era in eras:
                    progress.check_one(factory, labels[spec], spec, era, transport, chosen, verdicts[labels[spec]])
    except KeyboardInterrupt:
        if ticker is not None:
            ticker.stop()
        done = sum(len(results) for results in verdicts.values())
        print(f"\nmcp-testkit check: cut by Ctrl-C after {done} verdict{'s' * (done != 1)}; those so far:", file=out)
        _report_verdicts(args, out, labels, verdicts, chosen, eras, named, header, cut=True)
        return 130
    if args.json:
        write_json(args.json, factories, verdicts)
    if args.html:
        from mcp_testkit.contract._cli._matrix_html import write_matrix_page

        write_matrix_page(args.html, report(factories, verdicts))
    kept = keep_failures(args, factories, labels, verdicts)
    if not args.quiet:
        print(file=out)
    return _report_verdicts(args, out, labels, verdicts, chosen, eras, named, header, kept=kept)


def _report_verdicts(
    args: argparse.Namespace,
    out: TextIO,
    labels: dict[str, str],
    verdicts: Verdicts,
    chosen: list[str],
    eras: tuple[str, ...],
    named: list[str],
    header: list[str],
    *,
    cut: bool = False,
    kept: list[str] | None = None,
) -> int:
    """The matrix, a line per unexpected verdict and the folded expected ones, where the counterexamples are
    (printed too with -v), and the verdict line; the exit status. (The verdicts so far, after Ctrl-C.)"""
    matrix(verdicts, chosen, eras, out)
    if args.verbose or args.debug:
        shown = (
            verdicts if args.verbose else {b: {k: r for k, r in rs.items() if r.error} for b, rs in verdicts.items()}
        )
        counterexamples(shown, out, tracebacks=args.debug, notes=args.verbose)
    judgement = judge(labels, verdicts, eras, named)
    lines = summary_lines(judgement, labels, verdicts, chosen, eras)
    unwritten = write_details(verdicts, header)
    if unwritten:
        lines.append(f"mcp-testkit check: {unwritten}")
    elif DETAILS.exists():
        lines.append(f"Every counterexample and note in full: {DETAILS} (-v prints them here).")
    lines += kept or []
    if cut:
        last = "Exit status 130: the run was cut; a cell marked '-' was not checked."
    else:
        last = verdict_line(judgement, eras, named=bool(named))
    print("", *lines, last, sep="\n", file=out)
    return judgement.status
