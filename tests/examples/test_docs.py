"""Every example in README.md and docs/*.md runs as printed, so that no page can drift from the code.

How to write an example that this test runs (the convention, for every page):

- A fenced ```` ```python ```` block is a program: it runs on its own, in a fresh namespace, in a
  temporary folder, and its `assert`s must hold. It must stop what it starts: a thread it leaves
  running, or an environment variable it leaves changed, fails it.
- `<!-- continues -->` on the line before a block marks it as deliberately partial: it is joined
  with the next block of the same language, and the two run as one (a chain may be longer).
- `<!-- pytester: passed=2 failed=1 -->` before a Python block makes it a test file instead: it is
  run by pytest in a folder of its own, plainly (no ini file) and with `-W error`, and must end
  with exactly those outcomes and no warning. A count `*` (`passed=* xfailed=*`) is any number
  but 0, for a suite whose size follows the contract's properties: those outcomes and no other.
  With the word `journal` in the marker, the next `console` block shows the failure report's
  `mcp journal` section, and its lines must be printed.
- `<!-- file: toolbox.py -->` before a Python block names it as a module: it does not run on its
  own; every later pytester block of the page finds it beside its test file (as do later modules),
  so a tutorial writes its code once and tests it step by step (`from toolbox import ...`).
- A ```` ```console ```` block's commands (`$ mcp-testkit ...`, `$ pytest ...`) run as printed,
  each in a temporary folder that holds the page's modules written so far (`<!-- file: ... -->`;
  for `pytest`, also the page's pytester blocks so far, as its test files). A command with no output
  under it must exit 0; the output a command shows is compared with what it
  printed (stdout and stderr), line by line, after masking what changes from run to run:
  durations, example counts, session ids, ports, tokens, and a counterexample's heading and
  arguments as Hypothesis lays them out (its wording, not ours); blank lines are not compared. A
  line `...` in the page stands for any number of lines, and a line ending in ` ...` for any line
  that starts as shown (for a long usage line that grows with every option), so a block can show
  only the lines that state verdicts.
- `<!-- not run: REASON -->` before a block says why it cannot run as a test (an install command, a
  list of invocations of modules of yours); the pages whose every block must be a test are
  `CONTRACT_PAGES` (tests/examples/test_docs_blocks.py fails a block there that is none of these).

A failure names the page and line of the block, and for console blocks shows what differed.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
CONTRACT_PAGES = ("contract.md", "adapters.md", "tutorial.md")
"""The pages whose every block runs as a test, or says why it cannot: there a console command with no output
under it runs too (elsewhere only one that shows output does)."""
COMMAND_TIMEOUT_S = 300.0
PYTESTER_TIMEOUT_S = 600.0  # a hang guard: the resilience suite of docs/contract.md runs every property

_FENCE = re.compile(r"^```(\w*)\s*$")
_MARKER = re.compile(r"^<!--\s*(continues|pytester:[^>]*?|file:\s*[\w.]+|not run:[^>]*?)\s*-->$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page, or a chain of blocks joined by `<!-- continues -->`."""

    page: Path
    line: int
    """The line of the (first) opening fence, counted from 1."""
    language: str
    parts: tuple[tuple[int, str], ...]
    """(first line of the code, code) of each block in the chain."""
    pytester: str | None = None
    file: str | None = None
    """The module name a later pytester block of the page imports it by (`<!-- file: x.py -->`)."""
    not_run: str | None = None
    """Why the block cannot run as a test (`<!-- not run: reason -->`)."""

    @property
    def name(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.line}"

    @property
    def text(self) -> str:
        return "".join(code for _, code in self.parts)

    def source(self) -> str:
        """The code, placed at its own lines of the page, so that a traceback names the page's line."""
        lines: list[str] = []
        for first, code in self.parts:
            lines.extend([""] * (first - 1 - len(lines)))
            lines.extend(code.splitlines())
        return "\n".join(lines) + "\n"


