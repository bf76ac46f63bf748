"""pytest plugin: a fake MCP server one fixture argument away, and its journal in every failure report.

Fixtures: `mcp_server` (one server per pytest worker, started once and reset for every test),
`mcp_server_factory` (more servers, stopped after the test), `mcp_client` and `mcp_http_client`
(async: the `mcp` SDK client and a raw `httpx2.AsyncClient`), `mcp_env` (URL and token in
environment variables). The marker `@pytest.mark.mcp_server(...)` configures `mcp_server` for one
test. Options and ini keys live in the `mcp-testkit` group.

Nothing heavy is imported here: the server, uvicorn, httpx2 and `mcp` are imported by the fixtures
that need them, so a pytest run that uses none of them does not pay for them.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pytest

if TYPE_CHECKING:
    import httpx2
    from mcp import Client

    from mcp_testkit.server import TestMcpServer

__all__ = ["McpEnv", "McpServerFactory"]

T = TypeVar("T")

_TRANSPORTS = ("socket", "asgi")
_JOURNAL_MODES = ("fail", "always", "never")
_LoopScope = Literal["function", "class", "module", "package", "session"]
_LOOP_SCOPES: tuple[_LoopScope, ...] = ("function", "class", "module", "package", "session")
_IN_PROCESS_BASE_URL = "http://127.0.0.1"
_HTTP_TIMEOUT_S = 30.0
_ASYNCIO_FIXTURES = "mcp_testkit.pytest_plugin.asyncio_fixtures"

_MARKER = (
    "mcp_server(name=..., page_size=..., response_mode=..., required_headers={...}, preset=...): "
    "configure the mcp_server fixture for this test (any TestMcpServer keyword except host and port); "
    "cassette='tapes/x.json' (with upstream=, upstream_headers=, upstream_era=, match=, redact=) replays or "
    "records a server"
)
_RECORD_MODES = ("none", "once", "new", "all")
_CASSETTE_KEYS = ("cassette", "upstream", "upstream_headers", "upstream_era", "match", "redact")


@dataclass(frozen=True)
class _Options:
    transport: str
    journal: str
    limit: int
    asyncio: bool
    record: str = "none"


@dataclass(eq=False)
class _Served:
    """A server one test used: the title of its journal section, what to send it, what to hide."""

    server: TestMcpServer
    title: str
    path: str
    headers: dict[str, str]
    checked: bool = False


@dataclass(eq=False)
class _Used:
    """What the plugin knows about one test's servers and secrets, kept in the item's stash."""

    served: list[_Served] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    secret_headers: set[str] = field(default_factory=set)
    journal_on_failure: bool = False


_OPTIONS = pytest.StashKey[_Options]()
_USED = pytest.StashKey[_Used]()


# -- options -----------------------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-testkit", "fake MCP servers (mcp-testkit)")
    group.addoption(
        "--mcp-transport",
        dest="mcp_transport",
        choices=_TRANSPORTS,
        default=None,
        help="how fixtures reach the fake MCP server: 'socket' (uvicorn on 127.0.0.1, the default) "
        "or 'asgi' (in-process, clients built on httpx2.ASGITransport)",
    )
    group.addoption(
        "--mcp-journal",
        dest="mcp_journal",
        choices=_JOURNAL_MODES,
        default=None,
        help="when to add the server's journal to a test's report: 'fail' (default), 'always', 'never'",
    )
    group.addoption(
        "--mcp-record",
        dest="mcp_record",
        choices=_RECORD_MODES,
        default=None,
        help="cassettes (marker cassette=): 'none' replays only (default), 'once' records a missing one, "
        "'new' records calls a cassette lacks, 'all' records anew",
    )
    parser.addini("mcp_transport", default="socket", help="default of --mcp-transport")
    parser.addini("mcp_record", default="none", help="default of --mcp-record")
    parser.addini("mcp_journal", default="fail", help="default of --mcp-journal")
    parser.addini("mcp_journal_limit", default="50", help="at most this many journal lines a server in a report")


# -- configure ---------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)  # before pytest-asyncio reads its ini keys
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER)
    transport = config.getoption("mcp_transport", None) or config.getini("mcp_transport")
    journal = config.getoption("mcp_journal", None) or config.getini("mcp_journal")
    if transport not in _TRANSPORTS:
        raise pytest.UsageError(f"mcp_transport must be one of {', '.join(_TRANSPORTS)}, not {transport!r}")
    if journal not in _JOURNAL_MODES:
        raise pytest.UsageError(f"mcp_journal must be one of {', '.join(_JOURNAL_MODES)}, not {journal!r}")
    limit = config.getini("mcp_journal_limit")
    if not str(limit).isdigit() or int(limit) < 1:
        raise pytest.UsageError(f"mcp_journal_limit must be a positive integer, not {limit!r}")
    record = config.getoption("mcp_record", None) or config.getini("mcp_record")
    if record not in _RECORD_MODES:
        raise pytest.UsageError(f"mcp_record must be one of {', '.join(_RECORD_MODES)}, not {record!r}")
    has_asyncio = config.pluginmanager.has_plugin("asyncio")
    if has_asyncio:
        _keep_asyncio_fixture_loop_scope(config)
    config.stash[_OPTIONS] = _Options(transport, journal, int(limit), has_asyncio, record)
    if has_asyncio and not config.pluginmanager.has_plugin(_ASYNCIO_FIXTURES):
        config.pluginmanager.register(_asyncio_fixtures(), _ASYNCIO_FIXTURES)


def _keep_asyncio_fixture_loop_scope(config: pytest.Config) -> None:
    """Spare a plain run pytest-asyncio's deprecation warning, which `-W error` turns into a crash.

    pytest-asyncio warns on every run in which `asyncio_default_fixture_loop_scope` is unset, also in a
    project whose only async tests are the ones our fixtures serve. When the user has not set it, set
    the value pytest-asyncio itself names for keeping its present behaviour ("fixture-scope"), so that
    nothing changes but the warning. A pytest-asyncio without that value is left alone.
    """
    import pytest_asyncio.plugin

    keep = getattr(pytest_asyncio.plugin, "_MATCH_FIXTURE_SCOPE", None)
    cache = getattr(config, "_inicache", None)
    key = "asyncio_default_fixture_loop_scope"
    if isinstance(keep, str) and isinstance(cache, dict) and not config.getini(key):
        cache[key] = keep


# -- hooks -------------------------------------------------------------------------------------------


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """After a passing test body, raise what its servers' tool handlers raised: the test fails."""
    __tracebackhide__ = True
    try:
        result = yield
    except BaseException:
        # The test failed already; the handler errors are listed in its journal section.
        _mark_checked(item)
        raise
    used = item.stash.get(_USED, None)
    if used is not None:
        _check(used.served)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Add an "mcp journal" section to the report of a failing test (of every test with 'always')."""
    report = yield
    used = item.stash.get(_USED, None)
    if used is None or not used.served:
        return report
    options = item.config.stash[_OPTIONS]
    first_failure = report.failed and not used.journal_on_failure
    wanted = options.journal == "always" and report.when == "call"
    if options.journal != "never" and (first_failure or wanted):
        used.journal_on_failure = used.journal_on_failure or report.failed
        for served in used.served:
            report.sections.append((served.title, _journal_text(served, used, options.limit)))
    return report


# -- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def _mcp_server_pool(pytestconfig: pytest.Config) -> Iterator[_ServerPool]:
    """The servers of this pytest worker, by settings; each started once and stopped at the end."""
    pool = _ServerPool(pytestconfig.stash[_OPTIONS].transport)
    yield pool
    pool.close()


@pytest.fixture
def mcp_server_factory(request: pytest.FixtureRequest) -> Iterator[McpServerFactory]:
    """Makes more servers in one test: `mcp_server_factory(name="gh", page_size=5)`; stopped after it."""
    factory = McpServerFactory(request.node, request.config.stash[_OPTIONS].transport)
    yield factory
    factory.close()


@pytest.fixture
def mcp_server(request: pytest.FixtureRequest, _mcp_server_pool: _ServerPool) -> Iterator[TestMcpServer]:
    """A started `TestMcpServer`, fresh for this test; a tool handler's exception fails the test.

    Configured by `@pytest.mark.mcp_server(...)`. With `--mcp-transport=asgi` it is not listening:
    reach it through `mcp_client` or `mcp_http_client` (or `mcp_env`, which starts it).
    """
    settings, headers = _marker_settings(request.node)
    if "cassette" in settings:
        yield from _cassette_fixture(request, settings, headers)
        return
    server, dedicated = _mcp_server_pool.server(settings)
    for name, value in headers.items():
        server.require_header(name, value)
    served = _serve(request.node, server, "mcp journal", settings.get("path", "/mcp"), headers)
    try:
        yield server
    finally:
        if dedicated:
            server.stop()
    if not served.checked:
        _check([served])


@pytest.fixture
def mcp_env(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> McpEnv:
    """Writes a server's URL and a token it requires into environment variables; restored after the test."""
    return McpEnv(request, monkeypatch)


