"""Shared test set-up: the suite runs on pytest-xdist workers, tests on anyio's asyncio backend unless they ask."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from node_trees import ConformanceSuite, conformance_next_suite, conformance_suite
from trusted_traffic import watch_servers

# The plugin's own tests run pytest on generated files in this process (pytester). pytester drops the
# modules an inner run imported first, so a later import makes second copies whose exception classes
# no longer match (httpx2 then fails to map httpcore2's errors). Importing them here keeps one copy.
import httpcore2  # noqa: F401  # isort: skip
import httpx2  # noqa: F401  # isort: skip
import mcp  # noqa: F401  # isort: skip
import uvicorn  # noqa: F401  # isort: skip

import mcp_testkit.adapters  # isort: skip
import mcp_testkit.bridge  # isort: skip
import mcp_testkit.cassettes  # isort: skip
import mcp_testkit.contract  # isort: skip
import mcp_testkit.proxy  # isort: skip
import mcp_testkit.server  # isort: skip

if TYPE_CHECKING:
    from xdist.workermanage import WorkerController

pytest_plugins = ["pytester"]
_DIST = "mcp_testkit_dist"


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """A plain `pytest` runs the suite on pytest-xdist workers, two per core, handing out tests one at a
    time as workers free up, except the tests that share a module's fixture, which go together (loadgroup).
    Two per core because much of the suite waits on real sockets, processes and the real clock: on 2 cores the
    whole run took 12 min 5 s with 2 workers and 8 min 41 s with 4 (issue 35), the same tests passing.

    Set here rather than as `-n auto` in addopts, which would make `pytest -p no:xdist` an error:
    `-p no:xdist`, `-n 0` and `--pdb` run in one process, `-n N` and `--dist` choose as usual.
    """
    if not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput"):
        return  # xdist is off, or this is one of its workers (which must not start workers of its own)
    if config.option.numprocesses is None:
        config.option.numprocesses = 2 * (os.cpu_count() or 1)
        if config.option.dist == "no":
            config.option.dist = "loadgroup"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "sends_invalid_mcp(reason): the test makes a client this project vouches for send invalid MCP on purpose "
        "(a mutant), so the suite-wide referee check (tests/trusted_traffic.py) leaves its traffic alone",
    )


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: WorkerController) -> None:
    """Each xdist worker is told the distribution mode: it parses only the command line, which may not name it."""
    node.workerinput[_DIST] = node.config.option.dist


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups off the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`, the tests that use a module-scoped fixture of this suite go to one worker,
    which then builds it once: some take half a minute (a whole contract run, a `check` subprocess)."""
    workerinput = getattr(config, "workerinput", {})
    if workerinput.get(_DIST) != "loadgroup":
        return
    config.option.loadgroup = True  # what xdist's worker looks at, set from its own command line
    for item in items:
        info = getattr(item, "_fixtureinfo", None)  # pytest keeps an item's fixture definitions there
        module = item.getparent(pytest.Module)
        if info is None or module is None:
            continue
        if any(defs[-1].scope == "module" and defs[-1].baseid for defs in info.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(module.nodeid))


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


@pytest.fixture(autouse=True)
def _trusted_clients_send_valid_mcp(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The referee over the suite's traffic (tests/trusted_traffic.py): a test fails at its end when the official SDK
    client, the TypeScript SDK client or the reference bridge sent a message that breaks one of MCP's rules to a
    server it made (the journals its servers' `reset()` dropped included)."""
    if request.node.get_closest_marker("sends_invalid_mcp") is not None:
        yield
        return
    found_so_far = watch_servers(monkeypatch)
    yield
    found = found_so_far()
    if found:
        shown = "\n  ".join(found[:20])
        more = f"\n  ... and {len(found) - 20} more" if len(found) > 20 else ""
        pytest.fail(
            f"a client this project vouches for sent invalid MCP ({len(found)} violations):\n  {shown}{more}\n"
            "(tests/trusted_traffic.py; a test that means it marks itself @pytest.mark.sends_invalid_mcp)",
            pytrace=False,
        )
