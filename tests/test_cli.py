"""The `mcp-testkit` command line as a user meets it: `--version`, one line per mistake, and how `check` ends."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import mcp_testkit
from mcp_testkit._version import DISTRIBUTION
from mcp_testkit.contract import PROPERTIES, PropertyResult
from mcp_testkit.contract._cli._expectations import closing_line

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
    assert done.stdout == f"mcp-testkit {version(DISTRIBUTION)}\n"
    assert version(DISTRIBUTION) == mcp_testkit.__version__


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
        (["serve", "--match", "fuzzy"], "mcp-testkit serve: ", "'fuzzy'", "serve"),
        (["record", "--out", "t.json"], "mcp-testkit record: ", "--upstream --upstream-command is required", "record"),
        (["verify", "t.json", "--upstream", "u", "--hedaer"], "mcp-testkit verify: ", "--header?)", "verify"),
        (["client"], "mcp-testkit client: ", "the following arguments are required: url", "client"),
        (["client", "http://127.0.0.1/mcp", "--era", "old"], "mcp-testkit client: ", "'old'", "client"),
        (["chek"], "mcp-testkit: ", "'chek' (choose from 'serve', 'check'", "top"),
        (["chek"], "mcp-testkit: ", "(did you mean 'check'?)", "top"),
        (["serve", "--preset", "dmo"], "mcp-testkit serve: ", "(did you mean 'demo'?)", "serve"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else None,
)
def test_a_mistake_is_one_line_on_stderr_with_its_commands_usage(
    args: list[str], start: str, names: str, usage_of: str
) -> None:
    """Every command-line mistake exits 2 with one line on stderr: the command, the mistake, where its usage is."""
    done = _run(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(start), line
    assert names in line
    # The usage named is the subcommand's own, and the line stays short: a usage is a screenful, not a line.
    command = "mcp-testkit" if usage_of == "top" else f"mcp-testkit {usage_of}"
    assert line.endswith(f"; see '{command} --help'"), line
    assert len(line) < 250, line


def test_a_bare_command_prints_an_overview() -> None:
    """`mcp-testkit` alone prints each command with its one-line help on stdout, and how to read more; exit 0."""
    done = _run()
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    listed = [line.split()[0] for line in lines if line.startswith("  ")]
    assert listed == ["serve", "check", "record", "verify", "proxy", "client"]
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines if line.startswith("  ")), "each has its help"
    assert "'mcp-testkit COMMAND --help'" in lines[-1]


def test_check_ends_saying_which_verdicts_are_expected() -> None:
    """With no bridge named, the last line says the reference holds in both eras, the SDK client's failures and its
    legacy mode's fallback are known, and why exit 0."""
    done = _run("check", "--property", "P5", "--property", "P2", "--examples", "5")
    assert done.returncode == 0, done.stderr
    documented = 'as documented (docs/contract.md, "The SDK client\'s verdicts")'
    assert done.stdout.splitlines()[-1] == (
        "Expected: reference holds every property checked in both eras; sdk-client (auto) fails P5 in the handshake "
        f"era and holds every property checked in the stateless era, {documented}; sdk-client (legacy) fails P5 in "
        f"the handshake era and falls back to the handshake in the stateless era, {documented}. Exit status 0: no "
        "bridge was named, so this run only reports; name yours (module:factory) to get exit status 1 when it fails "
        "a property."
    )


def test_the_documented_section_exists() -> None:
    """The section check's last line points to is in docs/contract.md."""
    assert "\n## The SDK client's verdicts\n" in CONTRACT_PAGE.read_text()


@pytest.mark.parametrize(
    ("bridge", "status", "last"),
    [
        (REFERENCE, 0, "Exit status 0: every bridge named on the command line holds every property checked."),
        (
            SDK,
            1,
            "Exit status 1: a bridge named on the command line fails a property (sdk-client (auto): P5 in the "
            "handshake era).",
        ),
    ],
    ids=["holds", "fails"],
)
def test_check_of_a_named_bridge_ends_with_what_its_exit_status_means(bridge: str, status: int, last: str) -> None:
    """With a bridge named, check's last line gives the exit status and, on 1, which properties it failed."""
    done = _run("check", bridge, "--property", "P5", "--examples", "5")
    assert done.returncode == status, done.stderr
    assert done.stdout.splitlines()[-1] == last


