"""Redaction of what a recording writes (cassettes/_redact.py): a password in a URL's user info, in any recorded
string, and a short or word-like credential, which is removed from its header but never rewrites a name."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Cassette, record, verify
from mcp_testkit.cassettes._redact import Redactor

from ._support import LIMIT_S

pytestmark = pytest.mark.anyio

DB_PASSWORD = "dbpass-SECRET-42"
CACHE_PASSWORD = "r3dis-pass-77"
ENV_SCENARIO = """\
import os


def scenario(server):
    server.tool(
        "get-env",
        annotations={"readOnlyHint": True},
        returns=lambda arguments: "\\n".join(f"{k}={v}" for k, v in sorted(os.environ.items())),
    )
"""


async def test_an_env_dump_through_record_upstream_command_keeps_no_url_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stdio server's tool dumping its environment: each URL keeps its user and loses its password, which is
    replaced wherever else the dump repeats it; the client still gets the real dump."""
    monkeypatch.setenv("DATABASE_URL", f"postgres://app:{DB_PASSWORD}@host/db")
    monkeypatch.setenv("CACHE_URL", f"redis://:{CACHE_PASSWORD}@cache:6379/0")
    monkeypatch.setenv("A_COPY_OF_THE_DB_PASSWORD", DB_PASSWORD)  # sorted before the URL that gives it away
    scenario = tmp_path / "env_scenario.py"
    scenario.write_text(ENV_SCENARIO)
    command = [sys.executable, "-m", "mcp_testkit", "serve", "--stdio", "--scenario", str(scenario)]
    out = tmp_path / "env.json"
    with anyio.fail_after(LIMIT_S):
        async with record(command=command, out=out) as proxy_url, Client(proxy_url, mode="legacy") as client:
            answer = await client.call_tool("get-env", {})
    dump = answer.content[0].text  # type: ignore[union-attr]
    assert f"DATABASE_URL=postgres://app:{DB_PASSWORD}@host/db" in dump  # the client got the real answer
    text = out.read_text()
    for secret in (DB_PASSWORD, CACHE_PASSWORD):
        assert secret not in text
    [call] = Cassette.load(out).calls("get-env")
    written = call.result["content"][0]["text"]  # type: ignore[index]
    database = re.search(r"^DATABASE_URL=postgres://app:(<redacted:\d+>)@host/db$", written, re.MULTILINE)
    assert database is not None, written
    assert f"A_COPY_OF_THE_DB_PASSWORD={database.group(1)}" in written  # the same placeholder, before the URL too
    assert re.search(r"^CACHE_URL=redis://:<redacted:\d+>@cache:6379/0$", written, re.MULTILINE), written
    report = await anyio.to_thread.run_sync(verify, out, command)  # the live dump, redacted alike, is unchanged
    assert (report.calls_compared, report.changes) == (1, []), report.format()


async def test_a_short_credential_is_removed_from_its_header_and_rewrites_no_name(tmp_path: Path) -> None:
    """`record --header "Authorization: Bearer demo"` in front of a server named `demo` with tools `demo` and
    `demo_tool`: the header is written by its name, every name as the server sent it."""
    upstream = TestMcpServer("demo")
    upstream.tool("demo_tool", returns="ran demo_tool")
    upstream.tool("demo", returns="ran demo")
    out = tmp_path / "demo.json"
    async with upstream, record(upstream.url, out=out, headers={"Authorization": "Bearer demo"}) as proxy:
        with anyio.fail_after(LIMIT_S):
            async with httpx2.AsyncClient() as http:
                async with Client(streamable_http_client(proxy, http_client=http), mode="legacy") as client:
                    await client.list_tools()
                    answer = await client.call_tool("demo_tool", {})
    assert answer.content[0].text == "ran demo_tool"  # type: ignore[union-attr]
    text = out.read_text()
    assert "Bearer demo" not in text
    cassette = Cassette.load(out)
    initialize = cassette.exchanges[0]
    assert initialize.http is not None
    assert initialize.http.request_headers["authorization"] == "<redacted:authorization>"
    assert initialize.result["serverInfo"]["name"] == "demo"  # type: ignore[index]
    listed = cassette.requests("tools/list")[-1].result
    assert [tool["name"] for tool in listed["tools"]] == ["demo_tool", "demo"]  # type: ignore[index]
    assert cassette.requests("tools/call")[-1].params["name"] == "demo_tool"


def test_a_short_secret_named_value_is_replaced_where_it_stands_and_nowhere_else() -> None:
    """An argument `password: "demo1"` is written as its placeholder; the word elsewhere (a name) is kept."""
    redactor = Redactor()
    message = {"params": {"name": "demo1", "arguments": {"password": "demo1", "n": 1}}}
    redactor.collect(message)
    assert redactor.json(message) == {"params": {"name": "demo1", "arguments": {"password": "<redacted:1>", "n": 1}}}


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("postgres://app:dbpass-SECRET-42@host/db", "postgres://app:<redacted:1>@host/db"),
        ("see amqp://guest:pw@mq:5672/ now", "see amqp://guest:<redacted:password>@mq:5672/ now"),
        ("https://user@example.com/x", "https://user@example.com/x"),  # no password: nothing to hide
        ("http://example.com:8080/a@b", "http://example.com:8080/a@b"),  # a port, not a password
    ],
)
def test_a_url_password_in_any_string_is_replaced_and_its_user_kept(text: str, written: str) -> None:
    """The password of a URL's user info, wherever a string holds one; a password too short to number is still
    replaced, by a named placeholder."""
    assert Redactor().json({"text": text}) == {"text": written}
    assert json.dumps(Redactor(known_shapes=False).json(text)) == json.dumps(text)
