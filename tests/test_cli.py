"""The `mcp-testkit` command line as a user meets it: `--version`, one line per mistake, and how `check` ends."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import mcp_testkit
from mcp_testkit._check import _expected
from mcp_testkit.contract import PROPERTIES, PropertyResult

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK = "mcp_testkit.adapters:SdkClientAdapter"
CONTRACT_PAGE = Path(__file__).parents[1] / "docs" / "contract.md"
LIMIT_S = 120


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", *args], capture_output=True, text=True, timeout=LIMIT_S, check=False
    )


def test_version_is_the_installed_distributions() -> None:
    """`mcp-testkit --version` prints the installed version, the one the package says it is, and exits 0."""
    done = _run("--version")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"mcp-testkit {version('mcp-testkit')}\n"
    assert version("mcp-testkit") == mcp_testkit.__version__


@pytest.mark.parametrize(
    ("args", "start", "names", "usage_of"),
    [
        (["serve", "--port", "70000"], "mcp-testkit serve: ", "70000 is not a port: give 1 to 65535", "serve"),
        (["serve", "--port", "-1"], "mcp-testkit serve: ", "-1 is not a port", "serve"),
        (["serve", "--port", "http"], "mcp-testkit serve: ", "'http' is not a port number", "serve"),
        (["serve", "--stdoi"], "mcp-testkit serve: ", "--stdoi (did you mean --stdio?)", "serve"),
        (["serve", "--page-size", "two"], "mcp-testkit serve: ", "'two'", "serve"),
        (["check", "--examples", "0"], "mcp-testkit check: ", "0 is too few: check at least 1 example", "check"),
        (["check", "--examples", "lots"], "mcp-testkit check: ", "'lots' is not a whole number", "check"),
        (["check", "--exmaples", "5"], "mcp-testkit check: ", "--exmaples (did you mean --examples?)", "check"),
        (["check", "--transport", "pigeon"], "mcp-testkit check: ", "'pigeon'", "check"),
        (["client"], "mcp-testkit client: ", "the following arguments are required: url", "client"),
        (["client", "http://127.0.0.1/mcp", "--era", "old"], "mcp-testkit client: ", "'old'", "client"),
        (["chek"], "mcp-testkit: ", "'chek'", "top"),
        ([], "mcp-testkit: ", "command", "top"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_a_mistake_is_one_line_on_stderr_with_its_commands_usage(
    args: list[str], start: str, names: str, usage_of: str
) -> None:
    """Every command-line mistake exits 2 with one line on stderr: the command, the mistake, that command's usage."""
    done = _run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(start), line
    assert names in line
    # The usage shown is the subcommand's own: each names options only it has.
    shown = {
        "serve": "--get-stream" in line,
        "check": "--examples N" in line,
        "client": "--arguments JSON" in line,
        "top": "{serve,check,client}" in line,
    }
    assert [name for name, present in shown.items() if present] == [usage_of], line


def test_check_ends_saying_which_verdicts_are_expected() -> None:
    """With no bridge named, the last line says the reference holds, the SDK client's failures are known, why exit 0."""
    done = _run("check", "--property", "P5", "--property", "P2", "--examples", "5")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "Expected: reference holds every property checked; sdk-client fails P5, as documented "
        '(docs/contract.md, "The SDK client\'s verdicts"). Exit status 0: no bridge was named, so this run only '
        "reports; name yours (module:factory) to get exit status 1 when it fails a property."
    )


def test_the_documented_section_exists() -> None:
    """The section check's last line points to is in docs/contract.md."""
    assert "\n## The SDK client's verdicts\n" in CONTRACT_PAGE.read_text()


@pytest.mark.parametrize(
    ("bridge", "status", "last"),
    [
        (REFERENCE, 0, "Exit status 0: every bridge named on the command line holds every property checked."),
        (SDK, 1, "Exit status 1: a bridge named on the command line fails a property (sdk-client: P5)."),
    ],
    ids=["holds", "fails"],
)
def test_check_of_a_named_bridge_ends_with_what_its_exit_status_means(bridge: str, status: int, last: str) -> None:
    """With a bridge named, check's last line gives the exit status and, on 1, which properties it failed."""
    done = _run("check", bridge, "--property", "P5", "--examples", "5")
    assert done.returncode == status, done.stderr
    assert done.stdout.splitlines()[-1] == last


def test_an_unexpected_verdict_of_a_shipped_bridge_is_called_out() -> None:
    """A shipped bridge whose verdicts differ from the expected ones is named UNEXPECTED in the closing line."""
    verdicts = {
        label: {
            pid: PropertyResult(pid, PROPERTIES[pid].title, "passed" if passed else "failed", None, 5, 0.0)
            for pid, passed in held.items()
        }
        for label, held in {"reference": {"P2": False, "P5": True}, "sdk-client": {"P2": True, "P5": False}}.items()
    }
    factories = [
        (REFERENCE, type("Reference", (), {"name": "reference"})),
        (SDK, type("Sdk", (), {"name": "sdk-client"})),
    ]
    line = _expected(factories, verdicts, ["P2", "P5"], [], named=False)
    assert line.startswith("Expected: reference holds every property checked; sdk-client fails P5, as documented")
    assert "UNEXPECTED: reference fails P2, which it should hold (a bug: please report it)." in line


def test_a_known_failure_not_found_is_called_out() -> None:
    """When the SDK client holds a property it is known to fail (too few examples), the closing line says so."""
    verdicts = {
        label: {"P1": PropertyResult("P1", PROPERTIES["P1"].title, "passed", None, 1, 0.0)}
        for label in ("reference", "sdk-client")
    }
    factories = [
        (REFERENCE, type("Reference", (), {"name": "reference"})),
        (SDK, type("Sdk", (), {"name": "sdk-client"})),
    ]
    line = _expected(factories, verdicts, ["P1"], [], named=False)
    assert "UNEXPECTED: sdk-client holds P1 here (too few --examples to find the known failure)." in line