@pytest.fixture
def mcp_http_client(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> httpx2.AsyncClient:
    """An open `httpx2.AsyncClient` whose base URL is `mcp_server` (in-process with --mcp-transport=asgi).

    Async: the test must run on anyio (asyncio or trio) or pytest-asyncio.
    """
    client: httpx2.AsyncClient = _async_fixture(request, "mcp_http_client")
    return client


@pytest.fixture
def mcp_client(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> Client:
    """The `mcp` SDK `Client` (mode "legacy") connected to `mcp_server`, closed after the test.

    It sends the headers the marker requires. Async: the test must run on anyio (asyncio or trio)
    or pytest-asyncio.
    """
    client: Client = _async_fixture(request, "mcp_client")
    return client


# The async halves of mcp_client and mcp_http_client. anyio runs these two itself (for any test that
# has `anyio_backend`); pytest-asyncio gets its own copies, registered in pytest_configure.


@pytest.fixture
async def _mcp_client_anyio(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> AsyncIterator[Client]:
    async with _open_mcp_client(request, mcp_server) as client:
        yield client


@pytest.fixture
async def _mcp_http_client_anyio(
    request: pytest.FixtureRequest, mcp_server: TestMcpServer
) -> AsyncIterator[httpx2.AsyncClient]:
    async with _open_http_client(request, mcp_server) as client:
        yield client


# -- the objects fixtures hand out -------------------------------------------------------------------


class McpServerFactory:
    """Makes servers for one test; each starts listening (unless --mcp-transport=asgi) and stops after it."""

    def __init__(self, item: pytest.Item, transport: str) -> None:
        self._item = item
        self._transport = transport
        self.servers: list[TestMcpServer] = []
        """The servers made so far, oldest first."""

    def __call__(
        self, name: str = "test", *, required_headers: Mapping[str, str] | None = None, **settings: Any
    ) -> TestMcpServer:
        """A new `TestMcpServer(name, **settings)` requiring `required_headers`, started unless asgi."""
        from mcp_testkit.server import TestMcpServer

        server = TestMcpServer(name, **settings)
        headers = dict(required_headers or {})
        for header, value in headers.items():
            server.require_header(header, value)
        self.servers.append(server)
        if self._transport == "socket":
            server.start()
        _serve(self._item, server, f"mcp journal: {name}", settings.get("path", "/mcp"), headers)
        return server

    def http_client(self, server: TestMcpServer) -> httpx2.AsyncClient:
        """An unopened `httpx2.AsyncClient` whose base URL is `server`; in-process with asgi. Use `async with`."""
        return _http_client(server, self._transport, {})

    def close(self) -> None:
        """Stop every server made (at once), then raise what their handlers raised, if not yet reported."""
        _stop_all(self.servers)
        _check([s for s in _used(self._item).served if s.server in self.servers and not s.checked])


class McpEnv:
    """Sets environment variables for a bridge configured from the environment; restored after the test."""

    def __init__(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
        self._request = request
        self._monkeypatch = monkeypatch

    def __call__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        server: TestMcpServer | None = None,
        value: str | None = None,
        header: str = "Authorization",
        scheme: str = "Bearer",
    ) -> dict[str, str]:
        """Write `server`'s URL into `url` and a token into `token`; the server then requires the token.

        `server` defaults to `mcp_server` (started now if the transport is asgi). The token is `value`
        or a fresh random one; the server requires `header: <scheme> <token>` (just the token when
        `scheme` is empty). Returns the variables written.
        """
        import secrets

        if server is None:
            server = self._request.getfixturevalue("mcp_server")
        assert server is not None
        written: dict[str, str] = {}
        if url is not None:
            if not server.started:
                server.start()
            written[url] = server.url
        if token is not None:
            secret = value if value is not None else f"mcp-testkit-{secrets.token_hex(12)}"
            written[token] = secret
            server.require_header(header, f"{scheme} {secret}" if scheme else secret)
            used = _used(self._request.node)
            used.secrets.add(secret)
            used.secret_headers.add(header.lower())
        for name, text in written.items():
            self._monkeypatch.setenv(name, text)
        return written


# -- servers -----------------------------------------------------------------------------------------


def _forget_cached_listings() -> None:
    """Empty the reference bridge's tool-list cache, if the bridge is in use at all.

    A reused server keeps its URL while each test scripts new tools behind it: a bridge pool
    would otherwise be served the previous test's listing from the process-level cache.
    """
    cache = sys.modules.get("mcp_testkit.bridge._cache")
    if cache is not None:
        cache.ToolCache.clear()


class _ServerPool:
    """Servers by constructor settings: the first test asking for some settings starts one, later ones reset it."""

    def __init__(self, transport: str) -> None:
        self._transport = transport
        self._servers: dict[Any, TestMcpServer] = {}

    def server(self, settings: dict[str, Any]) -> tuple[TestMcpServer, bool]:
        """A fresh server with these settings, and whether it is this test's alone (to stop after it)."""
        try:
            key: Any = _frozen(settings)
            hash(key)
        except TypeError:
            return self._start(settings), True
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = self._start(settings)
        else:
            server.reset()
            _forget_cached_listings()
        return server, False

    def _start(self, settings: dict[str, Any]) -> TestMcpServer:
        from mcp_testkit.server import TestMcpServer

        server = TestMcpServer(**settings)
        if self._transport == "socket":
            server.start()
        return server

    def close(self) -> None:
        servers, self._servers = list(self._servers.values()), {}
        _stop_all(servers)


def _stop_all(servers: list[TestMcpServer]) -> None:
    """Stop servers side by side: each stop waits on uvicorn's shutdown, so one after another adds up."""
    started = [server for server in servers if server.started]
    if len(started) == 1:
        started[0].stop()
        return
    threads = [threading.Thread(target=server.stop, name=f"stop-{server.name}") for server in started]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_frozen(item) for item in value)
    return value


_server_defaults: dict[str, Any] | None = None


def _constructor_defaults() -> dict[str, Any]:
    """`TestMcpServer`'s keywords and their defaults, read from its signature once."""
    global _server_defaults
    if _server_defaults is None:
        import inspect

        from mcp_testkit.server import TestMcpServer

        parameters = inspect.signature(TestMcpServer.__init__).parameters.values()
        _server_defaults = {p.name: p.default for p in parameters if p.name != "self"}
    return _server_defaults


def _marker_settings(item: pytest.Item) -> tuple[dict[str, Any], dict[str, str]]:
    """The server settings of the test's `mcp_server` markers (closest wins), minus defaults, and its headers."""
    merged: dict[str, Any] = {}
    for mark in reversed(list(item.iter_markers("mcp_server"))):
        if mark.args:
            pytest.fail(f"@pytest.mark.mcp_server takes keywords only, not {mark.args!r}", pytrace=False)
        merged.update(mark.kwargs)
    headers = dict(merged.pop("required_headers", None) or {})
    cassette = {key: merged.pop(key) for key in _CASSETTE_KEYS if key in merged}
    if cassette and "cassette" not in cassette:
        pytest.fail(f"@pytest.mark.mcp_server: {', '.join(cassette)} need cassette='path.json'", pytrace=False)
    defaults = _constructor_defaults()
    unknown = sorted(set(merged) - (set(defaults) - {"host", "port"}))
    if unknown:
        allowed = ", ".join(sorted({*defaults, "required_headers"} - {"host", "port"}))
        pytest.fail(f"@pytest.mark.mcp_server: unknown keyword {', '.join(unknown)}; it takes {allowed}", pytrace=False)
    settings = {name: value for name, value in merged.items() if not _is_default(value, defaults[name])}
    return {**settings, **cassette}, headers


def _cassette_fixture(
    request: pytest.FixtureRequest, settings: dict[str, Any], headers: dict[str, str]
) -> Iterator[TestMcpServer]:
    """`mcp_server` for a test marked `cassette=`: a replay, or a recording under --mcp-record; its own server."""
    from mcp_testkit.cassettes import CassetteError
    from mcp_testkit.cassettes._pytest import cassette_server

    options = {key: settings.pop(key) for key in _CASSETTE_KEYS if key in settings}
    path = Path(request.node.path).parent / options["cassette"]
    mode = request.config.stash[_OPTIONS].record
    try:
        server = cassette_server(path, mode, options, settings)
    except CassetteError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        for name, value in headers.items():
            server.require_header(name, value)
        if request.config.stash[_OPTIONS].transport == "socket":
            server.start()
        served = _serve(request.node, server, "mcp journal", settings.get("path", "/mcp"), headers)
        yield server
    finally:
        server.stop()
        server.close_upstream()
    server.save()
    if not served.checked:
        _check([served])


def _is_default(value: Any, default: Any) -> bool:
    try:
        return bool(type(value) is type(default) and value == default)
    except Exception:
        return False


# -- what a test used: checks and reports ------------------------------------------------------------


def _used(item: pytest.Item) -> _Used:
    used = item.stash.get(_USED, None)
    if used is None:
        used = item.stash[_USED] = _Used()
    return used


def _serve(item: pytest.Item, server: TestMcpServer, title: str, path: str, headers: dict[str, str]) -> _Served:
    served = _Served(server, title, path, headers)
    used = _used(item)
    used.served.append(served)
    for name, value in headers.items():
        used.secrets.add(value)
        used.secret_headers.add(name.lower())
    return served


def _mark_checked(item: pytest.Item) -> None:
    used = item.stash.get(_USED, None)
    for served in used.served if used is not None else ():
        served.checked = True


def _check(served: list[_Served]) -> None:
    """Raise the first handler error of these servers (the rest are in the journal section)."""
    __tracebackhide__ = True
    for one in served:
        one.checked = True
    for one in served:
        try:
            one.server.check()
        except AssertionError as exc:
            # The cause (the handler's own traceback) is what the reader needs, not check()'s frame.
            raise exc.with_traceback(None) from exc.__cause__


def _journal_text(served: _Served, used: _Used, limit: int) -> str:
    """The server, then one line a request (at most `limit`), then handler errors; credentials hidden."""
    server = served.server
    journal = server.journal
    where = server.url if server.started else f"in-process at {served.path}"
    lines = [f"server {server.name!r} {where}: {len(journal)} request{'s' * (len(journal) != 1)}"]
    lines.append(journal.format(limit=limit))
    errors = server.errors
    if errors:
        lines.append(f"tool handlers raised {len(errors)} exception{'s' * (len(errors) != 1)}:")
        lines.extend(f"  {type(error).__name__}: {error}" for error in errors[:5])
    return _redact("\n".join(lines), _secrets_of(served, used))


def _secrets_of(served: _Served, used: _Used) -> set[str]:
    """Values never to print: credentials the test configured and credential headers the server received."""
    values = set(used.secrets)
    from mcp_testkit.journal import is_secret_header

    names = used.secret_headers | {name.lower() for name in served.headers} | served.server._state.hidden
    for record in served.server.journal:
        values.update(value for name, value in record.headers.items() if is_secret_header(name, names))
    found: set[str] = set()
    for value in values:
        found.add(value)
        credential = value.partition(" ")[2]
        if credential:
            found.add(credential)
    return {value for value in found if len(value) >= 4}


def _redact(text: str, secrets: set[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


# -- async clients -----------------------------------------------------------------------------------


def _async_fixture(request: pytest.FixtureRequest, name: str) -> Any:
    """Set up the async half of `name` on whichever plugin runs this test: anyio or pytest-asyncio."""
    if "anyio_backend" in request.fixturenames:
        return request.getfixturevalue(f"_{name}_anyio")
    options = request.config.stash[_OPTIONS]
    marker = request.node.get_closest_marker("asyncio")
    if marker is not None and options.asyncio:
        scope = (
            marker.kwargs.get("loop_scope")
            or marker.kwargs.get("scope")
            or request.config.getini("asyncio_default_test_loop_scope")
            or "function"
        )
        return request.getfixturevalue(f"_{name}_asyncio_{scope}")
    pytest.fail(
        f"{name} is an async fixture: use it in an async test run by anyio (@pytest.mark.anyio) "
        "or pytest-asyncio (@pytest.mark.asyncio)",
        pytrace=False,
    )


def _served_of(request: pytest.FixtureRequest, server: TestMcpServer) -> _Served:
    for served in _used(request.node).served:
        if served.server is server:
            return served
    raise LookupError(f"server {server.name!r} was not handed out by mcp-testkit's fixtures")


def _http_client(server: TestMcpServer, transport: str, headers: Mapping[str, str]) -> httpx2.AsyncClient:
    import httpx2

    timeout = httpx2.Timeout(_HTTP_TIMEOUT_S)
    if transport == "asgi":
        return httpx2.AsyncClient(
            transport=httpx2.ASGITransport(app=server.asgi_app),
            base_url=_IN_PROCESS_BASE_URL,
            headers=dict(headers),
            timeout=timeout,
        )
    return httpx2.AsyncClient(base_url=server.base_url, headers=dict(headers), timeout=timeout)


@asynccontextmanager
async def _open_http_client(request: pytest.FixtureRequest, server: TestMcpServer) -> AsyncIterator[httpx2.AsyncClient]:
    transport = request.config.stash[_OPTIONS].transport
    async with _http_client(server, transport, {}) as client:
        yield client


@asynccontextmanager
async def _open_mcp_client(request: pytest.FixtureRequest, server: TestMcpServer) -> AsyncIterator[Client]:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    served = _served_of(request, server)
    transport = request.config.stash[_OPTIONS].transport
    async with _http_client(server, transport, served.headers) as http:
        url = str(http.base_url).rstrip("/") + served.path
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


@asynccontextmanager
async def _in_own_task(context: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter and exit `context` in one asyncio task of its own.

    pytest-asyncio runs an async generator fixture's setup and teardown in two different tasks,
    and the SDK client holds anyio task groups, which must be left in the task that entered them.
    """
    import asyncio

    loop = asyncio.get_running_loop()
    entered: asyncio.Future[T] = loop.create_future()
    release = asyncio.Event()

    async def host() -> None:
        try:
            async with context as value:
                entered.set_result(value)
                await release.wait()
        except BaseException as exc:
            if entered.done():
                raise
            entered.set_exception(exc)

    task = loop.create_task(host())
    try:
        yield await entered
    finally:
        release.set()
        await task


def _asyncio_fixtures() -> types.ModuleType:
    """pytest-asyncio's copies of the async halves, one per loop scope a test may run in."""
    import pytest_asyncio

    openers: dict[str, Callable[[pytest.FixtureRequest, TestMcpServer], AbstractAsyncContextManager[Any]]] = {
        "mcp_client": _open_mcp_client,
        "mcp_http_client": _open_http_client,
    }
    module = types.ModuleType(_ASYNCIO_FIXTURES)
    for base, opener in openers.items():
        for scope in _LOOP_SCOPES:
            name = f"_{base}_asyncio_{scope}"
            setattr(module, name, pytest_asyncio.fixture(_hosted(opener), loop_scope=scope, name=name))
    return module


def _hosted(
    opener: Callable[[pytest.FixtureRequest, TestMcpServer], AbstractAsyncContextManager[T]],
) -> Callable[[pytest.FixtureRequest, TestMcpServer], AsyncIterator[T]]:
    async def fixture(request: pytest.FixtureRequest, mcp_server: TestMcpServer) -> AsyncIterator[T]:
        async with _in_own_task(opener(request, mcp_server)) as value:
            yield value

    return fixture
