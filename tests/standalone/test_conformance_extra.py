"""The conformance preset, served by `mcp-testkit serve`, passes the official suite's logging and progress scenarios."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from node_trees import NPM_CI_TIMEOUT_S, SCENARIO_TIMEOUT_S, ConformanceSuite

from ._support import Served, start


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One `serve --preset conformance` for the module, always stopped."""
    served = start(tmp_path_factory.mktemp("conformance"), "--preset", "conformance")
    try:
        yield served
    finally:
        served.stop()


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
@pytest.mark.parametrize("scenario", ["logging-set-level", "tools-call-with-logging", "tools-call-with-progress"])
def test_conformance_scenario_passes(
    conformance: ConformanceSuite, served: Served, scenario: str, tmp_path: Path
) -> None:
    """The official conformance scenario passes every check against `serve --preset conformance`."""
    run = conformance.run(served.url, scenario, cwd=tmp_path)
    assert run.all_passed, run.output
