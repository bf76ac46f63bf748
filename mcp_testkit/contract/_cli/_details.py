"""The file where `mcp-testkit check` writes every counterexample and note in full, so that its own output stays
a page: `.mcp-testkit/check.txt` in the current folder by default. The folder carries a `.gitignore` of its own
(as `.pytest_cache` does), so a run in a repository never adds it to a commit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mcp_testkit.contract._cli._matrix_text import counterexamples

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mcp_testkit.contract._cli._report import Verdicts

__all__ = ["DETAILS", "write_details"]

DETAILS = Path(".mcp-testkit") / "check.txt"
_IGNORE_ALL = "# Made by mcp-testkit check: what it writes here is a run's output, never source.\n*\n"


def write_details(verdicts: Verdicts, header: Sequence[str], path: Path = DETAILS) -> str | None:
    """Write the counterexamples and notes of `verdicts` (tracebacks included) to `path`, its folder made with its
    `.gitignore`; when there are none, remove the file an earlier run left. None, or why it could not be written."""
    try:
        if not any(_detailed(verdicts)):
            path.unlink(missing_ok=True)
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text(_IGNORE_ALL, encoding="utf-8")
        with path.open("w", encoding="utf-8") as file:
            file.write("\n".join(header) + "\n")
            counterexamples(verdicts, file, tracebacks=True, notes=True)
    except OSError as exc:
        return f"could not write {path} ({exc.strerror or exc}); -v prints the counterexamples instead"
    return None


def _detailed(verdicts: Verdicts) -> list[bool]:
    """Per verdict, whether the file says something of it: a counterexample, or notes."""
    return [
        not (result.passed or result.not_applicable or result.blocked) or bool(result.notes)
        for results in verdicts.values()
        for result in results.values()
        if not result.not_applicable
    ]
