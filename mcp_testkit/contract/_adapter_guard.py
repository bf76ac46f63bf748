"""`GuardedAdapter`: the adapter as the properties see it, which records the step in progress (what a hang
report names) and turns what an adapter must not do (raise, return something else than an `Outcome`) into a
`ContractError`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcp_testkit.adapters import BridgeAdapter, Outcome
from mcp_testkit.contract._errors import ContractError, traceback_text

__all__ = ["GuardedAdapter"]


class _StepLog(Protocol):
    """What the guard writes to: the harness's current step and the steps so far (the harness, which imports
    this module, so it is named by what it offers)."""

    step: str
    steps: list[tuple[str, float]]

    def called(self, tool: str, arguments: Mapping[str, Any], outcome: Outcome) -> None:
        """Note a call and its outcome for the ledger checked after close."""


class GuardedAdapter:
    """The adapter as the properties see it: it tracks the step in progress for hang reports, and turns
    an exception escaping an adapter method, or a value that is not an `Outcome`, into a `ContractError`."""

    def __init__(self, adapter: BridgeAdapter, harness: _StepLog) -> None:
        self._adapter = adapter
        self._harness = harness
        self._closed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    async def _step(self, step: str, work: Callable[[], Awaitable[Any]]) -> Any:
        import anyio

        self._harness.step = step
        self._harness.steps.append((step, anyio.current_time()))
        try:
            result = await work()
        except Exception as exc:
            raise ContractError(
                f"the adapter's {step} raised {type(exc).__name__}: {exc} (an adapter maps its bridge's "
                f"exceptions to outcomes; one that escapes is an error of the adapter)\n{traceback_text(exc)}"
            ) from exc
        self._harness.step = f"after {step}"
        return result

    def _outcome(self, step: str, value: Any) -> Outcome:
        if not isinstance(value, Outcome):
            raise ContractError(f"the adapter's {step} returned {value!r}, not an Outcome")
        return value

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        return self._outcome("connect", await self._step("connect", lambda: self._adapter.connect(url, headers)))

    async def list_tools(self) -> list[str]:
        names = await self._step("list_tools", self._adapter.list_tools)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ContractError(f"the adapter's list_tools returned {names!r}, not a list of tool names")
        return names

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        step = f"call({tool!r})"
        outcome = self._outcome(step, await self._step(step, lambda: self._adapter.call(tool, arguments)))
        self._harness.called(tool, arguments, outcome)
        return outcome

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self._sync("set_headers", headers)

    async def approve(self, token: str) -> Outcome:
        adapter: Any = self._adapter
        return self._outcome("approve", await self._step("approve", lambda: adapter.approve(token)))

    async def decline(self, token: str) -> Outcome:
        adapter: Any = self._adapter
        return self._outcome("decline", await self._step("decline", lambda: adapter.decline(token)))

    def require_approval(self, tools: Any) -> None:
        self._sync("require_approval", tools)

    def use_tool_cache(self) -> None:
        self._sync("use_tool_cache")

    def advance_cache_clock(self, seconds: float) -> None:
        self._sync("advance_cache_clock", seconds)

    def _sync(self, method: str, *args: Any) -> None:
        try:
            getattr(self._adapter, method)(*args)
        except Exception as exc:
            raise ContractError(
                f"the adapter's {method} raised {type(exc).__name__}: {exc}\n{traceback_text(exc)}"
            ) from exc

    async def close(self) -> None:
        """Close the adapter, once: a property that closes it itself to look at what closing sent is not
        followed by a second close."""
        if not self._closed:
            self._closed = True
            await self._step("close", self._adapter.close)