def blocks(page: Path) -> list[Block]:
    """The page's blocks, partial ones joined with the ones they continue into."""
    found: list[Block] = []
    pending: Block | None = None
    marker: str | None = None
    fence: tuple[int, str] | None = None
    code: list[str] = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None:
            opened = _FENCE.match(line)
            if opened:
                fence, code = (number, opened[1]), []
            elif line.strip():
                marked = _MARKER.match(line.strip())
                marker = marked[1] if marked else None
            continue
        if line.strip() != "```":
            code.append(line + "\n")
            continue
        (first, language), fence = fence, None
        part = (first + 1, "".join(code))
        if pending is not None and pending.language == language:
            block = Block(page, pending.line, language, (*pending.parts, part), pending.pytester)
        else:
            pytester = marker.partition(":")[2].strip() if marker and marker.startswith("pytester:") else None
            module = marker.partition(":")[2].strip() if marker and marker.startswith("file:") else None
            reason = marker.partition(":")[2].strip() if marker and marker.startswith("not run:") else None
            block = Block(page, first, language, (part,), pytester, module, reason)
        if marker == "continues":
            pending = block
        else:
            pending = None
            found.append(block)
        marker = None
    assert pending is None, f"{pending.name}: `<!-- continues -->` but no later {pending.language} block to join"
    return found


def _runnable(block: Block) -> bool:
    if block.not_run is not None:
        return False
    if block.language == "python":
        return True
    return block.language == "console" and any(command for command, _ in _commands(block))


RUNS = ("mcp-testkit", "pytest")
"""The commands a console block may run: this package's, and pytest (with the plugin)."""


