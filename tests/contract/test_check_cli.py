"""Tests of `mcp-testkit check`, run as a subprocess the way a user runs it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcp_testkit.contract import PROPERTIES

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK = "mcp_testkit.adapters:SdkClientAdapter"


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "check", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def default_run() -> subprocess.CompletedProcess[str]:
    """One run of `mcp-testkit check --examples 20` with no bridge named: both shipped bridges."""
    return _check("--examples", "20")


def test_default_run_exits_zero(default_run: subprocess.CompletedProcess[str]) -> None:
    """With no bridge named, check exits 0 even though the SDK client fails properties: the matrix is the report."""
    assert default_run.returncode == 0, default_run.stderr
    assert default_run.stderr == ""


def test_default_run_shows_progress_per_property(default_run: subprocess.CompletedProcess[str]) -> None:
    """check prints a header per bridge and a progress line per property with its verdict and example count."""
    lines = default_run.stdout.splitlines()
    assert lines[0] == f"checking reference ({REFERENCE}), 20 examples per property, asgi"
    assert f"checking sdk-client ({SDK}), 20 examples per property, asgi" in lines
    for property_id, prop in PROPERTIES.items():
        progress = [line for line in lines if line.startswith(f"  {property_id} ") and line.endswith(prop.title)]
        assert len(progress) == 2, progress
        assert " examples " in progress[0]
        assert progress[0].split()[1] == "holds"
        below = lines[lines.index(progress[0]) + 1]
        assert below.startswith("       coverage: ")
        assert " declared + " in below


def test_default_run_prints_the_matrix(default_run: subprocess.CompletedProcess[str]) -> None:
    """check prints a property x bridge matrix with both bridges as columns and every property as a row."""
    lines = default_run.stdout.splitlines()
    [header] = [line for line in lines if line.startswith("property ")]
    assert header.split() == ["property", "reference", "sdk-client"]
    rows = {line.split()[0]: line.split()[-2:] for line in lines if line[:2] in PROPERTIES and "examples" not in line}
    assert rows == {
        "P1": ["holds", "FAILS"],
        "P2": ["holds", "holds"],
        "P3": ["holds", "holds"],
        "P4": ["holds", "holds"],
        "P5": ["holds", "FAILS"],
        "P6": ["holds", "FAILS"],
        "P7": ["holds", "holds"],
        "P8": ["holds", "n/a"],
        "P9": ["holds", "n/a"],
    }
    assert lines[-1].startswith(
        "Expected: reference holds every property checked; sdk-client fails P1, P5, P6, as documented ("
    )
    assert "), and P8, P9 do not apply to it (its adapter declares no capability they need)." in lines[-1]


def test_default_run_prints_counterexamples(default_run: subprocess.CompletedProcess[str]) -> None:
    """Under the matrix, every failure of the SDK client comes with its shrunk counterexample and journal."""
    out = default_run.stdout
    for property_id in ("P1", "P5", "P6"):
        assert f"sdk-client fails {property_id} ({PROPERTIES[property_id].title}):" in out
    assert "reference fails" not in out
    p5 = out.split("sdk-client fails P5")[1].split("sdk-client fails")[0]
    assert "P5 counterexample (declared case 1 of 9): new_session_after_404(" in p5
    assert "faults fired: #5 LoseSession()" in p5
    assert "tools/call tool -> 404" in p5


def test_named_failing_bridge_exits_one() -> None:
    """A bridge named on the command line that fails a property makes check exit 1."""
    done = _check(SDK, "--property", "P5", "--examples", "10")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "sdk-client fails P5" in done.stdout
    assert "checking reference" not in done.stdout


def test_named_passing_bridge_exits_zero() -> None:
    """A bridge named on the command line that holds every property asked for makes check exit 0."""
    done = _check(REFERENCE, "--property", "P1", "--property", "P4", "--examples", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines() if line.startswith("  P")] == ["P1", "P4"]
    assert "FAILS" not in done.stdout


def test_socket_transport_is_named_in_the_progress() -> None:
    """--transport socket runs the bridge over 127.0.0.1 and says so."""
    done = _check(REFERENCE, "--property", "P5", "--examples", "5", "--transport", "socket")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].endswith(", socket")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("mcp_testkit.adapters", "'mcp_testkit.adapters' is not module:factory (e.g. mypkg.testing:MyAdapter)"),
        (":ReferenceBridgeAdapter", "is not module:factory"),
        ("no_such_module_xyz:Adapter", "cannot import 'no_such_module_xyz'"),
        ("mcp_testkit.adapters:NoSuchAdapter", "module 'mcp_testkit.adapters' has no 'NoSuchAdapter'"),
        ("mcp_testkit.adapters:__doc__", "'mcp_testkit.adapters:__doc__' is not callable; it must make an adapter"),
    ],
    ids=["no-colon", "no-module", "not-importable", "no-attribute", "not-callable"],
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
    done = _check("--property", "P10", "--examples", "1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == "mcp-testkit check: unknown property 'P10'; known: P1, P2, P3, P4, P5, P6, P7, P8, P9"


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
    return subprocess.run([str(script), "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_console_script_imports_an_adapter_from_the_current_folder(tmp_path: Path) -> None:
    """`mcp-testkit check mymod:Adapter` finds mymod.py in the folder it is run from."""
    (tmp_path / "mymod.py").write_text(textwrap.dedent(_ADAPTERS))
    done = _console(tmp_path, "mymod:Fine", "--property", "P1", "--examples", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0] == "checking fine (mymod:Fine), 5 examples per property, asgi"


def test_an_adapter_error_is_reported_as_error_and_exits_two(tmp_path: Path) -> None:
    """An exception escaping an adapter is an ERROR in the matrix, with its traceback, and check exits 2."""
    (tmp_path / "mymod.py").write_text(textwrap.dedent(_ADAPTERS))
    done = _console(tmp_path, "mymod:Raising", "--property", "P2", "--examples", "5")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines()[1].split()[:2] == ["P2", "ERROR"]
    assert "raising: P2 (A write runs at most once, exactly once when reported ok) could not be checked" in done.stdout
    assert "the adapter's call('write') raised KeyError: 'write'" in done.stdout
    assert "Traceback" in done.stdout


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
    done = _check(REFERENCE, "--property", "P6", "--budget", "0.001", "--example-timeout", "5")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "note: the budget of 0.001 s ran out after" in done.stdout
