"""No credential in any exception message, traceback, log record or repr, on every error path."""

from __future__ import annotations

import logging
import socket
import traceback
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.bridge import (
    ApprovalRequired,
    BearerToken,
    Headers,
    MCPAuthError,
    MCPBridgeError,
    MCPCallOutcomeUnknown,
    MCPConnectionError,
    MCPResultWithheld,
    MCPToolError,
    ServerConfig,
    ToolCache,
    ToolPool,
    describe_tools,
)

from .conftest import CONNECT, LIMIT_S, config_for, script_tools

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

pytestmark = pytest.mark.anyio

SECRET = "s3cret-Value-7f1c"
TOKEN_VAR = "BRIDGE_SECRET_TOKEN"
HEADER_VAR = "BRIDGE_SECRET_HEADER"
KEY_VAR = "BRIDGE_SECRET_KEY"
URL_SECRET = "url-Secret-93ad"


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """The secret sits in both credential variables, and every logger records at DEBUG."""
    monkeypatch.setenv(TOKEN_VAR, SECRET)
    monkeypatch.setenv(HEADER_VAR, f"Bearer {SECRET}")
    monkeypatch.setenv(KEY_VAR, f"key-{SECRET}")
    caplog.set_level(logging.DEBUG)


def _assert_clean(error: BaseException, caplog: pytest.LogCaptureFixture, *more: object) -> None:
    """Neither the error (message, repr, traceback), nor a log record, nor ``more`` shows the secret."""
    texts = [str(error), repr(error), "".join(traceback.format_exception(error))]
    for record in caplog.records:
        texts.append(record.getMessage())
        if record.exc_info:
            texts.append("".join(traceback.format_exception(*record.exc_info)))
    texts.extend(repr(item) for item in more)
    leaks = [text for text in texts if SECRET in text]
    assert not leaks, f"the credential leaked into: {leaks[0]!r}"


def _guarded(server: TestMcpServer) -> TestMcpServer:
    server.require_header("Authorization", f"Bearer {SECRET}")
    return server


def _both(server: TestMcpServer, **options: Any) -> list[ServerConfig]:
    """Two configs for one server, one per credential kind."""
    return [
        config_for(server, "bearer", auth=BearerToken(env=TOKEN_VAR), **options),
        config_for(
            server,
            "headers",
            auth=Headers(env={"Authorization": HEADER_VAR, "X-Api-Key": KEY_VAR}),
            **options,
        ),
    ]


async def _fails_startup(configs: list[ServerConfig], error: type[MCPBridgeError]) -> MCPBridgeError:
    with pytest.raises(error) as caught:
        async with ToolPool(configs):
            pass
    return caught.value


def test_config_and_credential_reprs_show_no_value() -> None:
    """A config's repr shows variable names and a URL without userinfo or query, never a value."""
    config = ServerConfig(
        name="gh",
        url=f"https://user:{SECRET}@mcp.example/github?key={SECRET}",
        auth=Headers(env={"X-Api-Key": KEY_VAR}),
    )
    text = repr(config)
    assert SECRET not in text
    assert "https://mcp.example/github?…" in text
    assert KEY_VAR in text
    assert repr(BearerToken(env=TOKEN_VAR)) == f"BearerToken(env={TOKEN_VAR!r})"


