"""Listing faults: the exact pages and cursors a client walks under each one, by hand and with the SDK client."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types
import pydantic
import pytest
from mcp import MCPError

from mcp_testkit import TestMcpServer, faults

from ._support import (
    CATALOGUE,
    FRAMINGS,
    LIMIT_S,
    SDK_WAIT_S,
    Serve,
    Wire,
    events,
    rpc,
    sdk_client,
    socket_client,
    tools,
    walk,
)

pytestmark = pytest.mark.anyio

LIST_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'


def _catalogue(serve: Serve, **options: Any) -> TestMcpServer:
    return tools(serve(page_size=2, **options), *CATALOGUE)


async def _walk(server: TestMcpServer, fault: faults.Fault | None, max_pages: int = 8) -> list[dict[str, Any]]:
    if fault is not None:
        server.inject(fault)
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            return await walk(wire, max_pages)


def _faults_by_page(server: TestMcpServer) -> list[Any]:
    return [record.fault for record in server.journal.requests("tools/list")]


def _shape(pages: list[dict[str, Any]]) -> list[Any]:
    """Each page as its tool names, or its error code."""
    return [page["error"]["code"] if "error" in page else page["tools"] for page in pages]


async def test_without_faults_the_walk_is_three_pages(serve: Serve) -> None:
    """The baseline: pages [t1 t2] [t3 t4] [t5], each cursor the previous page's nextCursor, none on the last."""
    server = _catalogue(serve)
    pages = await _walk(server, None)
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t5"]]
    assert [p["sent"] for p in pages] == [None, pages[0]["next"], pages[1]["next"]]
    assert pages[-1]["next"] is None
    assert _faults_by_page(server) == [None, None, None]


async def test_repeat_cursor_names_the_cursor_that_fetched_the_page(serve: Serve) -> None:
    """RepeatCursor(2): page 2's nextCursor is the cursor that fetched it, so the client asks for page 2 again."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.RepeatCursor(2))
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t3", "t4"], ["t5"]]
    assert pages[1]["next"] == pages[1]["sent"] == pages[0]["next"]
    assert pages[2]["sent"] == pages[1]["sent"]
    assert _faults_by_page(server) == [None, faults.RepeatCursor(2), None, None]


async def test_repeat_cursor_every_time_walks_in_a_circle(serve: Serve) -> None:
    """RepeatCursor(2) with times=None: the client is sent back to page 2 forever."""
    server = _catalogue(serve)
    server.inject(faults.RepeatCursor(2), times=None)
    pages = await _walk(server, None, max_pages=5)
    assert _shape(pages) == [["t1", "t2"]] + [["t3", "t4"]] * 4
    assert {p["next"] for p in pages} == {pages[0]["next"]}


async def test_stuck_cursor_names_the_same_next_cursor_forever(serve: Serve) -> None:
    """StuckCursor(1): from page 1 on every page names one and the same nextCursor; the walk never ends."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.StuckCursor(1), max_pages=5)
    assert _shape(pages) == [["t1", "t2"]] + [["t3", "t4"]] * 4
    assert len({p["next"] for p in pages}) == 1
    assert [p["sent"] for p in pages[1:]] == [pages[0]["next"]] * 4
    assert _faults_by_page(server) == [faults.StuckCursor(1), None, None, None, None]


async def test_stuck_cursor_from_a_later_page(serve: Serve) -> None:
    """StuckCursor(2): page 1 is normal, then page 2 and every page after it name page 3's cursor."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.StuckCursor(2), max_pages=4)
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t5"], ["t5"]]
    assert pages[1]["next"] == pages[2]["next"] == pages[3]["next"] != pages[0]["next"]


async def test_empty_cursor_sends_an_empty_next_cursor(serve: Serve) -> None:
    """EmptyCursor(1): page 1 says nextCursor "" although more pages exist; sending "" back is -32602."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.EmptyCursor(1))
    assert pages[0] == {"sent": None, "tools": ["t1", "t2"], "next": ""}
    assert pages[1] == {"sent": "", "error": {"code": -32602, "message": "Invalid cursor: ''"}}


@pytest.mark.parametrize(
    ("fault", "shape"),
    [
        (faults.DuplicateTool(2), [["t1", "t2"], ["t3", "t4", "t1"], ["t5"]]),
        (faults.DuplicateTool(1, name="t4"), [["t1", "t2", "t4"], ["t3", "t4"], ["t5"]]),
        (faults.DuplicateTool(3, name="t5"), [["t1", "t2"], ["t3", "t4"], ["t5", "t5"]]),
    ],
    ids=["first-tool-on-page-2", "later-tool-early", "same-page"],
)
async def test_duplicate_tool_lists_a_tool_twice(serve: Serve, fault: faults.DuplicateTool, shape: list[Any]) -> None:
    """DuplicateTool(page, name) lists `name` (or the catalogue's first tool) once more on that page."""
    server = _catalogue(serve)
    pages = await _walk(server, fault)
    assert _shape(pages) == shape
    assert _faults_by_page(server) == [fault if n == fault.page else None for n in (1, 2, 3)]


