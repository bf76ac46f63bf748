"""A driver (docs/driver.md) for smolagents' MCP tools (mcpadapt): the tools `ToolCollection.from_mcp`
builds (`MCPAdapt` with `SmolAgentsAdapter`, as `from_mcp` does, so that the MCP names stay known),
called as a smolagents agent calls them (`tool(**arguments)`).

Session model: persistent (one session in mcpadapt's own thread and event loop). Retries: none.
The listing is the first page only. Tool names are sanitised for Python (`a-b` -> `a_b`): the
listing reports the MCP name of the tool each sanitised name reaches, as an agent's tool table
keeps one tool per name. Errors: the tool returns the first content block's text and ignores
`isError` (`ok`); what it raises is sorted from the error alone (`error_kind`; nothing watches the wire). mcpadapt's
session timeout is given as an int and checked as a float, so calls have none: timeout_s is null.
An HTTP error or a lost connection during a call ends mcpadapt's session task and its event loop's
thread; the call then waits for good on that stopped loop (a hang of the bridge, reported as such).
Needs `mcp<2`: set up with `python -m venv .venv && .venv/bin/pip install -r
drivers/smolagents/requirements.txt`, run with `.venv/bin/python drivers/smolagents/drive.py`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Mapping
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from driver_protocol import current_headers, error_kind, outcome, serve


def in_daemon_thread(work: Callable[[], Any]) -> asyncio.Future[Any]:
    """Run blocking `work` in a daemon thread: a bridge stuck in it must not keep the driver from exiting."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def run() -> None:
        try:
            result = work()
        except BaseException as exc:  # handed to the awaiting side as is
            loop.call_soon_threadsafe(_fail, future, exc)
        else:
            loop.call_soon_threadsafe(_succeed, future, result)

    threading.Thread(target=run, daemon=True).start()
    return future


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


def _succeed(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


class SmolagentsDriven:
    def __init__(self) -> None:
        self.headers: dict[str, str] = {}
        self.adapt: Any = None
        self.tools: dict[str, Any] = {}
        self.names: list[str] = []

    def _client(self, headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            auth=current_headers(httpx, self.headers),
            timeout=timeout if timeout is not None else httpx.Timeout(30.0, read=300.0),
            follow_redirects=True,
        )

    async def connect(self, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
        from mcpadapt.core import MCPAdapt
        from mcpadapt.smolagents_adapter import SmolAgentsAdapter, _sanitize_function_name

        self.headers.clear()
        self.headers.update(headers)
        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx.AsyncClient:
            return self._client(headers, timeout, auth)

        # mcpadapt deep-copies its parameters: a plain function is copied as itself, a bound method is not.
        params = {"url": url, "transport": "streamable-http", "httpx_client_factory": factory}
        adapt = MCPAdapt(params, SmolAgentsAdapter(structured_output=False))
        try:
            tools = await in_daemon_thread(adapt.__enter__)
        except Exception as exc:
            return outcome(error_kind(exc, "connect"), error=exc)
        self.adapt = adapt
        # An agent keeps one tool per (sanitised) name: the last one listed under it.
        self.tools = {tool.name: tool for tool in tools}
        mcp_names = {_sanitize_function_name(t.name): t.name for session in adapt.mcp_tools for t in session}
        self.names = [mcp_names.get(name, name) for name in self.tools]
        self.by_mcp_name = {mcp_names.get(name, name): tool for name, tool in self.tools.items()}
        return outcome("ok", "")

    async def list(self) -> list[str]:
        return list(self.names)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        tool = self.by_mcp_name.get(name)
        if tool is None:
            return outcome("tool_error", f"no tool reaches the MCP tool {name!r}")
        try:
            result = await in_daemon_thread(lambda: tool(**dict(arguments)))
        except Exception as exc:
            return outcome(error_kind(exc, "call"), error=exc)
        return outcome("ok", result if isinstance(result, str) else repr(result))

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self.headers.update(headers)

    async def close(self) -> None:
        adapt, self.adapt = self.adapt, None
        if adapt is not None:
            await in_daemon_thread(lambda: adapt.__exit__(None, None, None))


if __name__ == "__main__":
    serve(
        SmolagentsDriven(),
        {
            "bridge": "smolagents",
            "bridge_version": f"{version('smolagents')} (mcpadapt {version('mcpadapt')})",
            "page_limit": None,
            "retry": 0,
            "timeout_s": None,
            "sessions": "persistent",
            # mcpadapt's `MCPAdapt(connect_timeout=30)` (mcpadapt/core.py:
            # `self.ready.wait(timeout=self.connect_timeout)` around the session's start and listing), its default.
            "connect_timeout_s": 30.0,
            # Not declared: `progress_timeout_s` (mcp 1.x's ClientSession does not extend a wait on progress),
            # `max_result_bytes` (mcp 1.x has no size limit), `concurrency` (the driver protocol runs one request at a
            # time), the "cancellation" capability (the driver protocol cannot abandon a call). Without `timeout_s`
            # (above) P11 and P12 do not apply.
        },
    )