async def test_header_unsafe_value_is_refused_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A credential that cannot go in a header fails naming its variable, never echoing the value."""
    monkeypatch.setenv(TOKEN_VAR, f"{SECRET}\r\nX-Evil: 1")
    server = script_tools(TestMcpServer())
    with anyio.fail_after(LIMIT_S):
        async with server:
            error = await _fails_startup(_both(server)[:1], MCPAuthError)
    assert TOKEN_VAR in str(error)
    assert len(server.journal) == 0
    _assert_clean(error, caplog)


@pytest.mark.parametrize(("method", "status"), [("connect", 401), ("tools/list", 403)])
async def test_refusal_at_startup_quotes_neither_body_nor_credential(
    caplog: pytest.LogCaptureFixture, method: str, status: int, era: str
) -> None:
    """A 401/403 whose body repeats the credential raises MCPAuthError with the status only."""
    method = CONNECT[era] if method == "connect" else method
    server = _guarded(script_tools(TestMcpServer()))
    with anyio.fail_after(LIMIT_S):
        async with server:
            for config in _both(server, era=era):
                body = f'{{"error": "token {SECRET} refused"}}'
                server.inject(faults.HttpStatus(status, body=body), method=method)
                error = await _fails_startup([config], MCPAuthError)
                assert str(error) == f"server {config.name!r}: refused the credentials (HTTP {status})"
                _assert_clean(error, caplog, config)


async def _call_error(
    server: TestMcpServer,
    arm: Callable[[], None],
    call: Callable[[ToolPool], Awaitable[str]],
    error: type[MCPBridgeError],
    caplog: pytest.LogCaptureFixture,
    **options: Any,
) -> None:
    """Start a pool per credential kind, arm a fault, and check the call's error is clean."""
    for config in _both(server, **options):
        # Uncached, so that each pool opens its session at entry, before the fault is armed.
        async with ToolPool([config], cache=False) as pool:
            arm()
            with pytest.raises(error) as caught:
                await call(pool)
            _assert_clean(caught.value, caplog, config, pool.tools(), describe_tools(pool))


async def test_call_errors_show_no_credential(caplog: pytest.LogCaptureFixture, era: str) -> None:
    """Refused, dropped, failed, timed-out and erroring calls all raise errors free of the credential."""
    server = _guarded(script_tools(TestMcpServer()))
    body = f"internal error near {SECRET}"

    def create(pool: ToolPool) -> Awaitable[str]:
        return pool.call("bearer.create" if pool.tools("bearer") else "headers.create")

    def search(pool: ToolPool) -> Awaitable[str]:
        return pool.call("bearer.search" if pool.tools("bearer") else "headers.search")

    cases: list[tuple[Callable[[], None], Callable[[ToolPool], Awaitable[str]], type[MCPBridgeError]]] = [
        (lambda: server.inject(faults.HttpStatus(401, body=body), method="tools/call"), search, MCPAuthError),
        (lambda: server.inject(faults.HttpStatus(403, body=body), method="tools/call"), create, MCPAuthError),
        (
            lambda: server.inject(faults.Drop(after_execution=True), method="tools/call"),
            create,
            MCPCallOutcomeUnknown,
        ),
        (
            lambda: server.inject(faults.HttpStatus(500, body=body), method="tools/call", times=2),
            search,
            MCPConnectionError,
        ),
        (
            lambda: server.inject(faults.HttpStatus(500, body=body), method="tools/call"),
            create,
            MCPCallOutcomeUnknown,
        ),
        (
            lambda: server.inject(faults.ProtocolError(-32603, "backend down"), method="tools/call"),
            search,
            MCPToolError,
        ),
        (
            lambda: server.inject(faults.ErrorResult("quota exceeded"), method="tools/call"),
            search,
            MCPToolError,
        ),
        (lambda: server.restart(unknown_session_status=400), create, MCPCallOutcomeUnknown),
        (
            # Twice: the first -32020 is answered by listing again and sending once more.
            lambda: server.inject(faults.HeaderMismatch(), era="stateless", method="tools/call", times=2),
            create,
            MCPConnectionError,
        ),
        (lambda: server.inject(faults.MissingCapability(), era="stateless"), create, MCPToolError),
    ]
    if era == "stateless":  # no session to lose: the era's own refusals instead
        cases[7] = (lambda: server.inject(faults.EraDowngrade(), times=1), create, MCPCallOutcomeUnknown)
    else:
        del cases[8:]
    with anyio.fail_after(LIMIT_S):
        async with server:
            for arm, call, error in cases:
                await _call_error(server, arm, call, error, caplog, retry=1, era=era)
            server.inject(faults.Delay(1.0), method="tools/call", times=2)
            await _call_error(server, lambda: None, create, MCPCallOutcomeUnknown, caplog, timeout_s=0.2, era=era)