async def test_duplicate_tool_of_a_tool_not_in_the_catalogue_does_not_fire(serve: Serve) -> None:
    """DuplicateTool(2, name=X) with no tool X leaves page 2 as it was: no record carries it, check() says unfired."""
    server = _catalogue(serve)
    fault = faults.DuplicateTool(2, name="nowhere")
    pages = await _walk(server, fault)
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t5"]]
    assert _faults_by_page(server) == [None, None, None]
    with pytest.raises(AssertionError, match=r"never fired:\n  DuplicateTool\(page=2, name='nowhere'\)"):
        server.check(unused_faults=True)


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (faults.PageError(2), {"code": -32603, "message": "Internal error while listing tools"}),
        (faults.PageError(1, code=-32000, message="backend down"), {"code": -32000, "message": "backend down"}),
    ],
    ids=["default", "custom"],
)
async def test_page_error_answers_that_page_with_a_json_rpc_error(
    serve: Serve, fault: faults.PageError, error: dict[str, Any]
) -> None:
    """PageError(page) answers that page with a JSON-RPC error (code and message); the walk stops there."""
    server = _catalogue(serve)
    pages = await _walk(server, fault)
    assert pages[-1]["error"] == error
    assert len(pages) == fault.page
    assert _faults_by_page(server)[-1] == fault


async def test_page_error_fires_once_so_the_same_cursor_then_works(serve: Serve) -> None:
    """PageError fires once by default: asking for the same page again gets the real page."""
    server = _catalogue(serve)
    server.inject(faults.PageError(2))
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            first = await wire.result(rpc("tools/list"))
            retry = {"cursor": first["nextCursor"]}
            failed = await wire.post(rpc("tools/list", retry, 2))
            page = await wire.result(rpc("tools/list", retry, 3))
    assert failed.json()["error"]["code"] == -32603
    assert [t["name"] for t in page["tools"]] == ["t3", "t4"]


async def test_malformed_page_is_a_result_whose_tools_is_not_a_list(serve: Serve) -> None:
    """MalformedPage(2): page 2 is a result with `tools` a string and no nextCursor."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.MalformedPage(2))
    assert _shape(pages) == [["t1", "t2"], "this page is deliberately malformed"]
    assert pages[1]["next"] is None


async def test_slow_page_answers_that_page_late_and_normally(serve: Serve) -> None:
    """SlowPage(2, s) answers page 2 normally after a wait; the record carries the fault."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.SlowPage(2, 0.05))
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t5"]]
    assert _faults_by_page(server) == [None, faults.SlowPage(2, 0.05), None]


async def test_endless_pages_never_end(serve: Serve) -> None:
    """EndlessPages: after the catalogue come empty pages, each with a fresh nextCursor, forever."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.EndlessPages(), max_pages=7)
    assert _shape(pages) == [["t1", "t2"], ["t3", "t4"], ["t5"], [], [], [], []]
    assert len({p["next"] for p in pages}) == 7
    assert _faults_by_page(server) == [faults.EndlessPages()] * 7


async def test_invalid_cursor_refuses_a_valid_cursor_with_32602(serve: Serve) -> None:
    """InvalidCursor(2): the request for page 2, with the cursor page 1 gave, is refused with -32602."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.InvalidCursor(2))
    assert pages[1] == {
        "sent": pages[0]["next"],
        "error": {"code": -32602, "message": f"Invalid cursor: {pages[0]['next']!r}"},
    }


async def test_catalogue_change_between_pages_shifts_the_walk(serve: Serve) -> None:
    """CatalogueChange(2, add, remove): before page 2 t1 goes and n1 comes, so the walk skips t3 and ends on n1."""
    server = _catalogue(serve)
    pages = await _walk(server, faults.CatalogueChange(2, add=["n1"], remove=["t1"]))
    assert _shape(pages) == [["t1", "t2"], ["t4", "t5"], ["n1"]]
    assert list(server.tools) == ["t2", "t3", "t4", "t5", "n1"]


ANNOUNCED = [faults.ListChanged(2), faults.CatalogueChange(2, add=["n1"])]


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize("fault", ANNOUNCED, ids=["list-changed", "catalogue-change"])
async def test_list_changed_rides_on_the_page_it_hits(serve: Serve, framing: str, fault: faults.Fault) -> None:
    """ListChanged or CatalogueChange on page 2, no GET stream: page 2 is SSE, list_changed first, then the page."""
    server = _catalogue(serve, response_mode=framing)
    server.inject(fault)
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            first = await wire.result(rpc("tools/list"))
            response = await wire.post(rpc("tools/list", {"cursor": first["nextCursor"]}, 2))
            last = await wire.post(rpc("tools/list", {"cursor": first["nextCursor"]}, 3))
    assert response.headers["content-type"] == "text/event-stream"
    sent = [event["data"] for event in events(response)]
    assert sent[0] == LIST_CHANGED
    assert '"id":2' in sent[1]
    assert len(sent) == 2
    assert "list_changed" not in last.text


