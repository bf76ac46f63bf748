"""The official MCP conformance suite's server scenarios against `TestMcpServer(preset="conformance")`."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_testkit import TestMcpServer

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = REPO / ".." / "shared" / "tools" / "conformance"
# The first run installs @modelcontextprotocol/conformance into ~/.cache with npm.
FIRST_RUN_S = 900
TALLY = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

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
]


@pytest.fixture(scope="module")
def conformance_server() -> Iterator[TestMcpServer]:
    """One conformance-preset server on loopback for every scenario; its handler errors fail the module."""
    if shutil.which("node") is None:
        pytest.skip("the conformance suite needs Node.js (`node` is not on PATH)")
    with TestMcpServer("conformance", preset="conformance") as server:
        yield server
    server.check()


@pytest.mark.timeout(FIRST_RUN_S)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario_passes(conformance_server: TestMcpServer, scenario: str, tmp_path: Path) -> None:
    """The scenario's checks all pass, none fail."""
    run = subprocess.run(
        ["bash", str(CONFORMANCE), "server", "--url", conformance_server.url, "--scenario", scenario],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=FIRST_RUN_S,
        check=False,
    )
    output = ANSI.sub("", run.stdout + run.stderr)
    tally = TALLY.search(output)
    assert tally is not None, f"no result line from the conformance suite (exit {run.returncode}):\n{output}"
    passed, total, failed = (int(n) for n in tally.groups()[:3])
    assert (failed, passed) == (0, total), output
    assert total > 0, output
    assert run.returncode == 0, output
