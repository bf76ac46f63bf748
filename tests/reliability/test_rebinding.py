"""DNS rebinding protection over a real socket: `Host` parsed as RFC 9110/3986 write it, and a browser's cross-site
request without an Origin, refused by the server and by the chaos proxy before anything reaches the upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.proxy import ChaosProxy

from ._support import LATEST, exchange, http_request

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": LATEST, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "write", "arguments": {}}}

ACCEPTED = ["127.0.0.1:8000", "localhost", "LOCALHOST:1", "[::1]:80", "[::1]", "[0:0:0:0:0:0:0:1]:80"]
MALFORMED = [
    "[localhost]evil.example",
    "[::1]x",
    "[::1]:80x",
    "[::1",
    "::1",
    "[v1.x]",
    "127.0.0.1:80:80",
    "127.0.0.1:abc",
    "localhost:",
    "local host",
    "127.0.0.1:123456",
]
FOREIGN = ["", "evil.example", "evil.example:80", "[::2]:80", "localhost.evil.example"]


def _headers(host: str, *extra: tuple[str, str]) -> list[tuple[str, str]]:
    return [
        ("Host", host),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("Connection", "close"),
        *extra,
    ]


def _post(port: int, host: str, message: object = INIT, *extra: tuple[str, str]) -> tuple[int, dict[str, object]]:
    reply = exchange(port, http_request("POST", "/mcp", _headers(host, *extra), json.dumps(message).encode()))
    return reply.status, reply.json()


@pytest.fixture
def upstream() -> Iterator[TestMcpServer]:
    """A started TestMcpServer with one tool, `write`, whose runs the ledger counts."""
    server = TestMcpServer("upstream")
    server.tool("write", returns="written")
    with server:
        yield server


@pytest.fixture
def proxy(upstream: TestMcpServer) -> Iterator[ChaosProxy]:
    """A chaos proxy in front of `upstream` that adds a credential to what it forwards."""
    with ChaosProxy(upstream.url, headers={"Authorization": "Bearer real-token-123"}) as proxy:
        yield proxy


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


@pytest.mark.parametrize("host", ACCEPTED)
def test_loopback_hosts_as_rfc_3986_writes_them_are_accepted(
    upstream: TestMcpServer, proxy: ChaosProxy, host: str
) -> None:
    """A loopback name or address, bracketed when IPv6, with or without a port, reaches the server and the proxy's
    upstream."""
    assert _post(upstream.port, host)[0] == 200
    assert _post(_port(proxy.url), host)[0] == 200
    assert [r.rpc_method for r in upstream.journal] == ["initialize", "initialize"]


@pytest.mark.parametrize(("host", "status"), [(h, 400) for h in MALFORMED] + [(h, 421) for h in FOREIGN])
def test_a_malformed_or_foreign_host_is_refused_by_the_server(upstream: TestMcpServer, host: str, status: int) -> None:
    """A Host that is not host[:port] is 400 (never read in part), one naming another host 421; no session opens."""
    got, body = _post(upstream.port, host, INIT)
    assert got == status
    assert body["error"]["code"] == -32600  # type: ignore[index]
    assert f"Host {host!r}" in body["error"]["message"]  # type: ignore[index]
    assert upstream.journal.last.status == status
    assert upstream.sessions.alive == []


@pytest.mark.parametrize(("host", "status"), [(h, 400) for h in MALFORMED] + [(h, 421) for h in FOREIGN])
def test_a_malformed_or_foreign_host_never_reaches_the_proxys_upstream(
    upstream: TestMcpServer, proxy: ChaosProxy, host: str, status: int
) -> None:
    """The proxy refuses the same Hosts before anything is forwarded or its credential added: the upstream's journal
    stays empty."""
    got, body = _post(_port(proxy.url), host, CALL)
    assert got == status
    assert body["error"]["code"] == -32600  # type: ignore[index]
    assert "real-token" not in json.dumps(body)
    assert proxy.journal.last.status == status
    assert len(upstream.journal) == 0


def _get(port: int, *extra: tuple[str, str]) -> tuple[int, dict[str, object] | None]:
    headers = [("Host", f"127.0.0.1:{port}"), ("Accept", "text/event-stream"), ("Connection", "close"), *extra]
    reply = exchange(port, http_request("GET", "/mcp", headers))
    return reply.status, (reply.json() if reply.body.startswith(b"{") else None)


CROSS_SITE = ("Sec-Fetch-Site", "cross-site")


def test_a_cross_site_request_without_an_origin_is_refused_by_the_server(upstream: TestMcpServer) -> None:
    """A browser's no-cors GET or POST from another site (Sec-Fetch-Site: cross-site, no Origin) is 403 with a
    JSON-RPC error; the tool never runs."""
    status, body = _get(upstream.port, CROSS_SITE)
    assert status == 403
    assert body is not None
    assert "Sec-Fetch-Site" in body["error"]["message"]  # type: ignore[index]
    host = f"127.0.0.1:{upstream.port}"
    assert _post(upstream.port, host, CALL, ("Sec-Fetch-Site", "Cross-Site"))[0] == 403
    assert [r.status for r in upstream.journal] == [403, 403]
    assert upstream.executions("write") == 0


def test_a_cross_site_request_without_an_origin_never_reaches_the_proxys_upstream(
    upstream: TestMcpServer, proxy: ChaosProxy
) -> None:
    """Through the proxy, a cross-site GET or POST without an Origin is 403 before any upstream contact."""
    port = _port(proxy.url)
    status, body = _get(port, CROSS_SITE)
    assert status == 403
    assert body is not None
    assert body["error"]["code"] == -32600  # type: ignore[index]
    assert _post(port, f"127.0.0.1:{port}", CALL, CROSS_SITE)[0] == 403
    assert [r.status for r in proxy.journal] == [403, 403]
    assert len(upstream.journal) == 0


@pytest.mark.parametrize(
    "extra",
    [
        [CROSS_SITE, ("Origin", "http://localhost:5173")],
        [("Sec-Fetch-Site", "same-origin")],
        [("Sec-Fetch-Site", "same-site")],
        [("Sec-Fetch-Site", "none")],
    ],
    ids=["cross-site-with-loopback-origin", "same-origin", "same-site", "none"],
)
def test_other_fetch_sites_and_a_cross_site_request_with_an_allowed_origin_pass(
    upstream: TestMcpServer, proxy: ChaosProxy, extra: list[tuple[str, str]]
) -> None:
    """A request whose Origin is a loopback page, or that a browser says is not cross-site, is served as before."""
    assert _post(upstream.port, f"127.0.0.1:{upstream.port}", INIT, *extra)[0] == 200
    port = _port(proxy.url)
    assert _post(port, f"127.0.0.1:{port}", INIT, *extra)[0] == 200
    assert [r.rpc_method for r in upstream.journal] == ["initialize", "initialize"]


@pytest.mark.parametrize("origin", ["http://[localhost]evil.example", "http://localhost/path", "http://u@localhost"])
def test_an_origin_is_parsed_as_strictly_as_a_host(upstream: TestMcpServer, proxy: ChaosProxy, origin: str) -> None:
    """An Origin that is not scheme://host[:port] with a loopback host is 403, on the server and through the proxy."""
    assert _post(upstream.port, f"127.0.0.1:{upstream.port}", CALL, ("Origin", origin))[0] == 403
    port = _port(proxy.url)
    assert _post(port, f"127.0.0.1:{port}", CALL, ("Origin", origin))[0] == 403
    assert [r.status for r in upstream.journal] == [403]
    assert upstream.executions("write") == 0
