"""The admin API of `mcp-testkit serve --admin`, driven with httpx2 while an SDK client uses the server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, MCPError

from ._support import LIMIT_S, Served

pytestmark = pytest.mark.anyio


@pytest.fixture
def served(serve: Callable[..., Served]) -> Served:
    return serve("--preset", "demo", "--admin")


def _healthy(served: Served) -> None:
    response = served.admin().get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_health_reports_the_server(served: Served) -> None:
    """GET health names the server, its URL and tools, and counts sessions and requests."""
    body = served.admin().get("/health").json()
    assert body["name"] == "demo"
    assert body["url"] == served.url
    assert "create_ticket" in body["tools"]
    assert body["sessions"] == {"alive": 0, "total": 0}
    assert body["requests"] == 0


@pytest.mark.parametrize(
    ("headers", "why"),
    [
        ({}, "missing admin token"),
        ({"authorization": "Bearer not-the-token"}, "wrong admin token"),
        ({"authorization": "Basic dXNlcjpwYXNz"}, "wrong admin token"),
    ],
)
def test_bad_tokens_get_401_and_the_server_keeps_serving(served: Served, headers: dict[str, str], why: str) -> None:
    """A missing, wrong or non-bearer credential gets 401 with a Bearer challenge; nothing else changes."""
    response = httpx2.get(f"{served.admin_url}/health", headers=headers, timeout=LIMIT_S)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert why in response.json()["message"]
    assert served.token not in response.text
    _healthy(served)


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("GET", "/nope", None, 404, "no admin endpoint /_testkit/nope; endpoints: GET /_testkit/health"),
        ("DELETE", "/journal", None, 405, "/_testkit/journal takes GET, not DELETE"),
        ("POST", "/tools", b"{not json", 400, "the body is not JSON"),
        ("POST", "/tools", b"", 400, "this endpoint needs a JSON body"),
        ("POST", "/tools", b'{"name": "bad name"}', 400, "tool: name: "),
        (
            "POST",
            "/tools",
            b'{"name": "t", "returns": [{"type": "image"}]}',
            400,
            "tool: returns/0/data: ",  # the path is ours; the rest is pydantic's wording
        ),
        ("POST", "/faults", b'{"fault": {"type": "Nope"}}', 400, "fault rule: fault/type: "),
        (
            "POST",
            "/faults",
            b'[{"fault": {"type": "Delay"}}, {"fault": {}}]',
            400,
            "fault rule: 1/fault: ",
        ),
        ("POST", "/faults", b'{"fault": {"type": "Crash"}}', 400, "Crash means something only over stdio"),
        ("POST", "/restart", b'{"unknown_session_status": 500}', 400, "must be 404 or 400"),
        ("POST", "/lose-session", b"", 409, "no live session to lose"),
        ("POST", "/scenario", b'{"name": "other"}', 400, "'name' is fixed when the server starts"),
        (
            "GET",
            "/journal?methd=tools/call",
            None,
            400,
            "unknown query parameter 'methd'; this endpoint takes: method, tool, since",
        ),
    ],
)
def test_bad_admin_requests_get_clear_4xx_errors(
    served: Served, method: str, path: str, body: bytes | None, status: int, message: str
) -> None:
    """Each bad admin request gets its own 4xx JSON error naming the problem, and the server keeps serving."""
    response = served.admin().request(method, path, content=body)
    assert response.status_code == status, response.text
    assert message in response.json()["message"]
    assert served.admin().get("/faults").json()["rules"] == []  # nothing half-added
    _healthy(served)


async def test_scripting_tools_and_faults_over_the_admin_api(served: Served) -> None:
    """POST tools adds a tool the SDK client can call; POST faults makes its next call fail; executions count runs."""
    admin = served.admin()
    added = admin.post("/tools", json={"name": "echo", "annotations": {"readOnlyHint": True}, "answers": ["a", "b"]})
    assert added.status_code == 201
    assert added.json()["tool"]["annotations"] == {"readOnlyHint": True}
    rule = {"fault": {"type": "ErrorResult", "text": "scripted"}, "tool": "echo", "nth": 2}
    assert admin.post("/faults", json=rule).status_code == 201
    assert admin.get("/faults").json()["rules"][0]["fault"] == {"type": "ErrorResult", "text": "scripted"}
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            results = [await client.call_tool("echo", {}) for _ in range(3)]
    assert [r.content[0].text for r in results] == ["a", "scripted", "b"]  # type: ignore[union-attr]
    assert admin.get("/executions").json() == {"total": 2, "tools": {"echo": 2}}
    assert admin.get("/executions", params={"tool": "create_ticket"}).json() == {
        "total": 0,
        "tools": {"create_ticket": 0},
    }


async def test_journal_is_filtered_and_never_shows_admin_requests(served: Served) -> None:
    """GET journal filters by method and tool, and holds MCP requests only, never admin ones."""
    admin = served.admin()
    admin.get("/health")
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            await client.call_tool("search_tickets", {"q": "x"})
            await client.call_tool("close_ticket", {"id": 1})
    every = admin.get("/journal").json()["records"]
    assert all(not record["path"].startswith("/_testkit") for record in every)
    assert {record["path"] for record in every} == {"/mcp"}
    calls = admin.get("/journal", params={"method": "tools/call"}).json()
    assert [r["tool"] for r in calls["records"]] == ["search_tickets", "close_ticket"]
    one = admin.get("/journal", params={"tool": "close_ticket"}).json()["records"]
    assert [r["arguments"] for r in one] == [{"id": 1}]
    later = admin.get("/journal", params={"since": str(calls["records"][0]["seq"])}).json()["records"]
    assert calls["records"][1]["seq"] in [r["seq"] for r in later]


def test_the_mcp_path_never_answers_admin_requests(served: Served) -> None:
    """The admin token opens nothing on the MCP endpoint, and admin paths are not MCP paths."""
    mcp = httpx2.get(served.url, headers={"authorization": f"Bearer {served.token}"}, timeout=LIMIT_S)
    assert mcp.status_code in (405, 406)
    assert "status" not in mcp.text
    journal = served.admin().get("/journal").json()["records"]
    assert [r["path"] for r in journal] == ["/mcp"]


async def test_lose_session_makes_the_client_see_404(served: Served) -> None:
    """POST lose-session forgets the client's session: its next request gets 404 (the SDK does not reconnect)."""
    admin = served.admin()
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            await client.list_tools()
            lost = admin.post("/lose-session")
            assert lost.status_code == 200
            with pytest.raises(MCPError):
                await client.call_tool("search_tickets", {"q": "x"})
    records = admin.get("/journal", params={"tool": "search_tickets"}).json()["records"]
    assert [(r["session_id"], r["status"]) for r in records] == [(lost.json()["session_id"], 404)]
    assert admin.get("/executions").json()["total"] == 0