def _verdicts(held: dict[str, dict[tuple[str, str], str]]) -> dict[str, dict[tuple[str, str], PropertyResult]]:
    """Verdicts by bridge label and (property, era), from their statuses."""
    return {
        label: {
            (pid, era): PropertyResult(pid, PROPERTIES[pid].title, status, None, 5, 0.0, era=era)
            for (pid, era), status in statuses.items()
        }
        for label, statuses in held.items()
    }


LABELS = {REFERENCE: "reference", SDK: "sdk-client (auto)"}


def test_an_unexpected_verdict_of_a_shipped_bridge_is_called_out() -> None:
    """A shipped bridge whose verdicts differ from the expected ones is named UNEXPECTED in the closing line, with
    the era."""
    verdicts = _verdicts(
        {
            "reference": {("P2", "handshake"): "failed", ("P5", "handshake"): "passed"},
            "sdk-client (auto)": {("P2", "handshake"): "passed", ("P5", "handshake"): "failed"},
        }
    )
    line = closing_line(LABELS, verdicts, ["P2", "P5"], ["handshake"], [], named=False)
    assert line.startswith(
        "Expected: reference holds every property checked; sdk-client (auto) fails P5, as documented"
    )
    assert (
        "UNEXPECTED: reference fails P2 in the handshake era, which it should hold (a bug: please report it)." in line
    )


def test_a_known_failure_not_found_is_called_out() -> None:
    """When the SDK client holds a property it is known to fail (too few examples), the closing line says so."""
    verdicts = _verdicts(
        {label: {("P1", "stateless"): "passed"} for label in ("reference", "sdk-client (auto)")}
    )
    line = closing_line(LABELS, verdicts, ["P1"], ["stateless"], [], named=False)
    assert (
        "UNEXPECTED: sdk-client (auto) holds P1 in the stateless era here (too few --examples to find the known "
        "failure)." in line
    )


def test_an_unexpected_fallback_of_a_shipped_bridge_is_called_out() -> None:
    """A shipped bridge that falls back in the stateless era where it should speak it is called out as a bug."""
    verdicts = _verdicts(
        {label: {("P2", "stateless"): "fell_back"} for label in ("reference", "sdk-client (auto)")}
    )
    line = closing_line(LABELS, verdicts, ["P2"], ["stateless"], [], named=False)
    assert "UNEXPECTED: reference fell back to the handshake era in the stateless era (a bug: please report it)" in line


def test_a_property_that_does_not_apply_to_a_bridge_is_said_never_held() -> None:
    """P8/P9 n/a for want of a capability are named per bridge in the closing line, never counted as held; P5 n/a in
    the stateless era (every bridge's) goes unsaid."""
    verdicts = _verdicts(
        {
            "reference": {
                **{(pid, era): "passed" for pid in ("P8", "P9") for era in ("handshake", "stateless")},
                ("P5", "handshake"): "passed",
                ("P5", "stateless"): "not_applicable",
            },
            "sdk-client (auto)": {
                **{(pid, era): "not_applicable" for pid in ("P8", "P9") for era in ("handshake", "stateless")},
                ("P5", "handshake"): "failed",
                ("P5", "stateless"): "not_applicable",
            },
        }
    )
    eras = ["handshake", "stateless"]
    line = closing_line(LABELS, verdicts, ["P5", "P8", "P9"], eras, [], named=False)
    reason = "(its adapter declares no capability or fact they need)"
    assert line.startswith(
        "Expected: reference holds every property checked in both eras; sdk-client (auto) fails P5 in the handshake "
        f"era and holds every property checked in the stateless era, as documented "
        f'(docs/contract.md, "The SDK client\'s verdicts"), and P8, P9 do not apply to it {reason}.'
    )
    assert "UNEXPECTED" not in line
    named = closing_line(LABELS, verdicts, ["P8", "P9"], eras, [], named=True)
    assert named == (
        "Exit status 0: every bridge named on the command line holds every property checked; "
        f"P8, P9 do not apply to sdk-client (auto) {reason}."
    )


def test_serve_stdio_refuses_a_scenario_of_the_stateless_era_only(tmp_path: Path) -> None:
    """A JSON scenario serving only 2026-07-28 cannot be served over stdio: one line says why, exit 2."""
    scenario = tmp_path / "modern.json"
    scenario.write_text('{"eras": ["stateless"], "tools": []}')
    done = _run("serve", "--stdio", "--scenario", str(scenario))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"mcp-testkit serve: --scenario {scenario}: its eras are stateless only, which needs HTTP: over --stdio the "
        "server speaks the handshake era only\n"
    )
