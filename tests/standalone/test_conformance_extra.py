"""The conformance preset, served by `mcp-testkit serve`, passes the official suite's logging and progress scenarios."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._support import Served, start

CONFORMANCE = Path(__file__).parents[2].parent / "shared/tools/conformance"
"""`../shared/tools/conformance` beside the clone: the official suite (npm @modelcontextprotocol/conformance)."""
SUITE_TIMEOUT_S = 300.0
"""One scenario, including the suite's one-time npm install on a cold cache."""

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the conformance suite needs it"),
    pytest.mark.skipif(not CONFORMANCE.exists(), reason=f"the conformance tool is not at {CONFORMANCE}"),
]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `serve --preset conformance` for the module, always stopped."""
    served = start(tmp_path_factory.mktemp("conformance"), "--preset", "conformance")
    try:
        yield served
    finally:
        served.stop()


@pytest.mark.parametrize("scenario", ["logging-set-level", "tools-call-with-logging", "tools-call-with-progress"])
def test_conformance_scenario_passes(served: Served, scenario: str) -> None:
    """The official conformance scenario passes every check against `serve --preset conformance`."""
    ran = subprocess.run(
        [str(CONFORMANCE), "server", "--url", served.url, "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=SUITE_TIMEOUT_S,
    )
    output = ran.stdout + ran.stderr
    tally = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert tally is not None, output
    assert tally[3] == "0", output
    assert tally[1] == tally[2], output
    assert ran.returncode == 0, output
