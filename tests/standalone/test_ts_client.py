"""A client built on the TypeScript MCP SDK against `mcp-testkit serve`: paging, a required header, a lost session."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from node_trees import NPM_CI_TIMEOUT_S, TS_CLIENT, installed, node

from ._support import LIMIT_S, Served

SCENARIO = {
    "name": "ts",
    "page_size": 2,
    "tools": [{"name": f"t{n}", "returns": f"answer {n}"} for n in range(1, 6)],
    "required_headers": [{"name": "X-Api-Key", "value": "ts-secret"}],
    "faults": [{"fault": {"type": "LoseSession"}, "method": "tools/call", "nth": 2}],
}

# The first test may wait for the `npm ci` of tests/standalone/ts_client.
pytestmark = pytest.mark.timeout(NPM_CI_TIMEOUT_S + LIMIT_S)


@pytest.fixture(scope="module")
def ts_client() -> tuple[str, Path]:
    """`node`, and the client's folder with its locked TypeScript SDK installed (skips without Node.js)."""
    return node("the TypeScript SDK client"), installed(TS_CLIENT)


@pytest.fixture
def ts_run(
    ts_client: tuple[str, Path], serve: Callable[..., Served], tmp_path: Path
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Runs client.mjs against the scenario; what it printed, and the journal as the admin API shows it."""
    node_path, client_dir = ts_client
    scenario = tmp_path / "ts.json"
    scenario.write_text(json.dumps(SCENARIO))
    served = serve("--scenario", str(scenario), "--admin")
    ran = subprocess.run(
        [node_path, str(client_dir / "client.mjs"), served.url, "X-Api-Key", "ts-secret", "t1"],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        cwd=client_dir,
    )
    assert ran.returncode == 0, ran.stderr
    seen: dict[str, Any] = json.loads(ran.stdout.splitlines()[-1])
    assert "fatal" not in seen, seen["fatal"]
    return seen, served.admin().get("/journal").json()["records"]


def test_ts_client_pages_through_every_page(ts_run: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    """The TS client fetches all three pages, each with the cursor the page before it named."""
    seen, journal = ts_run
    assert seen["tools"] == ["t1", "t2", "t3", "t4", "t5"]
    pages = [r for r in journal if r["rpc_method"] == "tools/list"]
    sent = [(r["message"].get("params") or {}).get("cursor") for r in pages]
    named = [r["response"]["result"].get("nextCursor") for r in pages]
    assert len(pages) == seen["pages"] == 3
    assert sent == [None, *named[:-1]]
    assert named[-1] is None


def test_ts_client_sends_the_required_header_on_every_request(
    ts_run: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    """Every request the TS client sent carried X-Api-Key (redacted in the journal), and none was refused 401."""
    _, journal = ts_run
    assert journal
    assert {r["headers"].get("x-api-key") for r in journal} == {"***"}
    assert all(r["status"] != 401 for r in journal)


def test_what_the_ts_client_does_after_a_404(ts_run: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    """After its session is lost (404), the TS SDK keeps the stale session id: the next call gets 404 too.

    It does not start a new session by itself (no second initialize), like the Python SDK; the
    error it raises carries code 404, so an application can reconnect on it.
    """
    seen, journal = ts_run
    assert [call["ok"] for call in seen["calls"]] == [True, False, False]
    assert seen["calls"][0]["text"] == "answer 1"
    assert [call.get("code") for call in seen["calls"][1:]] == [404, 404]
    assert seen["sessionIdAfter"] == seen["sessionId"]
    calls = [r for r in journal if r["rpc_method"] == "tools/call"]
    assert [(r["status"], r["session_id"]) for r in calls] == [(200, seen["sessionId"])] + [
        (404, seen["sessionId"])
    ] * 2
    assert [r["rpc_method"] for r in journal].count("initialize") == 1
    assert calls[1]["fault"] == {"type": "LoseSession"}
