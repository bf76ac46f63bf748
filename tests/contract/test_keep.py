"""Kept failures: `check --keep-failures`, `run_contract(keep_failures=)` and `resilience_suite(keep_failures=)` write
a test file per failing (bridge, property, era) that replays its counterexample through `replay_example`: run alone
it fails with the same counterexample while the bridge has the bug, and passes once the bug is removed; in-process
adapters and drivers alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import (
    PROPERTIES,
    ContractViolation,
    PropertyResult,
    keep_failure,
    replay_example,
    run_contract,
)

DRIVERS = Path(__file__).resolve().parents[2] / "drivers"
CHECK = [sys.executable, "-m", "mcp_testkit", "check"]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:xdist"]
LIMIT_S = 300

BRIDGE = '''"""The reference bridge behind an application that sends every failed call once more: a planted P2 bug."""

from mcp_testkit.adapters import ReferenceBridgeAdapter

RESENDS = True


class Resending(ReferenceBridgeAdapter):
    name = "resending"

    async def call(self, tool, arguments):
        outcome = await super().call(tool, arguments)
        if RESENDS and outcome.kind != "ok":
            outcome = await super().call(tool, arguments)
        return outcome
'''

DRIVER = f'''"""A driver (docs/driver.md) of the resending bridge."""

import sys

sys.path.insert(0, {str(DRIVERS)!r})

from driver_protocol import outcome, serve

from resending import Resending


class Driven:
    def __init__(self):
        self._adapter = Resending()

    async def connect(self, url, headers):
        self._adapter = Resending()
        result = await self._adapter.connect(url, headers)
        return outcome(result.kind, result.text, result.error)

    async def list(self):
        return await self._adapter.list_tools()

    async def call(self, name, arguments):
        result = await self._adapter.call(name, arguments)
        return outcome(result.kind, result.text, result.error)

    def set_headers(self, headers):
        self._adapter.set_headers(headers)

    async def close(self):
        await self._adapter.close()


probe = Resending()
serve(Driven(), {{"bridge": "resending-driven", "bridge_version": "0.1.0", "page_limit": probe.page_limit,
                 "retry": probe.retry, "timeout_s": probe.timeout_s, "sessions": probe.sessions}})
'''


class Resending(ReferenceBridgeAdapter):
    """The planted P2 bug in-process, switched by `resends`."""

    name = "resending"
    resends = False

    async def call(self, tool: str, arguments: Any) -> Any:
        outcome = await super().call(tool, arguments)
        if Resending.resends and outcome.kind != "ok":
            outcome = await super().call(tool, arguments)
        return outcome


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=LIMIT_S, check=False)


def _fix(bridge: Path) -> None:
    bridge.write_text(bridge.read_text().replace("RESENDS = True", "RESENDS = False"))


def _heading_and_what(counterexample: str) -> tuple[str, str]:
    """A counterexample's inputs (its heading without the example's place) and what broke."""
    lines = counterexample.splitlines()
    end = lines.index(")")
    return "\n".join(lines[1:end]), lines[end + 1]


def _checked(tmp_path: Path, *target: str) -> tuple[Path, dict[str, Any]]:
    """`check TARGET --property P2 --era handshake --keep-failures kept`: the kept file and the JSON verdict."""
    done = _run(
        [
            *CHECK,
            *target,
            "--property",
            "P2",
            "--era",
            "handshake",
            "--examples",
            "5",
            "--keep-failures",
            "kept",
            "--json",
            "report.json",
        ],
        tmp_path,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Kept 1 failure as test files (run them with pytest):" in done.stdout
    (kept,) = (tmp_path / "kept").glob("test_kept_*_p2_handshake.py")
    assert f"  kept/{kept.name}" in done.stdout
    (bridge,) = json.loads((tmp_path / "report.json").read_text()).values()
    verdict = bridge["properties"]["P2@handshake"]
    assert verdict["status"] == "failed"
    return kept, verdict


def _replays(kept: Path, verdict: dict[str, Any], cwd: Path) -> None:
    """The kept file run alone by pytest fails with the counterexample `check` reported."""
    failing = _run([*PYTEST, str(kept)], cwd)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    inputs, what = _heading_and_what(verdict["counterexample"])
    assert "ContractViolation: P2 counterexample (declared case" in failing.stdout
    assert ", replayed): write_runs_at_most_once(" in failing.stdout
    shown = [line.removeprefix("E").strip() for line in failing.stdout.splitlines() if line.startswith("E ")]
    assert [line.strip() for line in inputs.splitlines()] == shown[1:3], failing.stdout
    assert what == "a write ran 2 times for one call"
    assert shown[4] == what, failing.stdout


def test_check_keeps_a_failure_that_fails_alone_and_passes_once_fixed(tmp_path: Path) -> None:
    """`check ./bridge.py:Resending --keep-failures kept` writes a test file and its journal; pytest on the file fails
    with the counterexample check printed; with the bug removed from the bridge's file, the same file passes."""
    bridge = tmp_path / "resending.py"
    bridge.write_text(BRIDGE)
    kept, verdict = _checked(tmp_path, "./resending.py:Resending")
    text = kept.read_text()
    assert "'../resending.py:Resending'" in text, "a file spec is written relative to the kept file"
    assert "from mcp_testkit.faults import Drop, Rule" in text
    journal = json.loads(kept.with_name(kept.stem + "_journal.json").read_text())
    assert journal["counterexample"] == verdict["counterexample"]
    assert [r["rpc_method"] for r in journal["journal"]].count("tools/call") == 2
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _replays(kept, verdict, elsewhere)  # from another folder: the file finds its bridge beside it
    _fix(bridge)
    passing = _run([*PYTEST, str(kept)], elsewhere)
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "1 passed" in passing.stdout


