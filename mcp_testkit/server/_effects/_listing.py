"""Faults of a listing's walk (`tools/list`, and `resources/list`, `resources/templates/list`, `prompts/list` but for
a changing catalogue, which is the tools'): a page refused, slow, malformed or reshaped, a wrong cursor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcp_testkit import faults
from mcp_testkit.server._dispatch._messages import INVALID_PARAMS, error_response, result_response
from mcp_testkit.server._dispatch._paging import LIST_CHANGED, LISTINGS, Page
from mcp_testkit.server._effects._base import Effect, handles
from mcp_testkit.server._state._cursors import Cursor

if TYPE_CHECKING:
    from mcp_testkit.server._dispatch._protocol import Call
    from mcp_testkit.server._state._sessions import Session


_LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


class _Listing(Effect[Any]):
    stdio = True


@handles(faults.InvalidCursor)
class _InvalidCursor(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        return error_response(request_id, INVALID_PARAMS, f"Invalid cursor: {sent!r}")


@handles(faults.PageError)
class _PageError(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        return error_response(request_id, self.fault.code, self.fault.message)


@handles(faults.SlowPage)
class _SlowPage(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        await anyio.sleep(self.fault.seconds)
        return None


@handles(faults.MalformedPage)
class _MalformedPage(_Listing):
    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        key = LISTINGS.get(call.record.rpc_method or "", "tools")
        return result_response(request_id, {key: "this page is deliberately malformed"})


def _announces(session: Session | None) -> bool | None:
    """No GET stream to carry list_changed: it rides on this page's own SSE stream, or it is lost."""
    return True if session is None or not session.outbox.streaming else None


@handles(faults.CatalogueChange)
class _CatalogueChange(_Listing):
    def sse(self, session: Session | None) -> bool | None:
        return _announces(session)

    async def before_page(self, call: Call, request_id: Any, sent: Any) -> Any:
        if call.record.rpc_method != "tools/list":
            return None  # it changes the tools' catalogue; `inject` refuses it for another listing
        # Announced on this page's own stream, where the walking client can see it; others hear it as usual.
        call.state.change_catalogue(self.fault.add, self.fault.remove, quiet=call.session)
        await call.notify(dict(_LIST_CHANGED))
        return None


@handles(faults.ListChanged)
class _ListChanged(_Listing):
    def sse(self, session: Session | None) -> bool | None:
        return _announces(session)

    async def shape_page(self, call: Call, page: Page) -> None:
        await call.notify({"jsonrpc": "2.0", "method": LIST_CHANGED[page.method]})


@handles(faults.StuckCursor)
class _StuckCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        offset = page.next_offset if page.next_offset is not None else page.total
        page.following = Cursor(page.here.page + 1, offset, stuck=True)


@handles(faults.RepeatCursor)
class _RepeatCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        page.following = page.here


@handles(faults.EndlessPages)
class _EndlessPages(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        if page.following is None:
            page.following = Cursor(page.here.page + 1, page.total)


@handles(faults.DuplicateTool)
class _DuplicateTool(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        if page.method == "tools/list":
            tools = call.state.tools
            definitions = call.state.definitions()
            repeated = self.fault.repeated(
                lambda name: tools[name].definition if name in tools else None, definitions[0] if definitions else None
            )
        else:
            entries = list(page.entries)

            def known(name: str) -> Any:
                return next((e for e in entries if name in (e.get("name"), e.get("uri"), e.get("uriTemplate"))), None)

            repeated = self.fault.repeated(known, entries[0] if entries else None)
        if repeated is None:
            _unchanged(call, self.fault)
            return
        page.tools.append(repeated)


def _unchanged(call: Call, fault: faults.Fault) -> None:
    """The fault found nothing to change on this page: the journal says no fault hit it, and its rule stays due."""
    call.state.plan.give_back(fault)
    call.record.fault = None


@handles(faults.EmptyCursor)
class _EmptyCursor(_Listing):
    async def shape_page(self, call: Call, page: Page) -> None:
        page.next_cursor = ""
        call.era.hand_out_empty_cursor(call.state, page.following or Cursor(page.here.page + 1, page.total))
