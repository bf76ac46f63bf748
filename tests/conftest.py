"""Shared test set-up: tests run on anyio's asyncio backend unless they ask for more."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from node_trees import ConformanceSuite, conformance_next_suite, conformance_suite

# The plugin's own tests run pytest on generated files in this process (pytester). pytester drops the
# modules an inner run imported first, so a later import makes second copies whose exception classes
# no longer match (httpx2 then fails to map httpcore2's errors). Importing them here keeps one copy.
import httpcore2  # noqa: F401  # isort: skip
import httpx2  # noqa: F401  # isort: skip
import mcp  # noqa: F401  # isort: skip
import uvicorn  # noqa: F401  # isort: skip

import mcp_testkit.bridge  # isort: skip
import mcp_testkit.server  # isort: skip

pytest_plugins = ["pytester"]


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester whose inner runs do not see that this run is a pytest-xdist worker's.

    xdist tells its workers apart by environment variables, which the inner runs would inherit: they
    would then act as workers too (pytest-benchmark, for one, warns that it is off, and `-W error`
    turns that into an error). Inner runs are the plain runs a user starts, serial or with their own `-n`.
    """
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    return pytester


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def conformance() -> ConformanceSuite:
    """The official MCP conformance suite, installed from tests/conformance's lock on first use."""
    return conformance_suite()


@pytest.fixture(scope="session")
def conformance_next() -> ConformanceSuite:
    """The conformance suite's 2026-07-28 pre-release, installed from tests/conformance_next's lock on first use."""
    return conformance_next_suite()


@pytest.fixture(autouse=True)
def _fresh_tool_cache() -> Iterator[None]:
    """Every test starts and ends with an empty bridge tool cache at its defaults.

    Servers listen on port 0, and a port a finished test freed can come back to a later one: its
    URL would then find the earlier server's listing in the process-level cache.
    """
    mcp_testkit.bridge.ToolCache.reset()
    yield
    mcp_testkit.bridge.ToolCache.reset()