def _commands(block: Block) -> list[tuple[list[str], list[str]]]:
    """Each `$ mcp-testkit ...` or `$ pytest ...` command of a console block, with the output lines shown under it."""
    found: list[tuple[list[str], list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            words = shlex.split(line[2:], comments=True)
            found.append((words if words[:1] and words[0] in RUNS else [], []))
        elif found:
            found[-1][1].append(line)
    return [(command, shown) for command, shown in found if command and (shown or block.page.name in CONTRACT_PAGES)]


EXAMPLES = [block for page in PAGES for block in blocks(page) if _runnable(block)]
PYTHON = [block for block in EXAMPLES if block.language == "python" and block.pytester is None and block.file is None]
PYTESTER = [block for block in EXAMPLES if block.pytester is not None]
CONSOLE = [block for block in EXAMPLES if block.language == "console"]


# -- masking what changes from run to run ----------------------------------------------------------

_MASKS = [
    (re.compile(r" +\d+\.\d+ s\b"), " <seconds> s"),
    (re.compile(r" +\d+ examples\b"), " <n> examples"),
    (re.compile(r"session=[0-9a-f]{8}\b"), "session=<id>"),
    (re.compile(r"(127\.0\.0\.1|localhost):\d+"), r"\1:<port>"),
    (re.compile(r"with token [^;\s]+"), "with token <token>"),
]
_HYPOTHESIS_HEADING = re.compile(r"^(\s*)[A-Z][a-z]+(?: [a-z]+)*: (\w+)\($")


def stable(lines: list[str]) -> list[str]:
    """The lines with what varies masked, each Hypothesis counterexample folded into one line, blank lines dropped."""
    out: list[str] = []
    closing: str | None = None
    for line in lines:
        if closing is not None:
            if line.rstrip() == closing:
                closing = None
            continue
        heading = _HYPOTHESIS_HEADING.match(line)
        if heading:
            out.append(f"{heading[1]}<Hypothesis' counterexample of {heading[2]}>")
            closing = f"{heading[1]})"
            continue
        for pattern, mask in _MASKS:
            line = pattern.sub(mask, line)
        if line.strip():
            out.append(line.rstrip())
    return out


def differences(shown: list[str], printed: list[str]) -> list[str] | None:
    """None when `printed` matches `shown` (`...` in shown matching any run of lines), else a diff."""

    def same(shown_line: str, printed_line: str) -> bool:
        if shown_line.endswith(" ..."):
            return printed_line.startswith(shown_line[:-3])
        return shown_line == printed_line

    def match(i: int, j: int) -> bool:
        if i == len(shown):
            return j == len(printed)
        if shown[i] == "...":
            return any(match(i + 1, k) for k in range(j, len(printed) + 1))
        return j < len(printed) and same(shown[i], printed[j]) and match(i + 1, j + 1)

    if match(0, 0):
        return None
    return list(difflib.unified_diff(shown, printed, "shown on the page", "printed", lineterm="", n=2))


# -- the tests -------------------------------------------------------------------------------------


def test_the_pages_have_examples_of_every_kind() -> None:
    """The collection finds examples on every page that has code, of each kind, so none can silently vanish."""
    assert {block.page.name for block in PYTHON} >= {"README.md", "index.md", "bridge.md", "contract.md", "server.md"}
    assert len(PYTESTER) == 19
    modules = [block.file for page in PAGES for block in blocks(page) if block.file is not None]
    assert modules == ["toolbox.py", "toolbox_adapter.py"]
    assert any(command[:2] == ["mcp-testkit", "check"] for block in CONSOLE for command, _ in _commands(block))


@pytest.mark.parametrize("block", PYTHON, ids=[block.name for block in PYTHON])
def test_python_example_runs(block: Block, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The block runs on its own as printed, its assertions hold, and it leaves no thread or variable behind."""
    monkeypatch.chdir(tmp_path)
    threads = set(threading.enumerate())
    environ = dict(os.environ)
    exec(compile(block.source(), str(block.page), "exec"), {"__name__": "__main__"})
    started = [thread for thread in threading.enumerate() if thread not in threads]
    for thread in started:  # one told to stop (an idle worker of a closed loop) may still be on its way out
        thread.join(timeout=5)
    left = [thread.name for thread in started if thread.is_alive()]
    assert not left, f"{block.name}: the example left threads running {left}: it must stop what it starts"
    changed = sorted(set(os.environ.items()) ^ set(environ.items()))
    assert not changed, f"{block.name}: the example changed the environment {changed}; use a mapping of its own"


@pytest.mark.timeout(PYTESTER_TIMEOUT_S + 60)
@pytest.mark.parametrize("block", PYTESTER, ids=[block.name for block in PYTESTER])
def test_pytest_example_has_its_stated_outcomes(block: Block, pytester: pytest.Pytester) -> None:
    """The block, run as a test file by a plain `pytest -W error` (no ini), ends as its marker says, warning-free."""
    expected = dict(word.split("=") for word in block.pytester.split() if "=" in word)  # type: ignore[union-attr]
    _write_modules(block, pytester.path)
    pytester.makepyfile(**{f"test_{block.page.stem}_{block.line}": block.text})
    result = pytester.runpytest_subprocess("-W", "error", "-p", "no:cacheprovider", timeout=PYTESTER_TIMEOUT_S)
    outcomes = {name: count for name, count in result.parseoutcomes().items() if name != "warnings"}
    assert outcomes_as_said(outcomes, expected), (
        f"{block.name}: the page says {block.pytester}; pytest said:\n{result.stdout.str()}"
    )
    assert "warnings" not in result.parseoutcomes(), f"{block.name}: the run warned:\n{result.stdout.str()}"
    if "journal" in block.pytester.split():  # type: ignore[union-attr]
        report = next(later for later in blocks(block.page) if later.language == "console" and later.line > block.line)
        shown = report.text.split(" mcp journal ")[1].splitlines()[1:]
        printed = result.stdout.str().split(" mcp journal ")[1].splitlines()[1:]
        diff = differences(["...", *stable(shown), "..."], stable(printed))
        assert diff is None, f"{report.name}: the report's mcp journal differs from the page's:\n" + "\n".join(diff)


def outcomes_as_said(outcomes: dict[str, int], said: dict[str, str]) -> bool:
    """Whether pytest's `outcomes` are the ones a pytester marker `said`: each count as given, `*` any but 0."""
    return outcomes.keys() == said.keys() and all(
        count > 0 if said[name] == "*" else count == int(said[name]) for name, count in outcomes.items()
    )


def _write_modules(block: Block, folder: Path, *, tests: bool = False) -> None:
    """Write the page's modules before `block` into `folder` (with `tests`, its pytester blocks too, as test files)."""
    for earlier in blocks(block.page):
        if earlier.line >= block.line:
            break
        if earlier.file is not None:
            (folder / earlier.file).write_text(earlier.text, encoding="utf-8")
        elif tests and earlier.pytester is not None:
            (folder / f"test_{block.page.stem}_{earlier.line}.py").write_text(earlier.text, encoding="utf-8")


@pytest.mark.timeout(2 * COMMAND_TIMEOUT_S)  # docs/contract.md runs all of `mcp-testkit check`, whose P11 waits
@pytest.mark.parametrize("block", CONSOLE, ids=[block.name for block in CONSOLE])
def test_console_example_prints_what_the_page_shows(block: Block, tmp_path: Path) -> None:
    """Each command of the block, run as printed, prints the lines the page shows under it (what varies masked), or
    exits 0 when the page shows none."""
    for command, shown in _commands(block):
        _write_modules(block, tmp_path, tests=command[0] == "pytest")
        module = "mcp_testkit" if command[0] == "mcp-testkit" else "pytest"
        ran = subprocess.run(
            [sys.executable, "-m", module, *command[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=tmp_path,
            timeout=COMMAND_TIMEOUT_S,
            check=False,
        )
        if not shown:
            assert ran.returncode == 0, f"{block.name}: `{shlex.join(command)}` exited {ran.returncode}:\n{ran.stdout}"
            continue
        diff = differences(stable(shown), stable(ran.stdout.splitlines()))
        assert diff is None, (
            f"{block.name}: `{shlex.join(command)}` (exit status {ran.returncode}) printed other lines "
            "than the page shows:\n" + "\n".join(diff)
        )


# -- the checks of this test's own machinery ---------------------------------------------------------


def test_continues_joins_a_block_with_the_next_and_keeps_page_lines(tmp_path: Path) -> None:
    """`<!-- continues -->` joins two blocks into one program whose lines are the page's lines."""
    page = tmp_path / "page.md"
    page.write_text("# t\n\n<!-- continues -->\n```python\nx = 1\n```\n\nprose\n\n```python\nassert x == 2\n```\n")
    [block] = blocks(page)
    assert (block.line, block.parts) == (4, ((5, "x = 1\n"), (11, "assert x == 2\n")))
    with pytest.raises(AssertionError) as failed:
        exec(compile(block.source(), str(page), "exec"), {})
    assert failed.traceback[-1].lineno + 1 == 11  # the page's line of the failing assert


def test_a_dangling_continues_is_refused(tmp_path: Path) -> None:
    """A `<!-- continues -->` with no block after it is an error naming the page and line."""
    page = tmp_path / "page.md"
    page.write_text("<!-- continues -->\n```python\nx = 1\n```\n")
    with pytest.raises(AssertionError, match=r"page.md:2: `<!-- continues -->` but no later python block"):
        blocks(page)


def test_masking_and_ellipsis() -> None:
    """Durations, counts, ids, ports and a Hypothesis counterexample are masked; `...` matches any lines."""
    printed = [
        "  P1 FAILS   66 examples    0.8 s  Listing",
        "    Failing test case: listing(",
        "        names=['0'],",
        "    )",
        "    #1 POST session=4c0f5abc initialize -> 200 at http://127.0.0.1:41457/mcp",
        "tail",
    ]
    shown = [
        "  P1 FAILS    3 examples    2.2 s  Listing",
        "    Falsifying example: listing(",
        "        names=['1'],",
        "    )",
        "    #1 POST session=deadbeef initialize -> 200 at http://127.0.0.1:9/mcp",
        "...",
    ]
    assert differences(stable(shown), stable(printed)) is None
    assert differences(stable(["#1 POST session=deadbeef initialize -> 404"]), stable(printed[4:5])) is not None
    assert differences(["usage: serve [-h] ..."], ["usage: serve [-h] [--port PORT]"]) is None
    assert differences(["usage: serve [-h] ..."], ["usage: check [-h] [--port PORT]"]) is not None


def test_a_star_count_is_any_number_but_zero() -> None:
    """`passed=* xfailed=*` holds for any counts of those outcomes, not for none of one, nor with another outcome."""
    said = {"passed": "*", "xfailed": "*"}
    assert outcomes_as_said({"passed": 48, "xfailed": 14}, said)
    assert not outcomes_as_said({"passed": 48}, said)
    assert not outcomes_as_said({"passed": 48, "xfailed": 14, "failed": 1}, said)
    assert outcomes_as_said({"passed": 2}, {"passed": "2"})
    assert not outcomes_as_said({"passed": 3}, {"passed": "2"})
