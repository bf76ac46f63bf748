"""The contract's shared example database (`database=`, `check --database`): a failure one process found is the first
example another process tries, through a folder or a real Redis server; and what the draws tell Hypothesis
(`event()`), which its observability output and `--hypothesis-show-statistics` show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from redis_server import redis_server

from mcp_testkit.contract import PROPERTIES, BridgeFacts
from mcp_testkit.contract._database import REDIS_KEY_PREFIX, example_database

ROOT = Path(__file__).resolve().parents[2]
RUN_S = 300
"""A run of P2's 100 drawn examples in another process (about 20 s here) ends well within this, or fails."""
PLANTED = "tests.contract.test_drawn_mutants:_ResendsAfterTwoFaultsInARow"
"""A bridge that resends a write after its second fault in a row: P2's declared cases miss it, its 90th drawn example
finds it."""
RUN_PLANTED = """
import json, sys
from tests.contract.test_drawn_mutants import _ResendsAfterTwoFaultsInARow as Planted
from mcp_testkit.contract import run_contract

[result] = run_contract(Planted, properties=["P2"], eras=["handshake"], declared_cases=False, database=sys.argv[1])
print(json.dumps({"status": result.status, "examples": result.examples, "counterexample": result.counterexample}))
"""


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), **extra}


def _planted(database: str) -> dict[str, Any]:
    """P2 against the planted bridge, its 100 examples all drawn, in a process of its own sharing `database`."""
    done = subprocess.run([sys.executable, "-c", RUN_PLANTED, database], capture_output=True, text=True,
                          timeout=RUN_S, check=False, cwd=ROOT, env=_env())  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert found["status"] == "failed", found
    return found


def _inputs_and_verdict(counterexample: str) -> tuple[str, str]:
    """A counterexample's example (its inputs) and what it found, without the requests (their session ids vary)."""
    inputs, _, found = counterexample.partition("\n)\n")
    return inputs, found.splitlines()[0]


def test_a_failure_found_in_one_process_is_the_first_example_of_the_next_through_a_folder(tmp_path: Path) -> None:
    """One process finds the planted bug after many draws; `mcp-testkit check --database DIR` in another tries the
    saved failure first: P2 fails at its first drawn example (right after its declared cases), with the same inputs."""
    folder = tmp_path / "examples"
    first = _planted(str(folder))
    assert first["examples"] > 1  # found by drawing, not replayed
    assert any(folder.rglob("*")), "nothing was saved in the folder"
    report = tmp_path / "check.json"
    command = [sys.executable, "-m", "mcp_testkit", "check", PLANTED, "--property", "P2", "--era", "handshake",
               "--database", str(folder), "--json", str(report), "-q"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_S, check=False, cwd=ROOT, env=_env())
    assert done.returncode == 1, done.stdout + done.stderr
    [column] = json.loads(report.read_text()).values()
    cell = column["properties"]["P2@handshake"]
    from .test_drawn_mutants import _ResendsAfterTwoFaultsInARow as Planted

    declared = len(PROPERTIES["P2"].cases(BridgeFacts.of(Planted(), "handshake")))
    assert (cell["status"], cell["examples"]) == ("failed", declared + 1)
    assert _inputs_and_verdict(cell["counterexample"]) == _inputs_and_verdict(first["counterexample"])


def test_a_failure_found_in_one_process_is_the_first_example_of_the_next_through_redis(tmp_path: Path) -> None:
    """Two processes sharing a real redis-server (started here, on 127.0.0.1): the first finds the planted bug after
    many draws and saves it under the toolkit's key prefix; the second fails at its first example, the same one."""
    import redis

    with redis_server(tmp_path, "the shared example database's test") as url:
        first = _planted(url)
        assert first["examples"] > 1
        assert redis.Redis.from_url(url).keys(REDIS_KEY_PREFIX + b"*"), "nothing was saved in Redis"
        second = _planted(url)
    assert second["examples"] == 1
    assert _inputs_and_verdict(second["counterexample"]) == _inputs_and_verdict(first["counterexample"])


def test_a_redis_database_without_the_redis_client_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """database="redis://..." without the redis client is a ValueError naming what to install; another scheme is
    refused, and a folder is Hypothesis' folder database."""
    monkeypatch.setitem(sys.modules, "redis", None)  # an import of it now raises ImportError
    with pytest.raises(ValueError, match=r"needs the redis client, which is not installed: pip install 'hypothesis\["):
        example_database("redis://127.0.0.1:6379")
    with pytest.raises(ValueError, match="a shared database is a folder or a redis://host:port URL"):
        example_database("ftp://127.0.0.1/examples")
    assert type(example_database("examples")).__name__ == "DirectoryBasedExampleDatabase"
    assert example_database(None) is None


def test_check_refuses_a_database_it_cannot_open(tmp_path: Path) -> None:
    """`check --database` of an unknown scheme: exit status 2 and one line saying what a database is, nothing run."""
    command = [sys.executable, "-m", "mcp_testkit", "check", "--database", "ftp://127.0.0.1/x"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_S, check=False, cwd=tmp_path, env=_env())
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "mcp-testkit check: --database: database='ftp://127.0.0.1/x': a shared database is a folder or a "
        "redis://host:port URL"
    ]
    assert done.stdout == ""


def test_observability_output_names_the_fault_classes_that_fired(tmp_path: Path) -> None:
    """A real run of P3 (20 drawn examples) with Hypothesis' observability on: each test case's features name the
    era and the fault classes that fired in it, each one a fault its example placed, and some example fired one."""
    code = (
        "from mcp_testkit.adapters import ReferenceBridgeAdapter\n"
        "from mcp_testkit.contract import run_contract\n"
        "run_contract(ReferenceBridgeAdapter, properties=['P3'], eras=['handshake'], max_examples=20, "
        "declared_cases=False)\n"
    )
    env = _env(HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY="1", HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER="1",
               HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "hypothesis"))  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=RUN_S, check=False,
                          cwd=tmp_path, env=env)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [lines] = [path.read_text() for path in (tmp_path / "hypothesis" / "observed").glob("*_testcases.jsonl")]
    cases = [case for line in lines.splitlines() if (case := json.loads(line))["status"] != "gave_up"]  # ran
    assert len(cases) >= 20
    fired_somewhere = set()
    for case in cases:
        features = case["features"]
        assert "P3 era handshake" in features, features
        fired = {name.removeprefix("P3 fired ") for name in features if name.startswith("P3 fired ")}
        placed = {fault["type"] for fault in case["arguments"]["transient"]}
        assert fired == {"nothing"} or (fired and fired <= placed), (fired, placed)
        assert any(note.startswith("P3 in the handshake era, faults fired: ") for note in case["metadata"]["notes"])
        fired_somewhere |= fired - {"nothing"}
    assert fired_somewhere, "no example fired a fault"


def test_pytest_statistics_show_what_a_suite_test_covered(pytester: pytest.Pytester) -> None:
    """`pytest --hypothesis-show-statistics` on a resilience_suite test prints its draws' events: the fault classes
    that fired, the era."""
    pytester.makepyfile(
        "from mcp_testkit.adapters import ReferenceBridgeAdapter\n"
        "from mcp_testkit.contract import resilience_suite\n"
        "test_reference = resilience_suite(ReferenceBridgeAdapter, max_examples=40, eras=['handshake'])\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "P3", "--hypothesis-show-statistics")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "test_reference[P3-handshake]" in out
    assert "P3 era handshake" in out
    assert "P3 fired " in out.replace("P3 fired nothing", "")
