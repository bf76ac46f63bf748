"""pytest plugin: a fake MCP server one fixture argument away, and its journal in every failure report.

Fixtures: `mcp_server` (one server per pytest worker, started once and reset for every test),
`mcp_server_factory` (more servers, stopped after the test), `mcp_client` and `mcp_http_client`
(async: the `mcp` SDK client and a raw `httpx2.AsyncClient`), `mcp_env` (URL and token in
environment variables). The marker `@pytest.mark.mcp_server(...)` configures `mcp_server` for one
test. Options and ini keys live in the `mcp-testkit` group.

This module holds hooks, options, the marker and fixtures only (in that order); the machinery lives in
`mcp_testkit._plugin`. Nothing heavy is imported here: the server, uvicorn, httpx2 and `mcp` are
imported by the fixtures that need them, so a pytest run that uses none of them does not pay for them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mcp_testkit._plugin import clients, diagrams, served
from mcp_testkit._plugin.handouts import McpEnv, McpServerFactory
from mcp_testkit._plugin.options import (
    CASSETTE_KEYS,
    JOURNAL_MODES,
    MARKER,
    OPTIONS,
    RECORD_MODES,
    TRANSPORTS,
    keep_asyncio_fixture_loop_scope,
    marker_settings,
    read_options,
)
from mcp_testkit._plugin.pool import ServerPool

if TYPE_CHECKING:
    import httpx2
    from mcp import Client

    from mcp_testkit.server import TestMcpServer

__all__ = ["McpEnv", "McpServerFactory"]


# -- options -----------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-testkit", "fake MCP servers (mcp-testkit)")
    group.addoption(
        "--mcp-transport",
        dest="mcp_transport",
        choices=TRANSPORTS,
        default=None,
        help="how fixtures reach the fake MCP server: 'socket' (uvicorn on 127.0.0.1, the default) "
        "or 'asgi' (in-process, clients built on httpx2.ASGITransport)",
    )
    group.addoption(
        "--mcp-journal",
        dest="mcp_journal",
        choices=JOURNAL_MODES,
        default=None,
        help="when to add the server's journal to a test's report: 'fail' (default), 'always', 'never'",
    )
    group.addoption(
        "--mcp-record",
        dest="mcp_record",
        choices=RECORD_MODES,
        default=None,
        help="cassettes (marker cassette=): 'none' replays only (default), 'once' records a missing one, "
        "'new' records calls a cassette lacks, 'all' records anew",
    )
    group.addoption(
        "--mcp-report",
        dest="mcp_report",
        metavar="DIR",
        default=None,
        help="write the journal of every failing test that used mcp-testkit's servers into DIR as an HTML "
        "sequence diagram (one file a test, named after its node id)",
    )
    parser.addini("mcp_transport", default="socket", help="default of --mcp-transport")
    parser.addini("mcp_record", default="none", help="default of --mcp-record")
    parser.addini("mcp_journal", default="fail", help="default of --mcp-journal")
    parser.addini("mcp_report", default="", help="default of --mcp-report (relative to the ini file)")
    parser.addini("mcp_journal_limit", default="50", help="at most this many journal lines a server in a report")
    parser.addini(
        "mcp_strict",
        default="true",
        help="fail a test whose client broke MCP's rules in its servers' journals (the referee, docs/referee.md): "
        "true (default) or false",
    )
    parser.addini(
        "mcp_allow_violations",
        type="args",
        default=[],
        help="referee rule ids a test's client may break without failing it (space-separated)",
    )


# -- configure ---------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)  # before pytest-asyncio reads its ini keys
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    has_asyncio = config.pluginmanager.has_plugin("asyncio")
    config.stash[OPTIONS] = read_options(config, asyncio=has_asyncio)
    if has_asyncio:
        keep_asyncio_fixture_loop_scope(config)
        if not config.pluginmanager.has_plugin(clients.ASYNCIO_FIXTURES):
            config.pluginmanager.register(clients.asyncio_fixtures(), clients.ASYNCIO_FIXTURES)


# -- hooks -------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """After a passing test body, raise what its servers' tool handlers raised: the test fails."""
    __tracebackhide__ = True
    try:
        result = yield
    except BaseException:
        # The test failed already; the handler errors are listed in its journal section.
        served.mark_checked(item)
        raise
    used = served.used_by(item, create=False)
    if used is not None:
        served.check(item, used.served)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Add an "mcp journal" section to the report of a failing test (of every test with 'always'), and with
    --mcp-report write its diagrams and name them under the journal."""
    report = yield
    used = served.used_by(item, create=False)
    if used is None or not used.served:
        return report
    options = item.config.stash[OPTIONS]
    first_failure = report.failed and not used.journal_on_failure
    wanted = options.journal == "always" and report.when == "call"
    drawn = diagrams.write(item, used, options.report_dir) if first_failure and options.report_dir else {}
    used.journal_on_failure = used.journal_on_failure or report.failed
    if options.journal != "never" and (first_failure or wanted):
        for one in used.served:
            text = served.journal_text(one, used, options.limit)
            report.sections.append((one.title, text + (f"\ndiagram: {drawn[one]}" if one in drawn else "")))
    elif drawn:
        report.sections.append(("mcp report", "\n".join(f"diagram: {path}" for path in drawn.values())))
    if drawn:
        diagrams.attach(item.config, report, drawn)
    return report


# -- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _mcp_server_pool(pytestconfig: pytest.Config) -> Iterator[ServerPool]:
    """The servers of this pytest worker, by settings; each started once and stopped at the end."""
    pool = ServerPool(pytestconfig.stash[OPTIONS].transport)
    yield pool
    pool.close()


@pytest.fixture
def mcp_server_factory(request: pytest.FixtureRequest) -> Iterator[McpServerFactory]:
    """Makes more servers in one test: `mcp_server_factory(name="gh", page_size=5)`; stopped after it."""
    factory = McpServerFactory(request.node, request.config.stash[OPTIONS].transport)
    yield factory
    factory.close()


@pytest.fixture
def mcp_server(request: pytest.FixtureRequest, _mcp_server_pool: ServerPool) -> Iterator[TestMcpServer]:
    """A started `TestMcpServer`, fresh for this test; a tool handler's exception fails the test.

    Configured by `@pytest.mark.mcp_server(...)`. With `--mcp-transport=asgi` it is not listening:
    reach it through `mcp_client` or `mcp_http_client` (or `mcp_env`, which starts it).
    """
    settings, headers = marker_settings(request.node)
    if "cassette" in settings:
        yield from _cassette_server(request, settings, headers)
        return
    if "upstream" in settings:
        from mcp_testkit._plugin.proxied import proxied_server

        yield from proxied_server(request, settings, headers)
        return
    server, dedicated = _mcp_server_pool.server(settings)
    for name, value in headers.items():
        server.require_header(name, value)
    one = served.serve(request.node, server, "mcp journal", settings.get("path", "/mcp"), headers)
    try:
        yield server
    finally:
        if dedicated:
            server.stop()
    if not one.checked:
        served.check(request.node, [one])


def _cassette_server(
    request: pytest.FixtureRequest, settings: dict[str, Any], headers: dict[str, str]
) -> Iterator[TestMcpServer]:
    """`mcp_server` for a test marked `cassette=`: a replay, or a recording under --mcp-record; its own server."""
    from mcp_testkit.cassettes import CassetteError
    from mcp_testkit.cassettes._pytest import cassette_server

    options = {key: settings.pop(key) for key in CASSETTE_KEYS if key in settings}
    path = Path(request.node.path).parent / options["cassette"]
    problem: str | None = None
    try:
        server = cassette_server(path, request.config.stash[OPTIONS].record, options, settings)
    except CassetteError as exc:
        problem = str(exc)
    if problem is not None:
        pytest.fail(problem, pytrace=False)  # outside the handler: the message once, not chained to itself
    try:
        for name, value in headers.items():
            server.require_header(name, value)
        if request.config.stash[OPTIONS].transport == "socket":
            server.start()
        one = served.serve(request.node, server, "mcp journal", settings.get("path", "/mcp"), headers)
        yield server
    finally:
        server.stop()
        server.close_upstream()
    server.save()
    if not one.checked:
        served.check(request.node, [one])


@pytest.fixture
def mcp_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> McpEnv:
    """Writes a server's URL and a token it requires into environment variables; restored after the test."""
    return McpEnv(request, monkeypatch)


