"""Credentials never leave through a repr, a summary, a failure report or an export."""

from __future__ import annotations

import json
from pathlib import Path

import httpx2
import pytest

from mcp_testkit import TestMcpServer

from ._support import ACCEPT, INNER_INI, LIMIT_S, serve_process

SECRET_HEADERS = {
    "Authorization": "Bearer tok-SECRET-1",
    "X-Api-Key": "SECRET-2",
    "Api-Key": "SECRET-3",
    "X-Auth-Token": "SECRET-4",
    "Private-Token": "SECRET-5",
    "Cookie": "sid=SECRET-6",
    "X-Client-Secret": "SECRET-7",
    "X-Session-Ticket": "SECRET-8",
    "X-Tenant": "SECRET-9",  # no telling name: secret because the server requires it
}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
}


def _send(client: httpx2.Client, url: str, *, tenant: bool = True) -> str:
    headers = {"accept": ACCEPT, "content-type": "application/json", **SECRET_HEADERS}
    if not tenant:
        del headers["X-Tenant"]
    response = client.post(url, json=INIT, headers=headers)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    headers |= {"mcp-session-id": session_id, "mcp-protocol-version": "2025-11-25"}
    assert client.post(url, json=PING, headers=headers).status_code == 200
    return session_id


def test_record_repr_summary_and_exports_hide_every_credential() -> None:
    """Item 7: repr, summary, format and to_jsonl() hide credentials (by name, or required); not the session id."""
    server = TestMcpServer()
    server.require_header("X-Tenant", "SECRET-9")
    with server, httpx2.Client(timeout=LIMIT_S) as client:
        session_id = _send(client, server.url)
    record = server.journal.last
    journal = server.journal
    shown = "\n".join([repr(record), repr(record.headers), record.summary(), journal.format(), journal.to_jsonl()])
    assert "SECRET" not in shown
    assert session_id in server.journal.to_jsonl()
    exported = json.loads(server.journal.to_jsonl().splitlines()[-1])["headers"]
    assert {name: exported[name.lower()] for name in SECRET_HEADERS} == dict.fromkeys(SECRET_HEADERS, "***")
    clear = json.loads(server.journal.to_jsonl(redact=False).splitlines()[-1])["headers"]
    assert clear["x-api-key"] == "SECRET-2"


def test_journal_file_and_admin_journal_hide_every_credential(tmp_path: Path) -> None:
    """Item 7: `serve --journal` and the admin /journal redact the same headers as to_jsonl()."""
    journal = tmp_path / "journal.jsonl"
    with serve_process("--admin", "--journal", str(journal)) as (url, admin, token):
        with httpx2.Client(timeout=LIMIT_S) as client:
            _send(client, url, tenant=False)
            exported = client.get(f"{admin}/journal", headers={"authorization": f"Bearer {token}"}).json()
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    for headers in [r["headers"] for r in records] + [r["headers"] for r in exported["records"]]:
        for name in SECRET_HEADERS:
            if name != "X-Tenant":
                assert headers[name.lower()] == "***", name
    assert "SECRET" not in journal.read_text()


def test_pytest_vv_failure_shows_no_credential(pytester: pytest.Pytester) -> None:
    """Item 7: `pytest -vv` on a failing assertion about a record prints the record without the bearer token."""
    pytester.makeini(INNER_INI)
    pytester.makepyfile(
        """
        import httpx2

        HEADERS = {"authorization": "Bearer tok-" + "SECRET-42", "x-api-key": "SECRET-" + "43"}

        def test_status(mcp_server):
            with httpx2.Client() as client:
                client.post(mcp_server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=HEADERS)
            assert mcp_server.journal.last.status == 201
        """
    )
    result = pytester.runpytest("-vv", "-p", "no:randomly")
    result.assert_outcomes(failed=1)
    assert "SECRET" not in result.stdout.str()
