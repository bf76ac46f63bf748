"""Running the contract for `mcp-testkit check`, one bridge in one era at a time, with a line per property as it
ends (its verdict, examples and seconds; its coverage with `-v`; its notes) and the ticker while it runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import argparse

    from mcp_testkit.contract._cli._ticker import Ticker
    from mcp_testkit.contract._ctrl_c import CtrlC
    from mcp_testkit.contract._verdict import PropertyResult

__all__ = ["Progress"]


class Progress:
    """What `check` shows while it runs: the lines of each property's verdict (none with `-q`), the ticker on a
    terminal, and Ctrl-C checked as each property ends and each example starts."""

    def __init__(self, args: argparse.Namespace, out: TextIO, ticker: Ticker | None, ctrl_c: CtrlC) -> None:
        self.args = args
        self.out = out
        self.ticker = ticker
        self.ctrl_c = ctrl_c

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
        if not args.quiet:
            print(
                f"checking {label} ({spec}) in the {era} era, {args.examples} examples per property, {transport}",
                file=self.out,
            )
        pending = list(chosen)

        def progress(result: PropertyResult) -> None:
            self.ctrl_c.check()  # a verdict reached after Ctrl-C may be the interrupt's doing: the cell stays '-'
            results[result.property_id, era] = result
            if ticker is not None:
                ticker.stop()
            self._print(result)
            following = pending.index(result.property_id) + 1 if result.property_id in pending else len(pending)
            if ticker is not None and following < len(pending):
                ticker.start(f"  {pending[following]:3} running")

        if ticker is not None and pending:
            ticker.start(f"  {pending[0]:3} running")
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
        ):
            results[result.property_id, era] = result
        if ticker is not None:
            ticker.stop()

    def _example(self, _: str, number: int, shrinking: bool) -> None:
        self.ctrl_c.check()  # within an example of Ctrl-C, even where a bridge's code swallowed the KeyboardInterrupt
        if self.ticker is not None:
            self.ticker.example(number, shrinking)

    def _print(self, result: PropertyResult) -> None:
        """A property's line as it ends: its mark, examples, seconds and title, then its coverage and notes."""
        out = self.out
        if not self.args.quiet:
            print(
                f"  {result.property_id:3} {result.mark:9} {result.examples:4} examples {result.seconds:6.1f} s  "
                f"{result.title}",
                file=out,
            )
            if self.args.verbose:
                print(f"        coverage: {result.coverage_line()}", file=out)
            # An n/a result's one note is its reason, which its mark and the matrix already give.
            for note in () if result.not_applicable else result.notes:
                print(f"        note: {note}", file=out)
        out.flush()