@pytest.fixture
def mcp_http_client(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> httpx2.AsyncClient:
    """An open `httpx2.AsyncClient` whose base URL is `mcp_server` (in-process with --mcp-transport=asgi).

    Async: the test must run on anyio (asyncio or trio) or pytest-asyncio.
    """
    client: httpx2.AsyncClient = clients.async_fixture(request, "mcp_http_client")
    return client


@pytest.fixture
def mcp_client(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> Client:
    """The `mcp` SDK `Client` (mode "legacy") connected to `mcp_server`, closed after the test.

    It sends the headers the marker requires. Async: the test must run on anyio (asyncio or trio)
    or pytest-asyncio.
    """
    client: Client = clients.async_fixture(request, "mcp_client")
    return client


# The async halves of mcp_client and mcp_http_client. anyio runs these two itself (for any test that
# has `anyio_backend`); pytest-asyncio gets its own copies, registered in pytest_configure.


@pytest.fixture
async def _mcp_client_anyio(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> AsyncIterator[Client]:
    async with clients.open_mcp_client(request, mcp_server) as client:
        yield client


@pytest.fixture
async def _mcp_http_client_anyio(
    request: pytest.FixtureRequest, mcp_server: TestMcpServer
) -> AsyncIterator[httpx2.AsyncClient]:
    async with clients.open_http_client(request, mcp_server) as client:
        yield client
