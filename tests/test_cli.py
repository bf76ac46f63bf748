"""The `mcp-testkit` command line as a user meets it: `--version`, one line per mistake, and how `check` ends."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import NamedTuple

import pytest

import mcp_testkit
from mcp_testkit._version import DISTRIBUTION
from mcp_testkit.contract import PROPERTIES, PropertyResult
from mcp_testkit.contract._cli._expectations import judge
from mcp_testkit.contract._cli._summary import summary_lines, verdict_line

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK = "mcp_testkit.adapters:SdkClientAdapter"
CONTRACT_PAGE = Path(__file__).parents[1] / "docs" / "contract.md"
LIMIT_S = 120


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_testkit", *args],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        check=False,
        cwd=cwd,
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
    assert listed == ["serve", "check", "diff", "record", "verify", "proxy", "client"]
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines if line.startswith("  ")), "each has its help"
    assert "'mcp-testkit COMMAND --help'" in lines[-1]


def test_check_ends_saying_which_verdicts_are_expected(tmp_path: Path) -> None:
    """With no bridge named, the SDK client's failures and its legacy mode's fallback are one line, as documented,
    and the last line says why exit 0."""
    done = _run("check", "--property", "P5", "--property", "P2", "--examples", "5", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    *_, expected, _, last = done.stdout.splitlines()
    assert expected == (
        'Expected, as documented (docs/contract.md, "The SDK client\'s verdicts"): sdk-client (auto) 1 failure; '
        "sdk-client (legacy) 1 failure and its fallback in the stateless era."
    )
    assert last == (
        "Exit status 0: every property holds or fails as documented; name your bridge (module:factory) to check it."
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
def test_check_of_a_named_bridge_ends_with_what_its_exit_status_means(
    bridge: str, status: int, last: str, tmp_path: Path
) -> None:
    """With a bridge named, check's last line gives the exit status and, on 1, which properties it failed."""
    done = _run("check", bridge, "--property", "P5", "--examples", "5", cwd=tmp_path)
    assert done.returncode == status, done.stderr
    assert done.stdout.splitlines()[-1] == last


_REASONS = {
    "P8": ("it needs the 'approvals' capability, which the adapter does not declare",),
    "P9": ("it needs the 'tool_cache' capability, which the adapter does not declare",),
}


def _verdicts(held: dict[str, dict[tuple[str, str], str]]) -> dict[str, dict[tuple[str, str], PropertyResult]]:
    """Verdicts by bridge label and (property, era), from their statuses."""
    return {
        label: {
            (pid, era): PropertyResult(
                pid, PROPERTIES[pid].title, status, None, 5, 0.0, notes=_REASONS.get(pid, ()), era=era
            )
            for (pid, era), status in statuses.items()
        }
        for label, statuses in held.items()
    }


LABELS = {REFERENCE: "reference", SDK: "sdk-client (auto)"}


def _judged(verdicts: dict[str, dict[tuple[str, str], PropertyResult]], chosen: list[str], eras: list[str]) -> Judged:
    """The lines under the matrix and the verdict line of a run that named no bridge, and its exit status."""
    judgement = judge(LABELS, verdicts, eras, named=[])
    lines = summary_lines(judgement, LABELS, verdicts, chosen, eras)
    return Judged(lines, verdict_line(judgement, eras, named=False), judgement.status)


class Judged(NamedTuple):
    lines: list[str]
    verdict: str
    status: int


def test_an_unexpected_verdict_of_a_shipped_bridge_is_called_out() -> None:
    """A shipped bridge that fails what it is known to hold gets a line of its own, with the era and what the
    counterexample found, and the run exits 1 although no bridge was named."""
    verdicts = _verdicts(
        {
            "reference": {("P2", "handshake"): "failed", ("P5", "handshake"): "passed"},
            "sdk-client (auto)": {("P2", "handshake"): "passed", ("P5", "handshake"): "failed"},
        }
    )
    judged = _judged(verdicts, ["P2", "P5"], ["handshake"])
    assert judged.lines[:2] == [
        "reference: P2 FAILS in the handshake era: (no counterexample)",
        'Expected, as documented (docs/contract.md, "The SDK client\'s verdicts"): sdk-client (auto) 1 failure.',
    ]
    assert judged.status == 1
    assert judged.verdict.startswith("Exit status 1: 1 verdict above differs from what is documented")


