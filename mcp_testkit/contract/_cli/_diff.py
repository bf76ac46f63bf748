"""`mcp-testkit diff`: one example of a property run through several bridges, and the first request where their
journals part, side by side, with each bridge's outcome.

With `--html FILE`, also one HTML page of each bridge's outcome and journal side by side.

Exit status: 0 the bridges sent the same requests and ended alike, 1 they differ, 2 a usage error, 3 the tool's own
crash."""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

from mcp_testkit._wire.eras import ERAS, HANDSHAKE

__all__ = ["add_parser", "run"]


def add_parser(commands: Any) -> None:
    """Register `diff` on the CLI's subcommands."""
    diff = commands.add_parser(
        "diff",
        help="run one example of a property through several bridges and show the first request where they differ",
        description=(
            "Runs one example of a property (a declared case, a seeded draw, or a kept failure's test file) through "
            "each bridge given (module:factory, file.py:Factory, or --driver COMMAND) and prints each one's outcome "
            "and, against the first bridge, the first request where its journal differs, side by side. Sessions "
            "are named by the order they were opened in, so only what the bridges decided differs. Exit status: "
            "0 they agree, 1 they differ, 2 a usage error, 3 the tool itself failed."
        ),
    )
    diff.add_argument("adapters", nargs="*", metavar="module:factory", help="the bridges to compare (two or more)")
    diff.add_argument(
        "--driver", action="append", dest="drivers", default=[], metavar="COMMAND", help="a driver's bridge too"
    )
    diff.add_argument("--property", default=None, metavar="P", help="the property whose example runs")
    diff.add_argument("--era", choices=ERAS, default=None, help="the protocol era (default: the property's first)")
    chosen = diff.add_mutually_exclusive_group()
    chosen.add_argument("--case", type=int, default=None, metavar="K", help="declared case K (default 1)")
    chosen.add_argument("--seed", type=int, default=None, metavar="N", help="an example drawn with seed N instead")
    chosen.add_argument("--kept", metavar="FILE", default=None, help="the example of a kept failure's test file")
    diff.add_argument(
        "--transport", choices=["asgi", "socket"], default=None, help="in-process (the default) or over 127.0.0.1"
    )
    diff.add_argument(
        "--html",
        metavar="FILE",
        default=None,
        help="also write one HTML page: each bridge's outcome and journal side by side, the first difference marked",
    )
    diff.add_argument("--debug", action="store_true", help="print the traceback of the tool's own crash")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the example through each bridge and print where they differ (to `out`, stdout by default); the exit
    status."""
    try:
        return _run(args, out or sys.stdout)
    except _Usage as exc:
        print(f"mcp-testkit diff: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        print(
            f"mcp-testkit diff: the tool itself failed: {type(exc).__name__}: {exc} (--debug prints the traceback)",
            file=sys.stderr,
        )
        return 3


class _Usage(Exception):
    """A mistake on the command line; the message says what to give."""


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from mcp_testkit.adapters import DriverFactory
    from mcp_testkit.contract._cli._adapter_specs import BadSpec, label, load_factory
    from mcp_testkit.contract._differential import chosen_example, diff_page, kept_example, side_by_side
    from mcp_testkit.contract._facts import BridgeFacts
    from mcp_testkit.contract._properties import PROPERTIES
    from mcp_testkit.contract._replay import replayed

    try:
        bridges: list[tuple[str, Any]] = [(spec, load_factory(spec)) for spec in args.adapters]
    except BadSpec as exc:
        raise _Usage(str(exc)) from None
    bridges += [(f"--driver {command}", DriverFactory(command)) for command in args.drivers]
    if len(bridges) < 2:
        raise _Usage(
            "give two bridges or more to compare, e.g. mcp_testkit.adapters:ReferenceBridgeAdapter "
            "mcp_testkit.adapters:SdkClientAdapter"
        )
    if args.kept is not None:
        try:
            example = kept_example(args.kept)
        except ValueError as exc:
            raise _Usage(str(exc)) from None
    else:
        if args.property is None:
            raise _Usage("name the property whose example runs (--property P5), or give a kept failure (--kept FILE)")
        if args.property not in PROPERTIES:
            raise _Usage(f"unknown property {args.property!r}; known: {', '.join(PROPERTIES)}")
        prop = PROPERTIES[args.property]
        era = args.era or (HANDSHAKE if HANDSHAKE in prop.eras else prop.eras[0])
        if era not in prop.eras:
            raise _Usage(f"{args.property} has no meaning in the {era} era: it applies in {', '.join(prop.eras)}")
        first = bridges[0][1]
        try:
            example = chosen_example(
                args.property, era, BridgeFacts.of(first(transport=None), era), case=args.case, seed=args.seed
            )
        except ValueError as exc:
            raise _Usage(str(exc)) from None
    if args.html is not None:
        _make_folder(Path(args.html))
    runs = []
    for spec, factory in bridges:
        via = "socket" if isinstance(factory, DriverFactory) else (args.transport or "asgi")
        ended = replayed(factory, example.property_id, example.era, example.inputs, found_as=example.found_as, via=via)
        runs.append((label(factory, spec), ended))
    text, differs = side_by_side(example, runs)
    print(text, file=out)
    if args.html is not None:
        Path(args.html).write_text(diff_page(example, runs), encoding="utf-8")
    return 1 if differs else 0


def _make_folder(target: Path) -> None:
    """Make the folder of the `--html` file before the run, or say why it cannot be written."""
    if target.is_dir():
        raise _Usage(f"--html {target} is a folder: give a file name")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _Usage(f"--html {target}: cannot make its folder ({exc.strerror or exc})") from None
