"""The official MCP conformance suite's server scenarios against `TestMcpServer(preset="conformance")`.

The suite is the npm package pinned in tests/conformance (installed by `npm ci` on first use)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from node_trees import NPM_CI_TIMEOUT_S, SCENARIO_TIMEOUT_S, ConformanceSuite

from mcp_testkit import TestMcpServer

SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "logging-set-level",
    "tools-call-with-logging",
    "tools-call-with-progress",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
]


@pytest.fixture(scope="module")
def conformance_server() -> Iterator[TestMcpServer]:
    """One conformance-preset server on loopback for every scenario; its handler errors fail the module."""
    with TestMcpServer("conformance", preset="conformance") as server:
        yield server
    server.check()


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(
    conformance: ConformanceSuite, conformance_server: TestMcpServer, scenario: str, tmp_path: Path
) -> None:
    """The scenario's checks all pass, none fail."""
    run = conformance.run(conformance_server.url, scenario, cwd=tmp_path)
    assert run.tally is not None, f"no result line from the conformance suite (exit {run.returncode}):\n{run.output}"
    assert run.all_passed, run.output