def test_check_keeps_a_drivers_failure(tmp_path: Path) -> None:
    """The same for a bridge in another process (`check --driver COMMAND`): the kept file starts the driver from the
    folder check ran in, fails with the counterexample, and passes once the driver's bridge is fixed."""
    (tmp_path / "resending.py").write_text(BRIDGE)
    (tmp_path / "drive.py").write_text(DRIVER)
    command = f"{sys.executable} drive.py"
    kept, verdict = _checked(tmp_path, "--driver", command)
    assert kept.name == "test_kept_resending_driven_0_1_0_p2_handshake.py"
    text = kept.read_text()
    assert f"DriverFactory({command!r}, cwd=Path(__file__).parent / '..')" in text
    assert "via='socket'" in text
    _replays(kept, verdict, tmp_path / "kept")
    _fix(tmp_path / "resending.py")
    passing = _run([*PYTEST, str(kept)], tmp_path / "kept")
    assert passing.returncode == 0, passing.stdout + passing.stderr


def test_run_contract_keeps_failures_and_replay_example_replays_them(tmp_path: Path) -> None:
    """`run_contract(keep_failures=DIR)` writes the failing verdict's file, naming the factory by its module; the
    verdict carries its inputs and place, and `replay_example` with them raises the same violation until the bug
    is gone."""
    monkey = pytest.MonkeyPatch()
    monkey.setattr(Resending, "resends", True)
    try:
        (result,) = run_contract(Resending, properties=["P2"], eras=["handshake"], keep_failures=tmp_path)
        assert result.failed
        assert str(result.found_as).startswith("declared case ")
        assert result.inputs is not None
        (kept,) = tmp_path.glob("test_kept_resending_p2_handshake.py")
        assert f"'{__name__}:Resending'" in kept.read_text()
        with pytest.raises(ContractViolation) as raised:
            replay_example(Resending, "P2", "handshake", result.inputs, found_as=result.found_as)
        assert result.counterexample is not None
        assert _heading_and_what(str(raised.value)) == _heading_and_what(result.counterexample)
        assert str(raised.value).startswith(f"P2 counterexample ({result.found_as}, replayed): ")
    finally:
        monkey.undo()
    assert Resending.resends is False
    replay_example(Resending, "P2", "handshake", result.inputs, found_as=result.found_as)


