"""Running the contract for `mcp-testkit check`, one bridge in one era at a time: one line per bridge and era that
names each property as it ends and closes with the tally and the time (with `-v`, a line per property: its verdict,
examples, seconds, coverage and notes), and the ticker while it runs."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from mcp_testkit.contract._verdict import MARKS

if TYPE_CHECKING:
    import argparse

    from mcp_testkit.contract._cli._ticker import Ticker
    from mcp_testkit.contract._ctrl_c import CtrlC
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["Progress"]

_TALLY = {"holds": "hold", "FAILS": "fail", "HUNG": "hung", "ERROR": "error", "blocked": "blocked"}


class Progress:
    """What `check` shows while it runs: the lines of each property's verdict (none with `-q`), the ticker on a
    terminal, and Ctrl-C checked as each property ends and each example starts."""

    def __init__(
        self, args: argparse.Namespace, out: TextIO, ticker: Ticker | None, ctrl_c: CtrlC, named: Sequence[str] = ()
    ) -> None:
        self.args = args
        self.out = out
        self.ticker = ticker
        self.ctrl_c = ctrl_c
        self.named = named
        self.line = ""
        """The compact line of the bridge and era running, as far as it got."""

    def check_one(
        self,
        factory: Any,
        label: str,
        spec: str,
        era: str,
        transport: str,
        chosen: Sequence[str],
        results: dict[tuple[str, str], PropertyResult],
    ) -> None:
        """Run the contract on one bridge in one era, printing a line per property as it ends; none after Ctrl-C."""
        from mcp_testkit.contract._run import run_contract

        args, ticker = self.args, self.ticker
        started = time.monotonic()
        if args.verbose:
            print(
                f"checking {label} ({spec}) in the {era} era, {args.examples} examples per property, {transport}",
                file=self.out,
            )
        else:
            shown = f" ({spec})" if spec in self.named else ""
            self._grow(f"checking {label}{shown} in the {era} era ({transport}):")
        pending = list(chosen)

        def progress(result: PropertyResult) -> None:
            self.ctrl_c.check()  # a verdict reached after Ctrl-C may be the interrupt's doing: the cell stays '-'
            results[result.property_id, era] = result
            if ticker is not None:
                ticker.stop()
            self._print(result)
            following = pending.index(result.property_id) + 1 if result.property_id in pending else len(pending)
            if ticker is not None and following < len(pending):
                ticker.start(self._running(pending[following]))

        if ticker is not None and pending:
            ticker.start(self._running(pending[0]))
        for result in run_contract(
            factory,
            max_examples=args.examples,
            properties=chosen,
            eras=(era,),
            via=transport,
            clock=getattr(args, "clock", None) if transport == "asgi" else None,
            example_timeout_s=args.example_timeout,
            budget_s=args.budget,
            progress=progress,
            on_example=self._example,
            database=getattr(args, "example_db", None),
        ):
            results[result.property_id, era] = result
        if ticker is not None:
            ticker.stop()
        if not (args.verbose or args.quiet):
            tally = Counter(MARKS[results[p, era].status] for p in chosen if (p, era) in results)
            said = ", ".join(f"{count} {_TALLY.get(mark, mark)}" for mark, count in tally.items())
            self._grow(f"; {said}, {time.monotonic() - started:.1f} s", end=True)

    def _running(self, property_id: str) -> str:
        """The ticker's text: the compact line so far and the property running (`-v`: that property alone)."""
        return f"  {property_id:3} running" if self.args.verbose else f"{self.line} {property_id} running"

    def _grow(self, text: str, *, end: bool = False) -> None:
        """Add `text` to the compact line; written at once where no ticker redraws it (a pipe, a CI log)."""
        if self.args.quiet:
            return
        self.line += text
        if self.ticker is None:
            self.out.write(text)
        elif end:
            self.out.write(self.line)
        if end:
            self.out.write("\n")
            self.line = ""
        self.out.flush()

    def _example(self, _: str, number: int, shrinking: bool) -> None:
        self.ctrl_c.check()  # within an example of Ctrl-C, even where a bridge's code swallowed the KeyboardInterrupt
        if self.ticker is not None:
            self.ticker.example(number, shrinking)

    def _print(self, result: PropertyResult) -> None:
        """A property's line as it ends: its mark, examples, seconds and title, then its coverage and notes."""
        out = self.out
        if not self.args.verbose:
            self._grow(f" {result.property_id}")
        elif not self.args.quiet:
            print(
                f"  {result.property_id:3} {result.mark:9} {result.examples:4} examples {result.seconds:6.1f} s  "
                f"{result.title}",
                file=out,
            )
            print(f"        coverage: {result.coverage_line()}", file=out)
            # An n/a result's one note is its reason, which its mark and the matrix already give.
            for note in () if result.not_applicable else result.notes:
                print(f"        note: {note}", file=out)
        out.flush()