def test_a_known_failure_not_found_is_called_out() -> None:
    """When the SDK client holds a property it is known to fail (too few examples), a note says so; exit 0."""
    verdicts = _verdicts({label: {("P1", "stateless"): "passed"} for label in ("reference", "sdk-client (auto)")})
    judged = _judged(verdicts, ["P1"], ["stateless"])
    assert judged.lines == [
        "Note: sdk-client (auto) holds P1 in the stateless era here, which it is known to fail (too few --examples to "
        "find the known failure)."
    ]
    assert judged.status == 0


def test_an_unexpected_fallback_of_a_shipped_bridge_is_called_out() -> None:
    """A shipped bridge that falls back in the stateless era where it should speak it is one line, and exit 1."""
    verdicts = _verdicts({label: {("P2", "stateless"): "fell_back"} for label in ("reference", "sdk-client (auto)")})
    judged = _judged(verdicts, ["P2"], ["stateless"])
    assert judged.lines[0].startswith("reference fell back to the handshake era in the stateless era: no verdict")
    assert judged.status == 1


def test_an_error_exits_three_whatever_else_fails() -> None:
    """An error verdict (an adapter's, the harness's) makes the exit status 3, even beside an unexpected failure."""
    verdicts = _verdicts({"reference": {("P1", "handshake"): "failed", ("P2", "handshake"): "error"}})
    judged = _judged({**verdicts, "sdk-client (auto)": {}}, ["P1", "P2"], ["handshake"])
    assert judged.status == 3
    assert judged.verdict.startswith("Exit status 3: reference: a property could not be checked (ERROR above")


def test_a_property_that_does_not_apply_to_a_bridge_is_said_never_held() -> None:
    """P8/P9 n/a for want of a capability are named per bridge under the matrix, never counted as held; P5 n/a in
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
    judged = _judged(verdicts, ["P5", "P8", "P9"], ["handshake", "stateless"])
    assert judged.lines == [
        'Expected, as documented (docs/contract.md, "The SDK client\'s verdicts"): sdk-client (auto) 1 failure.',
        "P8 does not apply to sdk-client (auto): it needs the 'approvals' capability, which the adapter does not "
        "declare (n/a, never held).",
        "P9 does not apply to sdk-client (auto): it needs the 'tool_cache' capability, which the adapter does not "
        "declare (n/a, never held).",
    ]
    assert judged.status == 0


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


def test_a_write_run_twice_is_one_broken_promise_listed_once_with_the_properties_that_met_it() -> None:
    """P2 failing, and P6 and P12 failing because a write ran twice in their examples, are one broken promise (P2's)
    on one line naming the three properties; P4's own failure is its own promise."""
    from mcp_testkit.contract._cli._expectations import Judgement
    from mcp_testkit.contract._cli._summary import summary_lines

    def failed(pid: str, what: str, era: str = "handshake") -> PropertyResult:
        text = f"{pid} counterexample (declared case 1 of 3): name(\n    x=1,\n)\n{what}\n  faults fired: -"
        return PropertyResult(pid, PROPERTIES[pid].title, "failed", text, 1, 0.0, era=era)

    twice = "breaks P2's promise (a write runs at most once, exactly once when reported ok): after close(), a write ran"
    unexpected = [
        ("mine", failed("P2", "a write ran 2 times for 1 call")),
        ("mine", failed("P4", "a refused credential was sent again")),
        ("mine", failed("P6", f"{twice} 2 times, in a P6 example")),
        ("mine", failed("P12", f"{twice} 3 times, in a P12 example", era="stateless")),
        ("mine", failed("P2", "a write ran 2 times for 1 call", era="stateless")),
    ]
    lines = summary_lines(Judgement(unexpected=unexpected), {"x:Mine": "mine"}, {}, [], [])
    promises = [line for line in lines if "promise" in line and line.startswith("mine breaks")]
    assert promises == ["mine breaks 2 promises: P2 (in examples of P2, P6, P12), P4 (in examples of P4)."]
    alone = summary_lines(Judgement(unexpected=unexpected[:2]), {"x:Mine": "mine"}, {}, [], [])
    assert not any(line.startswith("mine breaks") for line in alone), "said only where a promise crosses properties"


@pytest.mark.parametrize("command", ["serve", "record", "proxy", "client"])
def test_a_command_imports_its_own_package_not_the_contracts(command: str) -> None:
    """Parsing a command line that names its command imports that command's parser only: `serve --stdio`, a bridge's
    command server, starts without the contract, Hypothesis or pytest (whose import a handshake timeout counts)."""
    probe = (
        "import sys\n"
        "from mcp_testkit.cli import _parser\n"
        f"_parser(only={command!r})\n"
        "print(sorted({'mcp_testkit.contract', 'hypothesis', 'pytest'} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"