def test_resilience_suite_keeps_a_failing_test(pytester: pytest.Pytester) -> None:
    """`resilience_suite(..., keep_failures=DIR)`: a failing test writes its file and names it in its failure; run
    alone, the kept file fails the same way, and passes once the bridge is fixed."""
    pytester.makepyfile(resending=BRIDGE)
    pytester.makepyfile(
        test_suite=(
            "from mcp_testkit.contract import resilience_suite\n"
            "from resending import Resending\n"
            "test_bridge = resilience_suite(Resending, eras=('handshake',), max_examples=5, keep_failures='kept')\n"
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "P2-handshake", timeout=LIMIT_S)
    handshake_cases = sum(1 for prop in PROPERTIES.values() if "handshake" in prop.eras)
    result.assert_outcomes(failed=1, deselected=handshake_cases - 1)
    kept = pytester.path / "kept" / "test_kept_resending_p2_handshake.py"
    result.stdout.fnmatch_lines([f"*P2 (A write runs at most once*) in the handshake era (kept as kept/{kept.name})*"])
    alone = pytester.runpytest_subprocess("-p", "no:randomly", str(kept), timeout=LIMIT_S)
    alone.assert_outcomes(failed=1)
    alone.stdout.fnmatch_lines(["*a write ran 2 times for one call*"])
    _fix(pytester.path / "resending.py")
    pytester.runpytest_subprocess("-p", "no:randomly", str(kept), timeout=LIMIT_S).assert_outcomes(passed=1)


def test_a_factory_that_cannot_be_named_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """keep_failures= with a factory made in a function is a ValueError saying how to make it nameable."""

    class Local(ReferenceBridgeAdapter):
        pass

    with pytest.raises(ValueError, match="define it at the top level of an importable module"):
        run_contract(Local, properties=["P2"], keep_failures=tmp_path)
    assert not any(tmp_path.iterdir())


def test_nothing_is_kept_of_a_verdict_without_an_example(tmp_path: Path) -> None:
    """A passed verdict has nothing to replay: keep_failure writes nothing and says None."""
    assert keep_failure(PropertyResult("P2", "t", "passed"), "x:Y", tmp_path) is None
    assert not any(tmp_path.iterdir())


def test_replay_example_names_what_it_cannot_run() -> None:
    """An unknown property, an era the property has no meaning in, or a spec that does not load: a ValueError."""
    with pytest.raises(ValueError, match="unknown property 'P99'"):
        replay_example(ReferenceBridgeAdapter, "P99", "handshake", {})
    with pytest.raises(ValueError, match="P5 has no meaning in the stateless era"):
        replay_example(ReferenceBridgeAdapter, "P5", "stateless", {})
    with pytest.raises(ValueError, match="replay_example: cannot import 'no_such_module'"):
        replay_example("no_such_module:Adapter", "P2", "handshake", {})


def test_a_drawn_failure_is_kept_as_the_shrunk_example(tmp_path: Path) -> None:
    """A failure Hypothesis drew and shrank is kept as the shrunk example, and replays with the same counterexample."""
    monkey = pytest.MonkeyPatch()
    monkey.setattr(Resending, "resends", True)
    try:
        (result,) = run_contract(
            Resending,
            properties=["P2"],
            eras=["handshake"],
            declared_cases=False,
            max_examples=60,
            keep_failures=tmp_path,
        )
        assert result.failed
        assert result.found_as == "drawn"
        assert result.counterexample is not None
        assert "FOUND_AS = 'drawn'" in (tmp_path / "test_kept_resending_p2_handshake.py").read_text()
        with pytest.raises(ContractViolation) as raised:
            replay_example(Resending, "P2", "handshake", result.inputs or {})
        assert str(raised.value).startswith("P2 counterexample (drawn, replayed): ")
        assert _heading_and_what(str(raised.value)) == _heading_and_what(result.counterexample)
    finally:
        monkey.undo()