async def test_restart_ends_every_session_with_the_chosen_status(served: Served) -> None:
    """POST restart with unknown_session_status 400 ends the sessions; the next request gets 400."""
    admin = served.admin()
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            await client.list_tools()
            restarted = admin.post("/restart", json={"unknown_session_status": 400})
            assert restarted.json() == {"sessions_ended": 1}
            with pytest.raises(MCPError):
                await client.list_tools()
    assert admin.get("/journal", params={"method": "tools/list"}).json()["records"][-1]["status"] == 400


async def test_reset_goes_back_to_the_start_scenario(served: Served) -> None:
    """POST reset drops added tools, faults, sessions and the journal, and re-applies the start scenario."""
    admin = served.admin()
    admin.post("/tools", json={"name": "extra", "returns": "x"})
    admin.post("/faults", json={"fault": {"type": "Delay", "seconds": 0}})
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            await client.list_tools()
    reset = admin.post("/reset").json()
    assert "extra" not in reset["tools"]
    assert "create_ticket" in reset["tools"]
    health: dict[str, Any] = admin.get("/health").json()
    assert (health["requests"], health["pending_faults"], health["sessions"]["total"]) == (0, 0, 0)


async def test_post_scenario_applies_a_json_scenario_live(served: Served) -> None:
    """POST scenario adds a JSON scenario's tools and settings (here a page size) to the running server."""
    admin = served.admin()
    answer = admin.post("/scenario", json={"page_size": 2, "tools": [{"name": "late", "returns": "here"}]})
    assert answer.status_code == 200, answer.text
    with anyio.fail_after(LIMIT_S):
        async with Client(served.url, mode="legacy") as client:
            page = await client.list_tools()
            result = await client.call_tool("late", {})
    assert len(page.tools) == 2
    assert page.next_cursor is not None
    assert result.content[0].text == "here"  # type: ignore[union-attr]