async def test_listing_and_connection_failures_show_no_credential(caplog: pytest.LogCaptureFixture, era: str) -> None:
    """A failed listing and an unreachable server raise MCPConnectionError free of the credential."""
    server = _guarded(script_tools(TestMcpServer(page_size=1)))
    with anyio.fail_after(LIMIT_S):
        async with server:
            for config in _both(server, era=era):
                server.inject(faults.PageError(2), method="tools/list")
                _assert_clean(await _fails_startup([config], MCPConnectionError), caplog, config)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        gone = ServerConfig(
            name="gone",
            url=f"http://127.0.0.1:{port}/mcp?key={SECRET}",
            auth=BearerToken(env=TOKEN_VAR),
            connect_retries=1,
            connect_backoff_s=0.0,
        )
        _assert_clean(await _fails_startup([gone], MCPConnectionError), caplog, gone)


async def test_cache_keys_hold_a_hash_of_the_credential_never_the_credential(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The tool cache keys a listing by keyed hashes of URL and credential: no key, repr or log shows either."""
    server = _guarded(script_tools(TestMcpServer(cache_ttl_s=3600)))  # a listing 2026-07-28 lets it keep
    with anyio.fail_after(LIMIT_S):
        async with server:
            # httpx2 logs URLs at INFO (see docs/bridge.md), so the URL's secret is another value, checked in keys only
            in_url = ServerConfig(
                name="in-url",
                url=f"{server.url}?key={URL_SECRET}",
                auth=BearerToken(env=TOKEN_VAR),
                connect_backoff_s=0.0,
            )
            configs = [*_both(server), in_url]
            for config in configs:
                for _ in range(2):  # a miss, then a hit
                    async with ToolPool([config]) as pool:
                        assert await pool.call(f"{config.name}.search") == "found"
            keys = ToolCache.keys()
            monkeypatch.setenv(TOKEN_VAR, SECRET + "-rotated")
            server.rotate_header("Authorization", f"Bearer {SECRET}-rotated")
            async with ToolPool(configs[:1]):
                pass
    assert len(keys) == 3
    assert len(server.journal.requests("tools/list")) == 4, "one listing per key, and one for the new credential"
    assert len({key.credential for key in ToolCache.keys()}) == 3, "another credential is another key"
    for key in ToolCache.keys():
        assert all(SECRET not in str(value) and URL_SECRET not in str(value) for value in vars(key).values())
    assert URL_SECRET not in repr(keys)
    _assert_clean(MCPBridgeError("x", "no error"), caplog, keys, ToolCache.keys(), *configs)
    assert any("taken from the cache" in record.getMessage() for record in caplog.records)


async def test_approval_and_withheld_results_show_no_credential(caplog: pytest.LogCaptureFixture) -> None:
    """A paused call, a call to a dropped tool and a withheld result raise errors free of the credential."""

    def refuse(tool: str, text: str) -> str:
        raise RuntimeError("guardrail broke")

    server = _guarded(script_tools(TestMcpServer()))
    with anyio.fail_after(LIMIT_S):
        async with server:
            for config in _both(server, require_approval={"always": ["create"]}):
                async with ToolPool([config], cache=False, result_guardrails={"refuse": refuse}) as pool:
                    with pytest.raises(ApprovalRequired) as paused:
                        await pool.call(f"{config.name}.create", {"token": "not-a-credential"})
                    _assert_clean(paused.value, caplog, config, paused.value.arguments)
                    with pytest.raises(MCPResultWithheld) as withheld:
                        await pool.call(f"{config.name}.search")
                    _assert_clean(withheld.value, caplog, config)
                    server.remove_tool("create")
                    with pytest.raises(MCPToolError, match="no longer offered") as dropped:
                        await pool.approve(paused.value.token)
                    _assert_clean(dropped.value, caplog, config, pool.tools())
                server.tool("create", description="Create a thing.", returns="created")
    assert server.executions("create") == 0