async def test_list_changed_goes_to_the_get_stream_when_one_is_open(serve: Serve) -> None:
    """ListChanged with a GET stream open: the page stays JSON and the notification arrives on the GET stream."""
    server = _catalogue(serve, get_stream=True)
    server.inject(faults.ListChanged(1))
    with anyio.fail_after(LIMIT_S):
        async with socket_client(server) as client:
            wire = Wire(client)
            await wire.initialize()
            # The stream's headers arrive after the server marked the session as streaming.
            async with client.stream("GET", "/mcp", headers=wire.headers()) as stream:
                page = await wire.post(rpc("tools/list"))
                lines = stream.aiter_lines()
                while await anext(lines) != f"data: {LIST_CHANGED}":
                    pass
    assert page.headers["content-type"] == "application/json"
    assert [t["name"] for t in page.json()["result"]["tools"]] == ["t1", "t2"]
    assert server.journal.requests("tools/list")[0].fault == faults.ListChanged(1)


# -- the official SDK client, walking with list_tools(cursor=...) ---------------------------------------------


async def _sdk_walk(
    server: TestMcpServer, max_pages: int = 6, **options: Any
) -> tuple[list[Any], BaseException | None, list[Any]]:
    """Walk the listing with the SDK client as its docs show; the pages, the exception that ended it, notifications."""
    pages: list[Any] = []
    notified: list[Any] = []

    async def on_message(message: Any) -> None:
        notified.append(type(getattr(message, "root", message)).__name__)

    ended: BaseException | None = None
    with anyio.fail_after(LIMIT_S):
        async with sdk_client(server, message_handler=on_message, **options) as client:
            cursor = None
            try:
                for _ in range(max_pages):
                    page = await client.list_tools(cursor=cursor)
                    pages.append(([t.name for t in page.tools], page.next_cursor))
                    cursor = page.next_cursor
                    if cursor is None:
                        break
            except (MCPError, pydantic.ValidationError) as exc:
                ended = exc
    return pages, ended, notified


SDK_WALKS: list[tuple[faults.Fault, list[Any], Any]] = [
    (faults.RepeatCursor(2), [["t1", "t2"], ["t3", "t4"], ["t3", "t4"], ["t5"]], None),
    (faults.StuckCursor(1), [["t1", "t2"]] + [["t3", "t4"]] * 5, None),
    (faults.EmptyCursor(1), [["t1", "t2"]], -32602),
    (faults.DuplicateTool(2), [["t1", "t2"], ["t3", "t4", "t1"], ["t5"]], None),
    (faults.PageError(2), [["t1", "t2"]], -32603),
    (faults.MalformedPage(2), [["t1", "t2"]], pydantic.ValidationError),
    (faults.SlowPage(2, 0.05), [["t1", "t2"], ["t3", "t4"], ["t5"]], None),
    (faults.SlowPage(2, SDK_WAIT_S * 3), [["t1", "t2"]], -32001),
    (faults.EndlessPages(), [["t1", "t2"], ["t3", "t4"], ["t5"], [], [], []], None),
    (faults.InvalidCursor(2), [["t1", "t2"]], -32602),
    (faults.CatalogueChange(2, add=["n1"], remove=["t1"]), [["t1", "t2"], ["t4", "t5"], ["n1"]], None),
    (faults.ListChanged(2), [["t1", "t2"], ["t3", "t4"], ["t5"]], None),
]


@pytest.mark.parametrize(("fault", "shape", "ended"), SDK_WALKS, ids=[repr(f) for f, _, _ in SDK_WALKS])
async def test_sdk_client_walks_what_the_server_sends(
    serve: Serve, fault: faults.Fault, shape: list[Any], ended: Any
) -> None:
    """The SDK's list_tools returns each page as sent, with no cursor, duplicate or page-count checks of its own."""
    server = _catalogue(serve)
    server.inject(fault)
    pages, error, _ = await _sdk_walk(server, wait_s=SDK_WAIT_S)
    assert [names for names, _ in pages] == shape
    if ended is None:
        assert error is None
    elif isinstance(ended, int):
        assert isinstance(error, MCPError)
        assert error.code == ended
    else:
        assert isinstance(error, ended)
    assert fault in _faults_by_page(server)


@pytest.mark.parametrize("framing", FRAMINGS)
@pytest.mark.parametrize(
    ("fault", "shape"),
    [
        (faults.ListChanged(2), [["t1", "t2"], ["t3", "t4"], ["t5"]]),
        (faults.CatalogueChange(2, add=["n1"], remove=["t1"]), [["t1", "t2"], ["t4", "t5"], ["n1"]]),
    ],
    ids=["list-changed", "catalogue-change"],
)
async def test_sdk_client_hears_list_changed_during_the_walk(
    serve: Serve, framing: str, fault: faults.Fault, shape: list[Any]
) -> None:
    """The SDK hands the page's list_changed to its message_handler and finishes the walk undisturbed."""
    server = _catalogue(serve, response_mode=framing)
    server.inject(fault)
    pages, error, notified = await _sdk_walk(server)
    assert ([names for names, _ in pages], error) == (shape, None)
    assert notified == [mcp_types.ToolListChangedNotification.__name__]
