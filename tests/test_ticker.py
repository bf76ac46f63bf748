"""The progress line of `mcp-testkit check` on a terminal: examples done of the maximum, shrinking tries and the
elapsed time, rewritten in place, erased at the end; and `check` uses it only on a terminal."""

from __future__ import annotations

import argparse
import io
import re
import threading
from pathlib import Path

import pytest

from mcp_testkit.contract import _cli as _check
from mcp_testkit.contract._cli._ticker import Ticker

LIMIT_S = 30.0


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal, and signals when `wanted` has been written."""

    def __init__(self, wanted: str = "") -> None:
        super().__init__()
        self.wanted = wanted
        self.seen = threading.Event()

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.wanted and self.wanted in self.getvalue():
            self.seen.set()
        return written


def test_line_shows_examples_done_of_the_maximum_then_shrinking_tries() -> None:
    """While examples run the line counts those done of the maximum; once shrinking, its tries."""
    ticker = Ticker(io.StringIO(), 100)
    ticker.start("  P3  running")
    try:
        ticker.example(1, False)
        assert ticker.line(0.04) == "  P3  running: 0 of 100 examples done, 0.0 s"
        ticker.example(38, False)
        assert ticker.line(12.34) == "  P3  running: 37 of 100 examples done, 12.3 s"
        ticker.example(38, True)
        assert ticker.line(13.0) == "  P3  running: shrinking a counterexample, 1 try, 13.0 s"
        ticker.example(38, True)
        assert ticker.line(13.0).endswith("2 tries, 13.0 s")
    finally:
        ticker.stop()


def test_more_declared_cases_than_the_maximum_never_reads_past_it() -> None:
    """Declared cases all run even past --examples: the maximum shown grows with them, never '12 of 5'."""
    ticker = Ticker(io.StringIO(), 5)
    ticker.start("  P1  running")
    ticker.example(13, False)
    assert "12 of 12 examples done" in ticker.line(1.0)
    ticker.stop()


def test_line_is_rewritten_in_place_and_erased() -> None:
    """On the stream the line starts with a carriage return and is updated from the ticker's thread; stop()
    erases it."""
    out = _Terminal(wanted="4 of 10 examples done")
    ticker = Ticker(out, 10)
    ticker.start("  P2  running")
    ticker.example(5, False)
    assert out.seen.wait(LIMIT_S)
    ticker.stop()
    text = out.getvalue()
    assert re.match(r"\r  P2  running: 0 of 10 examples done, \d+\.\d s\x1b\[K", text)
    assert text.endswith("\r\x1b[K")
    ticker.stop()  # a second stop does nothing
    assert out.getvalue() == text


def _args(**given: object) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command")
    _check.add_parser(commands)
    args = parser.parse_args(["check", "--property", "P4", "--era", "handshake", "--examples", "3"])
    for name, value in given.items():
        setattr(args, name, value)
    return args


def test_check_draws_the_ticker_on_a_terminal_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`check` on a terminal draws its line for the bridge and era with the property running and its examples;
    to a file, the same line written as each property ends, without any."""
    monkeypatch.chdir(tmp_path)  # where a run writes its .mcp-testkit/
    spec = "mcp_testkit.adapters:ReferenceBridgeAdapter"
    terminal = _Terminal()
    assert _check.run(_args(adapters=[spec]), terminal) == 0
    running = rf"\rchecking reference \({spec}\) in the handshake era \(asgi\): P4 running: 0 of 3 examples done"
    assert re.search(rf"{running}, \d+\.\d s\x1b\[K", terminal.getvalue())
    assert re.search(
        rf"\r\x1b\[Kchecking reference \({spec}\) in the handshake era \(asgi\): P4; 1 hold, ", terminal.getvalue()
    )
    plain = io.StringIO()
    assert _check.run(_args(adapters=[spec]), plain) == 0
    assert "\r" not in plain.getvalue()
    assert f"checking reference ({spec}) in the handshake era (asgi): P4; 1 hold, " in plain.getvalue()
