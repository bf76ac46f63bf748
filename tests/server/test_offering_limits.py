"""A client's URI cannot stall the server (issue 37, item 4): a pathological `resources/read` is answered at once
while another session's pings are, a URI over `MAX_URI_LENGTH` is the era's unknown-resource error, and matching
past `MATCH_BUDGET_S` is -32603; all over a real socket and journaled."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import mcp_testkit.resources
from mcp_testkit import TestMcpServer
from mcp_testkit.resources import MAX_URI_LENGTH

from ._support import Stateless, Wire, messages, serving

pytestmark = pytest.mark.anyio

PING_BOUND_S = 0.5
"""The issue's bound on another session's ping while a pathological read is out."""
READ_BOUND_S = 2.0
"""Generous for a read that matches in milliseconds, and far below the seconds a backtracking match takes."""


async def _read_while_pinging(server: TestMcpServer, uri: str) -> tuple[dict[str, Any], int]:
    """Read `uri` on one session while another pings again and again (once at least), each ping within
    `PING_BOUND_S`; the read's answer and the number of pings."""
    async with serving(server, "socket") as reader:
        await reader.initialize()
        pinger = Wire(reader.client, server)
        await pinger.initialize()
        answers: list[dict[str, Any]] = []
        done = anyio.Event()

        async def read() -> None:
            with anyio.fail_after(READ_BOUND_S):
                answers.append(await reader.request("resources/read", {"uri": uri}, request_id=7))
            done.set()

        pings = 0
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            while True:
                with anyio.fail_after(PING_BOUND_S):
                    await pinger.ping_ok()
                pings += 1
                if done.is_set():
                    break
    return answers[0], pings


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        pytest.param("log://{year}-{month}-{day}", "log://" + "-" * 2994 + "/", id="3-kB-of-dashes"),
        pytest.param("log://{year}-{month}-{day}-{hour}", "log://" + "-" * 398 + "/", id="four-parameters-405"),
    ],
)
async def test_a_pathological_read_leaves_another_sessions_ping_answered(template: str, uri: str) -> None:
    """The issue's URIs (41 s and 9.5 s of backtracking on the event loop before) are answered not found at once,
    and another session's pings meanwhile within 0.5 s."""
    assert len(uri) in {3001, 405}
    server = TestMcpServer()
    server.resource_template(template, reads=lambda params: "never")
    answer, pings = await _read_while_pinging(server, uri)
    assert answer["error"]["code"] == -32002
    assert answer["error"]["data"] == {"uri": uri}
    assert pings >= 1
    (record,) = server.journal.requests("resources/read")
    assert record.response is not None
    assert record.response["error"]["code"] == -32002


async def test_a_long_uri_still_matches_with_the_same_parameters() -> None:
    """A 3 kB URI of dashes that is one of the template's reads as a backtracking regex would have it: the first
    parameter as long as the rest allows."""
    server = TestMcpServer()
    server.resource_template("log://{year}-{month}-{day}", reads=lambda params: f"{len(params['year'])} {params}")
    answer, _ = await _read_while_pinging(server, "log://" + "-" * 2994)
    assert answer["result"]["contents"][0]["text"] == "2990 {'year': '" + "-" * 2990 + "', 'month': '-', 'day': '-'}"


async def test_a_uri_over_the_limit_is_the_eras_unknown_resource_error_and_journaled(via: str) -> None:
    """A URI one character over `MAX_URI_LENGTH` that the template would match is not found (-32002 in the handshake
    era, -32602 and 400 in 2026-07-28) naming the limit, journaled; one at the limit is read. (Over a socket,
    2026-07-28 mirrors the URI into a header, and a header line over 8 KiB is 431 before the request is read.)"""
    server = TestMcpServer()
    server.resource_template("db://rows/{id}", reads=lambda params: f"row of {len(params['id'])}")
    at_limit = "db://rows/" + "x" * (MAX_URI_LENGTH - len("db://rows/"))
    over = at_limit + "x"
    async with serving(server, via) as wire:
        await wire.initialize()
        read = await wire.request("resources/read", {"uri": at_limit})
        refused = await wire.request("resources/read", {"uri": over})
        stateless = await Stateless(wire).post("resources/read", {"uri": over})
        await wire.ping_ok()
    assert read["result"]["contents"][0]["text"] == f"row of {MAX_URI_LENGTH - len('db://rows/')}"
    error = refused["error"]
    assert error["code"] == -32002
    assert f"over the limit of {MAX_URI_LENGTH}" in error["message"]
    assert "MAX_URI_LENGTH" in error["message"]
    assert error["data"] == {"uriLength": MAX_URI_LENGTH + 1, "maxUriLength": MAX_URI_LENGTH}
    if via == "socket":
        assert stateless.status_code == 431
    else:
        assert stateless.status_code == 400
        assert messages(stateless)[0]["error"]["code"] == -32602
    reads = server.journal.requests("resources/read")
    assert [(r.era, r.status) for r in reads][:2] == [("handshake", 200), ("handshake", 200)]
    assert reads[1].response["error"] == error
    assert [r.status for r in reads[2:]] == ([] if via == "socket" else [400])
    server.check()


async def test_matching_past_its_budget_is_an_internal_error_not_kept_for_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With `MATCH_BUDGET_S` spent before the second template is tried, the read is -32603 naming the budget and
    the templates tried; the server serves on and `check()` has nothing to report (it is no test function's
    error)."""
    monkeypatch.setattr(mcp_testkit.resources, "MATCH_BUDGET_S", 0.0)
    server = TestMcpServer()
    server.resource_template("db://rows/{id}", reads=lambda params: "row")
    server.resource_template("db://cols/{id}", reads=lambda params: "col")
    async with serving(server, "socket") as wire:
        await wire.initialize()
        first = await wire.request("resources/read", {"uri": "db://rows/1"})
        second = await wire.request("resources/read", {"uri": "db://cols/1"})
        await wire.ping_ok()
    assert first["result"]["contents"][0]["text"] == "row"
    assert second["error"]["code"] == -32603
    assert "after 1 of 2 templates" in second["error"]["message"]
    assert "mcp_testkit.resources.MATCH_BUDGET_S" in second["error"]["message"]
    server.check()
