"""Tests of `mcp-testkit check`, run as a subprocess the way a user runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_testkit.contract import PROPERTIES

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK = "mcp_testkit.adapters:SdkClientAdapter"
SDK_LEGACY = "mcp_testkit.adapters:SdkClientAdapter.legacy"
BRIDGES = {"reference": REFERENCE, "sdk-client (auto)": SDK, "sdk-client (legacy)": SDK_LEGACY}
ERAS = ("handshake", "stateless")


def _check(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture(autouse=True)
def _in_a_folder_of_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each check runs in the test's own folder, where it writes its `.mcp-testkit/` (never into the repository)."""
    monkeypatch.chdir(tmp_path)


_SLOW = pytest.mark.timeout(600)
"""The first test to use `default_run` runs all of `mcp-testkit check`: P11 waits for the bridges' timeouts."""


@pytest.fixture(scope="module")
def default_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder `default_run` runs in, where it writes its counterexamples."""
    return tmp_path_factory.mktemp("default-run")


@pytest.fixture(scope="module")
def default_run(default_folder: Path) -> subprocess.CompletedProcess[str]:
    """One run of `mcp-testkit check --examples 20` with no bridge named: the shipped bridges, in both eras."""
    return _check("--examples", "20", cwd=default_folder)


@_SLOW
def test_default_run_exits_zero(default_run: subprocess.CompletedProcess[str]) -> None:
    """With no bridge named, check exits 0 even though the SDK client fails properties and falls back in legacy
    mode: the matrix is the report."""
    assert default_run.returncode == 0, default_run.stderr
    assert default_run.stderr == ""


@_SLOW
def test_default_run_shows_progress_per_bridge_and_era(default_run: subprocess.CompletedProcess[str]) -> None:
    """check prints one line per bridge and era that names each property as it ends and closes with the tally and
    the time: the reference bridge, then the SDK client in auto and in legacy mode, each in both eras."""
    lines = default_run.stdout.splitlines()
    progress = [line for line in lines if line.startswith("checking ")]
    ids = " ".join(PROPERTIES)
    assert [line.rpartition(",")[0] for line in progress] == [
        f"checking {label} in the {era} era (asgi): {ids}; {tally}"
        for label, tallies in {
            "reference": ("17 hold, 2 n/a", "17 hold, 2 n/a"),
            "sdk-client (auto)": ("8 hold, 5 fail, 6 n/a", "9 hold, 4 fail, 6 n/a"),  # P0 holds first
            "sdk-client (legacy)": ("8 hold, 5 fail, 6 n/a", "13 fell back, 6 n/a"),
        }.items()
        for era, tally in zip(ERAS, tallies, strict=True)
    ]
    assert all(re.fullmatch(r" \d+\.\d s", line.rpartition(",")[2]) for line in progress), progress
    assert not [line for line in lines if "coverage:" in line], "coverage is for --verbose"


@_SLOW
def test_default_run_reads_in_a_minute(default_run: subprocess.CompletedProcess[str]) -> None:
    """README's `mcp-testkit check` prints at most 80 lines, none over 200 characters: header, progress, matrix,
    the expected failures folded, where the counterexamples are, the verdict. (The shape does not depend on the
    example count; docs/contract.md prints the run at README's 100, compared line by line by tests/examples.)"""
    lines = default_run.stdout.splitlines()
    assert len(lines) <= 80, len(lines)
    assert max(len(line) for line in lines) <= 200, max(lines, key=len)
    assert "requests the bridge sent:" not in default_run.stdout, "the counterexamples are in the file"


@_SLOW
def test_default_run_opens_saying_what_it_compares(default_run: subprocess.CompletedProcess[str]) -> None:
    """The first line names the properties, the bridges, the eras and the example count, and says that the SDK
    client's failures are expected, before any of them is printed."""
    first, second = default_run.stdout.splitlines()[:2]
    assert first.startswith("mcp-testkit check: 19 properties (P0-P15, P18-P19) against reference, sdk-client (auto), ")
    assert re.search(r"20 examples per property; about \d+ s\.$", first), first
    assert "the SDK client's failures are known and expected" in second


def test_verbose_adds_coverage_and_quiet_keeps_the_matrix_and_failures() -> None:
    """-v prints a line per property with its coverage under it, and the counterexamples in full; -q prints no
    progress, only the matrix, the failures and the closing line."""
    verbose = _check(SDK, "--property", "P1", "--examples", "5", "--era", "handshake", "-v")
    lines = verbose.stdout.splitlines()
    [progress] = [line for line in lines if line.startswith("  P1 ")]
    assert lines[lines.index(progress) + 1].startswith("        coverage: ")
    assert "    P1 counterexample (declared case 2 of 15): listing_is_all_or_nothing(" in lines
    quiet = _check(SDK, "--property", "P1", "--examples", "5", "--era", "handshake", "-q")
    assert quiet.returncode == verbose.returncode == 1
    assert not [line for line in quiet.stdout.splitlines() if line.startswith(("checking ", "  P1 ", "mcp-testkit"))]
    assert quiet.stdout.splitlines()[0].startswith("property ")
    assert "sdk-client (auto): P1 FAILS in the handshake era: the bridge loaded a wrong tool set" in quiet.stdout
    assert quiet.stdout.strip().splitlines()[-1].startswith("Exit status 1:")


@_SLOW
def test_default_run_prints_the_matrix(default_run: subprocess.CompletedProcess[str]) -> None:
    """check prints a property x era x bridge matrix: a row per property and era, a column per bridge; P5 and P5s
    are n/a in the era of the other; the SDK client in legacy mode falls back in the stateless era."""
    lines = default_run.stdout.splitlines()
    [header] = [line for line in lines if line.startswith("property ")]
    assert header.split() == ["property", "era", "reference", "sdk-client", "(auto)", "sdk-client", "(legacy)"]
    start = lines.index(header) + 2
    rows = {}
    current = ""
    era_at, cells_at = header.index("era"), header.index("reference")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    for line in lines[start:end]:
        current = line.split()[0] if line[:1] == "P" else current
        era = line[era_at:cells_at].strip()
        if not era:
            continue  # the rest of a wrapped title
        cells = line[cells_at:]
        rows[current, era] = [cells.split("  ")[0].strip(), *(c.strip() for c in cells.split("  ")[1:] if c)]
    assert rows == {
        ("P0", "handshake"): ["holds", "holds", "holds"],
        ("P0", "stateless"): ["holds", "holds", "fell back"],
        ("P1", "handshake"): ["holds", "FAILS", "FAILS"],
        ("P1", "stateless"): ["holds", "FAILS", "fell back"],
        ("P2", "handshake"): ["holds", "holds", "holds"],
        ("P2", "stateless"): ["holds", "holds", "fell back"],
        ("P3", "handshake"): ["holds", "holds", "holds"],
        ("P3", "stateless"): ["holds", "holds", "fell back"],
        ("P4", "handshake"): ["holds", "FAILS", "FAILS"],  # the SDK raises one error for a 401 and a 500
        ("P4", "stateless"): ["holds", "FAILS", "fell back"],
        ("P5", "handshake"): ["holds", "FAILS", "FAILS"],
        ("P5", "stateless"): ["n/a", "n/a", "n/a"],
        ("P5s", "handshake"): ["n/a", "n/a", "n/a"],
        ("P5s", "stateless"): ["holds", "holds", "fell back"],
        ("P6", "handshake"): ["holds", "FAILS", "FAILS"],
        ("P6", "stateless"): ["holds", "FAILS", "fell back"],
        ("P7", "handshake"): ["holds", "holds", "holds"],
        ("P7", "stateless"): ["holds", "holds", "fell back"],
        ("P8", "handshake"): ["holds", "n/a", "n/a"],
        ("P8", "stateless"): ["holds", "n/a", "n/a"],
        ("P9", "handshake"): ["holds", "n/a", "n/a"],
        ("P9", "stateless"): ["holds", "n/a", "n/a"],
        ("P10", "handshake"): ["holds", "holds", "holds"],
        ("P10", "stateless"): ["holds", "holds", "fell back"],
        ("P11", "handshake"): ["holds", "holds", "holds"],
        ("P11", "stateless"): ["holds", "holds", "fell back"],
        ("P12", "handshake"): ["holds", "holds", "holds"],
        ("P12", "stateless"): ["holds", "holds", "fell back"],
        ("P13", "handshake"): ["holds", "FAILS", "FAILS"],
        ("P13", "stateless"): ["holds", "FAILS", "fell back"],
        ("P14", "handshake"): ["holds", "n/a", "n/a"],
        ("P14", "stateless"): ["holds", "n/a", "n/a"],
        ("P15", "handshake"): ["holds", "n/a", "n/a"],  # the SDK client's adapter declares no OAuth (yet)
        ("P15", "stateless"): ["holds", "n/a", "n/a"],
        ("P18", "handshake"): ["n/a", "n/a", "n/a"],
        ("P18", "stateless"): ["holds", "holds", "fell back"],
        ("P19", "handshake"): ["holds", "holds", "holds"],
        ("P19", "stateless"): ["n/a", "n/a", "n/a"],
    }


@_SLOW
def test_default_run_writes_the_counterexamples_to_a_file(
    default_run: subprocess.CompletedProcess[str], default_folder: Path
) -> None:
    """The run names the file of its counterexamples, `.mcp-testkit/check.txt` (its folder ignored by git): every
    failure with its era, its shrunk counterexample and journal; a fallback once per bridge and era, with the
    handshake the bridge spoke."""
    assert "Every counterexample and note in full: .mcp-testkit/check.txt (-v prints them here)." in (
        default_run.stdout.splitlines()
    )
    assert (default_folder / ".mcp-testkit" / ".gitignore").read_text().splitlines()[-1] == "*"
    out = (default_folder / ".mcp-testkit" / "check.txt").read_text()
    for label, era, property_id in [
        ("sdk-client (auto)", "handshake", "P1"),
        ("sdk-client (auto)", "handshake", "P5"),
        ("sdk-client (auto)", "stateless", "P6"),
        ("sdk-client (legacy)", "handshake", "P6"),
    ]:
        assert f"{label} fails {property_id} ({PROPERTIES[property_id].title}) in the {era} era:" in out
    assert "reference fails" not in out
    p5 = out.split("sdk-client (auto) fails P5 ")[1].split("sdk-client (auto) fails")[0]
    assert "P5 counterexample (declared case 1 of 12): new_session_after_404(" in p5
    assert "faults fired: #6 LoseSession()" in p5
    assert "tools/call tool -> 404" in p5
    assert "sdk-client (auto) fails P5s" not in out, "with retry=0 it re-issues nothing, as it declares"
    fell_back = "sdk-client (legacy) has no verdict in the stateless era (it fell back to the handshake era):"
    assert out.count(fell_back) == 1


@_SLOW
def test_default_run_closes_with_what_was_expected(default_run: subprocess.CompletedProcess[str]) -> None:
    """Under the matrix: the SDK client's failures folded in one line as expected, that P8, P9, P14 and P15 do not
    apply to it (never that it holds them), each with its reason, no unexpected verdict, and the verdict line of
    exit status 0."""
    *_, expected, approvals, cache, oauth, _, last = default_run.stdout.strip().splitlines()
    assert expected == (
        'Expected, as documented (docs/contract.md, "The SDK client\'s verdicts"): sdk-client (auto) 9 failures; '
        "sdk-client (legacy) 5 failures and its fallback in the stateless era."
    )
    assert approvals.startswith("P8 does not apply to sdk-client (auto), sdk-client (legacy): it needs the 'approvals'")
    assert cache.startswith("P9, P14 do not apply to sdk-client (auto), sdk-client (legacy): it needs the 'tool_cache'")
    assert oauth.startswith("P15 does not apply to sdk-client (auto), sdk-client (legacy): it needs the 'oauth'")
    assert last == (
        "Exit status 0: every property holds or fails as documented; name your bridge (module:factory) to check it."
    )


def test_era_option_checks_one_era() -> None:
    """--era stateless checks the stateless era only, and a comma list names both."""
    done = _check(REFERENCE, "--era", "stateless", "--property", "P5s", "--property", "P5", "--examples", "5", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("checking")] == [
        f"checking reference ({REFERENCE}) in the stateless era, 5 examples per property, asgi"
    ]
    assert [line.split()[:2] for line in done.stdout.splitlines() if line.startswith("  P")] == [
        ["P5s", "holds"],
        ["P5", "n/a"],
    ]
    both = _check(REFERENCE, "--era", "handshake,stateless", "--property", "P7", "--examples", "3")
    assert both.returncode == 0, both.stdout + both.stderr
    assert sum(line.startswith("checking") for line in both.stdout.splitlines()) == 2


def test_unknown_era_is_a_clear_error() -> None:
    """--era with anything but handshake or stateless exits 2 naming the eras."""
    done = _check("--era", "2026-07-28", "--examples", "1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "'2026-07-28' is not an era: name handshake, stateless or both" in done.stderr


def test_named_bridge_that_falls_back_exits_one() -> None:
    """A bridge named on the command line that falls back to the handshake era where the stateless era is checked
    exits 1 and says to check it with --era handshake; with --era handshake it exits 0 for what it holds."""
    done = _check(SDK_LEGACY, "--property", "P7", "--examples", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sdk-client (legacy): fell back in the stateless era" in done.stdout
    assert done.stdout.strip().endswith("check a bridge of the handshake era only with --era handshake.")
    held = _check(SDK_LEGACY, "--property", "P7", "--examples", "5", "--era", "handshake")
    assert held.returncode == 0, held.stdout + held.stderr


def test_named_failing_bridge_exits_one() -> None:
    """A bridge named on the command line that fails a property makes check exit 1."""
    done = _check(SDK, "--property", "P5", "--examples", "10")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sdk-client (auto): P5 FAILS in the handshake era: after the 404 (#6) the bridge did not start a new " in (
        done.stdout
    )
    assert "checking reference" not in done.stdout
    assert "(sdk-client (auto): P5 in the handshake era)" in done.stdout


def test_named_passing_bridge_exits_zero() -> None:
    """A bridge named on the command line that holds every property asked for makes check exit 0."""
    done = _check(REFERENCE, "--property", "P1", "--property", "P4", "--examples", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    progress = [line.rpartition(",")[0] for line in done.stdout.splitlines() if line.startswith("checking ")]
    assert progress == [f"checking reference ({REFERENCE}) in the {era} era (asgi): P1 P4; 2 hold" for era in ERAS]
    assert "FAILS" not in done.stdout


def test_socket_transport_is_named_in_the_progress() -> None:
    """--transport socket runs the bridge over 127.0.0.1 and says so."""
    done = _check(REFERENCE, "--property", "P5", "--examples", "5", "--transport", "socket", "--era", "handshake")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith(f"checking reference ({REFERENCE}) in the handshake era (socket): P5")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "mcp_testkit.adapters",
            "'mcp_testkit.adapters' is not module:factory (e.g. mypkg.testing:MyAdapter, or ./my_adapter.py:MyAdapter)",
        ),
        (":ReferenceBridgeAdapter", "is not module:factory"),
        ("no_such_module_xyz:Adapter", "cannot import 'no_such_module_xyz'"),
        ("mcp_testkit.adapters:NoSuchAdapter", "module 'mcp_testkit.adapters' has no 'NoSuchAdapter'"),
        ("mcp_testkit.adapters:SdkClientAdapter.modern", "has no 'SdkClientAdapter.modern'"),
        ("mcp_testkit.adapters:__doc__", "'mcp_testkit.adapters:__doc__' is not callable; it must make an adapter"),
        ("./no_such_file_xyz.py:Adapter", "no file './no_such_file_xyz.py'"),
    ],
    ids=["no-colon", "no-module", "not-importable", "no-attribute", "no-dotted-attribute", "not-callable", "no-file"],
)
def test_bad_adapter_spec_is_a_clear_error(spec: str, message: str) -> None:
    """A bad module:factory spec exits 2 (a usage error, unlike a failing bridge's 1), saying what is wrong."""
    done = _check(spec, "--examples", "1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_unknown_property_is_a_clear_error() -> None:
    """--property with an unknown id exits 2 naming it and the known properties, before any checking."""
    done = _check("--property", "P99", "--examples", "1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == (
        "mcp-testkit check: unknown property 'P99'; known: "
        "P0, P1, P2, P3, P4, P5, P5s, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P18, P19"
    )


_ADAPTERS = """
from mcp_testkit.adapters import ReferenceBridgeAdapter


class Raising(ReferenceBridgeAdapter):
    name = "raising"

    async def call(self, tool, arguments):
        raise KeyError(tool)


class Fine(ReferenceBridgeAdapter):
    name = "fine"
"""


def _console(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("mcp-testkit")
    return subprocess.run(
        [str(script), "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd, preexec_fn=_ctrl_c_heard
    )


def _ctrl_c_heard() -> None:
    """In the child, before it runs: SIGINT back to its default, as a terminal's program has it. A test run started
    in the background by a shell (`pytest &`) has SIGINT ignored, the child would inherit that, and Python then
    installs no KeyboardInterrupt handler for check to rely on (it leaves an ignored Ctrl-C ignored)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_adapter_given_as_a_file_path_is_loaded(tmp_path: Path) -> None:
    """`check ./bridges/mymod.py:Fine` (and `bridges/mymod.py:...`) loads the file, whose own folder it can import
    from; a file that does not import is one line, exit 2."""
    (tmp_path / "bridges").mkdir()
    (tmp_path / "bridges" / "helper.py").write_text("NAME = 'from-file'\n")
    adapters = textwrap.dedent(_ADAPTERS) + "\n\nimport helper\nFine.name = helper.NAME\n"
    (tmp_path / "bridges" / "mymod.py").write_text(adapters)
    (tmp_path / "bridges" / "broken.py").write_text("import no_such_module_xyz\n")
    done = _console(tmp_path, "./bridges/mymod.py:Fine", "--property", "P1", "--examples", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].startswith("checking from-file (./bridges/mymod.py:Fine) in the handshake era")
    broken = _console(tmp_path, "bridges/broken.py:Fine", "--examples", "1")
    assert broken.returncode == 2
    assert broken.stderr.count("\n") == 1
    assert "cannot import 'bridges/broken.py'" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_output_files_get_their_folders_and_a_folder_given_as_a_file_is_refused_up_front(tmp_path: Path) -> None:
    """--json and --html into folders that do not exist yet are written (their folders made); a folder given as
    the file is refused, one line, exit 2, before anything runs."""
    json_file, html_file = tmp_path / "build" / "a" / "verdicts.json", tmp_path / "build" / "b" / "matrix.html"
    done = _check(REFERENCE, "--property", "P1", "--examples", "3", "--era", "handshake",
                  "--json", str(json_file), "--html", str(html_file))  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "P1@handshake" in json.loads(json_file.read_text())["reference"]["properties"]
    assert html_file.read_text().startswith("<!DOCTYPE html>")
    refused = _check(REFERENCE, "--examples", "1", "--json", str(tmp_path))
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr == f"mcp-testkit check: --json {tmp_path} is a folder: give a file name\n"


def test_console_script_imports_an_adapter_from_the_current_folder(tmp_path: Path) -> None:
    """`mcp-testkit check mymod:Adapter` finds mymod.py in the folder it is run from."""
    (tmp_path / "mymod.py").write_text(textwrap.dedent(_ADAPTERS))
    done = _console(tmp_path, "mymod:Fine", "--property", "P1", "--examples", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[1]
    assert first.startswith("checking fine (mymod:Fine) in the handshake era (asgi): P1; 1 hold, ")


def test_an_adapter_error_is_reported_as_error_and_exits_three(tmp_path: Path) -> None:
    """An exception escaping an adapter is an ERROR in the matrix and one line under it, check exits 3 (never 1, a
    failing bridge's, nor 2, a usage error's), and its traceback is printed only with --debug (always in the file)."""
    (tmp_path / "mymod.py").write_text(textwrap.dedent(_ADAPTERS))
    done = _console(tmp_path, "mymod:Raising", "--property", "P2", "--examples", "5", "--era", "handshake")
    assert done.returncode == 3, done.stdout + done.stderr
    [row] = [line for line in done.stdout.splitlines() if line.startswith("P2 ")]
    assert row.split()[-1] == "ERROR"
    assert (
        "raising: P2 could not be checked in the handshake era: the adapter's call('write') raised KeyError: 'write'"
    ) in done.stdout
    assert done.stdout.strip().splitlines()[-1].startswith("Exit status 3: raising: a property could not be checked")
    assert "Traceback" not in done.stdout + done.stderr
    assert "Traceback (most recent call last):" in (tmp_path / ".mcp-testkit" / "check.txt").read_text()
    debug = _console(tmp_path, "mymod:Raising", "--property", "P2", "--examples", "5", "--era", "handshake", "--debug")
    assert debug.returncode == 3, debug.stdout + debug.stderr
    assert "    Traceback (most recent call last):" in debug.stdout.splitlines()


@pytest.mark.parametrize("option", ["--example-timeout", "--budget"])
@pytest.mark.parametrize("value", ["0", "-1", "soon"])
def test_time_options_must_be_positive_seconds(option: str, value: str) -> None:
    """--example-timeout and --budget take a positive number of seconds, and say so otherwise."""
    done = _check(option, value, "--examples", "1")
    assert done.returncode == 2
    assert option in done.stderr
    assert "seconds" in done.stderr


def test_budget_and_example_timeout_reach_the_run() -> None:
    """A tiny --budget stops a property before its declared cases ran: an ERROR saying the budget ran out."""
    done = _check(
        REFERENCE, "--property", "P6", "--budget", "0.001", "--example-timeout", "5", "--era", "handshake", "-v"
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "note: the budget of 0.001 s ran out after" in done.stdout


def test_all_installed_runs_the_adapters_whose_bridge_imports() -> None:
    """--all-installed checks the reference bridge, the SDK client and the shipped adapters whose bridge imports."""
    from mcp_testkit.contract._cli._adapter_specs import SHIPPED, installed

    done = _check("--all-installed", "--property", "P1", "--examples", "1", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    checked = re.findall(r"^checking .*? \((mcp_testkit\.[\w.:]+)\) in the (\w+) era", done.stdout, re.M)
    specs = list(dict.fromkeys(spec for spec, _ in checked))
    assert specs == [REFERENCE, SDK, SDK_LEGACY, *(spec for spec in SHIPPED if installed(spec))]
    assert {era for _, era in checked} == {"handshake", "stateless"}


def test_ctrl_c_stops_with_the_verdicts_so_far() -> None:
    """Ctrl-C during check stops it at once: the matrix of the verdicts found so far ('-' for the others), a line
    saying the run was cut, exit status 130, and no traceback."""
    import signal

    process = subprocess.Popen(
        [sys.executable, "-m", "mcp_testkit", "check", REFERENCE, "--examples", "100", "--era", "handshake", "-v"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ctrl_c_heard,
    )
    try:
        assert process.stdout is not None
        seen = []
        while not any(line.startswith("  P1 ") for line in seen):  # the first verdict is in
            line = process.stdout.readline()
            assert line, "check ended before its first verdict"
            seen.append(line)
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    out = "".join(seen) + rest
    assert process.returncode == 130, out + errors
    assert "Traceback" not in out + errors
    assert "mcp-testkit check: cut by Ctrl-C after " in out
    [row] = [line for line in out.splitlines() if line.startswith("P1 ") and "handshake" in line]
    assert row.split()[-1] == "holds"
    [unchecked] = [line for line in out.splitlines() if line.startswith("P9 ")]
    assert unchecked.split()[-1] == "-"
    assert out.strip().splitlines()[-1] == "Exit status 130: the run was cut; a cell marked '-' was not checked."


_INTERRUPTED = """
import signal

import anyio

from mcp_testkit.adapters import ReferenceBridgeAdapter


class InTaskGroup(ReferenceBridgeAdapter):
    async def call(self, tool, arguments):
        if tool == "write":  # P2's first call: Ctrl-C lands while a task group of the bridge is open
            async with anyio.create_task_group():
                signal.raise_signal(signal.SIGINT)
                await anyio.lowlevel.checkpoint()
        return await super().call(tool, arguments)
"""


def test_ctrl_c_swallowed_by_a_task_group_still_stops_the_run(tmp_path: Path) -> None:
    """Ctrl-C landing in a task group leaves it as an exception group, which the contract takes for an error of
    the example: the run stops all the same, and that property's cell is '-', not ERROR."""
    (tmp_path / "interrupted.py").write_text(_INTERRUPTED)
    done = _console(
        tmp_path,
        "interrupted:InTaskGroup",
        "--property",
        "P1",
        "--property",
        "P2",
        "--property",
        "P3",
        "--examples",
        "3",
        "--era",
        "handshake",
    )
    assert done.returncode == 130, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "mcp-testkit check: cut by Ctrl-C after 1 verdict; those so far:" in done.stdout
    cells = {line.split()[0]: line.split()[-1] for line in done.stdout.splitlines() if line.startswith("P")}
    assert cells == {"P1": "holds", "P2": "-", "P3": "-"}, done.stdout


def test_a_hang_and_a_bridge_that_cannot_connect_show_as_such(tmp_path: Path) -> None:
    """check marks a hang HUNG (its own paragraph, not "fails") and, for a bridge that cannot connect, "blocked" for
    the properties asked for, with one line for P0's failure (its declared cases ran first) and one naming what it
    blocks; both exit 1 for a bridge named on the command line."""
    (tmp_path / "odd_bridges.py").write_text(
        "import anyio\n"
        "from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter\n"
        "class Hangs(ReferenceBridgeAdapter):\n"
        "    waiting_on_bridge = True  # its bridge's hang, not the adapter's\n"
        "    async def call(self, tool, arguments):\n"
        "        await anyio.sleep_forever()\n"
        "class CannotConnect(ReferenceBridgeAdapter):\n"
        "    async def connect(self, url, headers):\n"
        "        await super().connect(url, headers)\n"
        "        return Outcome.connection_error(KeyError('properties'))\n"
    )
    common = ["--era", "handshake", "--examples", "3", "--example-timeout", "3"]
    hung = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "check", "odd_bridges:Hangs", "--property", "P7", *common],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert hung.returncode == 1, hung.stdout + hung.stderr
    assert "reference: P7 HUNG in the handshake era: hung in call('tool') after 3 s" in hung.stdout.splitlines()
    assert "hung in an example of P7" in (tmp_path / ".mcp-testkit" / "check.txt").read_text()
    unconnected = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_testkit",
            "check",
            "odd_bridges:CannotConnect",
            "--property",
            "P2",
            "--property",
            "P3",
            *common,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert unconnected.returncode == 1, unconnected.stdout + unconnected.stderr
    rows = [line.split() for line in unconnected.stdout.splitlines() if re.match(r"P\d+ ", line)]
    assert {row[0]: row[-1] for row in rows} == {"P2": "blocked", "P3": "blocked"}, unconnected.stdout
    lines = unconnected.stdout.splitlines()
    assert any(
        line.startswith(
            "reference: P0 FAILS in the handshake era (its declared cases, run before P2): the bridge could not "
            "connect to a valid server: connection_error(KeyError: 'properties')"
        )
        for line in lines
    ), unconnected.stdout
    assert (
        "P2, P3 are blocked for reference in the handshake era: it fails P0, so they were not checked (no verdict, "
        "never held)."
    ) in lines
    verdict = "Exit status 1: a bridge named on the command line fails a property (reference: P0 in the handshake era)."
    assert verdict in lines
    details = (tmp_path / ".mcp-testkit" / "check.txt").read_text()
    assert "note: blocked: the bridge fails P0" in details
    assert details.count("the bridge could not connect to a valid server") == 1  # P0's, once, not once per property
    assert "reference fails P0 in the handshake era (its declared cases, run first), blocking the rest:" in details


def test_ctrl_c_during_a_held_step_is_raised_when_the_step_ends() -> None:
    """`held()` keeps Ctrl-C out of a step it would leave half done (a new event loop): the press is raised by the
    handler there was once the step is over, and that handler is back in place."""
    import signal

    import anyio

    from mcp_testkit.contract._ctrl_c import held
    from mcp_testkit.contract._event_loop import EventLoop

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        reached = []

        def step() -> None:
            with held():
                signal.raise_signal(signal.SIGINT)
                reached.append("the step went on to its end")

        with pytest.raises(KeyboardInterrupt):
            step()
        assert reached == ["the step went on to its end"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with EventLoop() as loop:  # a loop made under held() still runs
            assert loop.call(anyio.sleep, 0) is None
    finally:
        signal.signal(signal.SIGINT, before)


_CRASHING = """
from mcp_testkit.adapters import ReferenceBridgeAdapter


class Unprintable:
    def __str__(self):
        raise RuntimeError("this name cannot be printed")


class Crashing(ReferenceBridgeAdapter):
    name = Unprintable()
"""


def test_a_crash_of_the_tool_itself_is_one_line_and_exits_three(tmp_path: Path) -> None:
    """An exception that escapes check itself (here, labelling a bridge whose name cannot be printed) is one line
    on stderr and exit 3, never a traceback and never 1; --debug prints the traceback."""
    (tmp_path / "crashing.py").write_text(_CRASHING)
    done = _console(tmp_path, "crashing:Crashing", "--property", "P1", "--examples", "1")
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.splitlines() == [
        "mcp-testkit check: the tool itself failed: RuntimeError: this name cannot be printed (a bug of mcp-testkit: "
        "please report it; --debug prints the traceback)"
    ]
    debug = _console(tmp_path, "crashing:Crashing", "--property", "P1", "--examples", "1", "--debug")
    assert debug.returncode == 3
    assert debug.stderr.startswith("Traceback (most recent call last):")


def test_exit_statuses_are_distinct_and_documented() -> None:
    """The exit statuses 0, 1, 2 and 3 (each reached by a test of this file) are told apart in `check --help` and
    in docs/contract.md."""
    done = _check("--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for said in ("Exit status: 0 every property holds or fails as expected", "1 a property fails", "2 a usage or",
                 "3 a property could not be checked"):  # fmt: skip
        assert said in text
    page = (Path(__file__).parents[2] / "docs" / "contract.md").read_text()
    assert "| status | when |" in page
    for status in ("| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 130 |"):
        assert status in page


def test_docs_print_readmes_check_in_a_page() -> None:
    """The run of README's `mcp-testkit check` that docs/contract.md prints (and tests/examples compares with a
    real run) is at most 80 lines, none over 200 characters."""
    page = (Path(__file__).parents[2] / "docs" / "contract.md").read_text()
    block = page.split("```console\n$ mcp-testkit check\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert len(lines) <= 80, len(lines)
    assert max(len(line) for line in lines) <= 200, max(lines, key=len)
    assert "..." not in lines, "printed whole"
