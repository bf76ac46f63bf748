"""The admin API's routing on Starlette: the token first, then the endpoint, never a 500 (in-process and over a socket).

The endpoints' behaviour with a real `mcp-testkit serve` is tested in tests/standalone/test_admin.py.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mcp_testkit import TestMcpServer
from mcp_testkit.standalone._admin import PREFIX, AdminApp

from ._support import LIMIT_S

TOKEN = "admin-token"
BEARER = {"authorization": f"Bearer {TOKEN}"}
ENDPOINTS = [
    "health", "journal", "executions", "tools", "resources", "resource-templates", "prompts", "completions", "faults",
    "scenario", "reset", "restart", "lose-session",
]  # fmt: skip


def _admin_server() -> TestMcpServer:
    server = TestMcpServer("admin", max_body=64 * 1024)
    server.tool("echo", returns="echoed")
    server.asgi_app = AdminApp(server, TOKEN)  # type: ignore[assignment]
    return server


@asynccontextmanager
async def _admin(via: str) -> AsyncIterator[httpx2.AsyncClient]:
    """An httpx2 client on an admin-wrapped server: in-process, or over uvicorn on 127.0.0.1:0."""
    server = _admin_server()
    if via == "asgi":
        transport = httpx2.ASGITransport(app=server.asgi_app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            yield client
        return
    with anyio.fail_after(LIMIT_S):
        await anyio.to_thread.run_sync(server.start)
    try:
        async with httpx2.AsyncClient(base_url=server.base_url) as client:
            yield client
    finally:
        with anyio.fail_after(LIMIT_S):
            await anyio.to_thread.run_sync(server.stop)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("method", "path", "headers", "status", "message"),
    [
        ("GET", "/_testkit/nope", {}, 401, "missing admin token"),
        ("DELETE", "/_testkit/journal", {"authorization": "Bearer nope"}, 401, "wrong admin token"),
        ("GET", "/_testkit", BEARER, 404, "no admin endpoint /_testkit/; endpoints: GET /_testkit/health"),
        ("GET", "/_testkit/nope/", BEARER, 404, "no admin endpoint /_testkit/nope; endpoints:"),
        ("HEAD", "/_testkit/health", BEARER, 405, None),
        ("PUT", "/_testkit/tools", BEARER, 405, "/_testkit/tools takes POST, not PUT"),
        ("GET", "/_testkit/health/", BEARER, 200, None),
    ],
)
async def test_the_token_comes_first_then_the_endpoint_and_its_method(
    via: str, method: str, path: str, headers: dict[str, str], status: int, message: str | None
) -> None:
    """401 before 404 or 405; /_testkit alone lists the endpoints; a trailing slash names the same endpoint."""
    with anyio.fail_after(LIMIT_S):
        async with _admin(via) as client:
            response = await client.request(method, path, headers=headers)
    assert response.status_code == status, response.text
    assert response.headers["cache-control"] == "no-store"
    if status == 401:
        assert response.headers["www-authenticate"] == 'Bearer realm="mcp-testkit admin"'
    if status == 405:
        assert response.headers["allow"] in ("GET", "POST")
    if message is not None:
        assert message in response.json()["message"]


@pytest.mark.anyio
async def test_paths_beside_the_prefix_go_to_the_mcp_endpoint(via: str) -> None:
    """/_testkitx is not the admin API: the MCP endpoint answers it (a JSON-RPC 404 naming /mcp), token or not."""
    with anyio.fail_after(LIMIT_S):
        async with _admin(via) as client:
            response = await client.get("/_testkitx", headers=BEARER)
    assert response.status_code == 404
    assert response.json()["error"]["message"] == "no MCP endpoint at /_testkitx: the endpoint is /mcp"


@pytest.mark.anyio
async def test_json_nested_too_deep_is_a_400_not_a_500(via: str) -> None:
    """A body nested 100,000 deep gets 400 naming the problem (it was a 500 RecursionError), and nothing is added."""
    with anyio.fail_after(LIMIT_S):
        async with _admin(via) as client:
            response = await client.post("/_testkit/tools", content=b"[" * 60_000, headers=BEARER)
            tools = (await client.get("/_testkit/health", headers=BEARER)).json()["tools"]
    assert response.status_code == 400
    message = response.json()["message"]
    assert message.startswith("the body is not JSON this server reads at 0/0/0/")
    assert message.endswith("the JSON is nested too deeply (more than 160 levels)")
    assert tools == ["echo"]


@pytest.mark.anyio
async def test_a_content_length_of_thousands_of_digits_is_413() -> None:
    """A Content-Length too long for int() is 413 before the body is read (in-process: uvicorn refuses it sooner)."""
    server = _admin_server()
    headers = {**BEARER, "content-length": "9" * 5000}
    app = server.asgi_app
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        raise AssertionError("the body was read")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": f"{PREFIX}/tools",
        "raw_path": f"{PREFIX}/tools".encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
    }
    with anyio.fail_after(LIMIT_S):
        await app(scope, receive, send)  # type: ignore[arg-type]
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"] == "payload_too_large"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["name", "fault", "type", "returns", "tools", "unknown_session_status", "session_id"])
        | st.sampled_from(["page_size", "seconds", "tool", "nth", "times", "inputSchema", "answers", "eras"])
        | st.text(max_size=3),
        inner,
        max_size=4,
    ),
    max_leaves=12,
)
_BODIES = st.one_of(
    _JSON.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=40),
    st.integers(1, 3000).map(lambda depth: b"[" * depth),
    st.sampled_from([b"", b" ", b"null", b"NaN", b'{"a":1e999}', b"\xff\xfe{"]),
)


@pytest.fixture(scope="module")
def admin_server() -> Iterator[TestMcpServer]:
    server = _admin_server()
    with server:
        yield server


def test_malformed_admin_requests_get_a_4xx_json_error_never_a_500(admin_server: TestMcpServer) -> None:
    """Any method, endpoint, query and body: a status under 500 and, for an error, a JSON error naming it."""
    with httpx2.Client(base_url=admin_server.base_url, headers=BEARER, timeout=LIMIT_S) as client:

        @settings(
            max_examples=300,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate],  # one live server: shrinking would replay requests against a changed one
        )
        @given(
            method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
            endpoint=st.sampled_from(["", "x", *ENDPOINTS]),
            query=st.dictionaries(st.sampled_from(["since", "tool", "method", "q"]), st.text(max_size=8), max_size=2),
            body=_BODIES,
        )
        def one(method: str, endpoint: str, query: dict[str, str], body: bytes) -> None:
            content = body if method in ("POST", "PUT", "PATCH") else None
            response = client.request(method, f"{PREFIX}/{endpoint}", params=query, content=content)
            assert response.status_code < 500, (method, endpoint, query, body[:80], response.text[:300])
            if response.status_code >= 400:
                assert set(response.json()) == {"error", "message"}

        one()
    assert admin_server.errors == []
    assert httpx2.get(f"{admin_server.base_url}{PREFIX}/health", headers=BEARER, timeout=LIMIT_S).status_code == 200
