"""`GuardedAdapter`: the adapter as the properties see it, which records the step in progress (what a hang
report names) and turns what an adapter must not do (raise anything, a `CancelledError` or an exception group
included, or return something else than an `Outcome`) into a `ContractError`; and `stalled_adapter`, which tells
an adapter that does not answer from a bridge waiting on the server."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Protocol

from mcp_testkit.adapters import BridgeAdapter, Outcome
from mcp_testkit.contract._errors import ContractError, one_line, traceback_text

__all__ = ["HOST_HINT", "GuardedAdapter", "adapter_raised", "stalled_adapter"]

HOST_HINT = (
    "a bridge that holds task groups (the mcp SDK's Client and the bridges built on it) cancels the task it was "
    "entered in when its transport fails: host it in a task of its own with mcp_testkit.adapters.TaskHost "
    "(docs/adapters.md, 'A bridge that lives in a task of its own')"
)
"""What an error of an adapter that raised a cancellation or an exception group suggests."""


def adapter_raised(step: str, exc: BaseException) -> ContractError:
    """The error of an adapter whose `step` raised `exc` (any exception: a cancellation, an exception group too)."""
    hint = "an adapter maps its bridge's exceptions to outcomes; one that escapes is an error of the adapter"
    if not isinstance(exc, Exception) or isinstance(getattr(exc, "exceptions", None), tuple):  # an exception group
        hint = f"{hint}; {HOST_HINT}"
    return ContractError(f"the adapter's {step} raised {one_line(exc)} ({hint})\n{traceback_text(exc)}")


def stalled_adapter(
    adapter: Any, step: str, seconds: float, sent: Sequence[Any], finished: Collection[int]
) -> ContractError | None:
    """The error of an adapter that did not answer in `step` within `seconds` although its bridge is not waiting on
    the server: every request `sent` during the step has its answer (`finished` holds their seqs) and none of them
    met a fault. None when the bridge may be waiting on the server, or met a fault, or the adapter knows that its
    bridge hangs (`waiting_on_bridge`, as a driver whose watchdog fired): then it is the bridge's hang."""
    if not step.startswith(("connect", "list_tools", "call(", "approve", "decline", "close")):
        return None
    if getattr(adapter, "waiting_on_bridge", False) is True:
        return None
    if any(record.seq not in finished or record.fault is not None for record in sent):
        return None
    answered = f"{len(sent)} request(s) sent during it, all answered, none faulted" if sent else "no request sent"
    return ContractError(
        f"the adapter's {step} did not return within {seconds:g} s while the server held no request of the bridge "
        f"open ({answered}): the adapter is waiting on something other than the server (a reply stream never "
        f"sent to or closed, a task never started?); this is an error of the adapter, not a hang of the bridge (an "
        f"adapter that knows its bridge hangs sets waiting_on_bridge = True). If the bridge lives in a task of its "
        f"own, {HOST_HINT.split(': ', 1)[1]}"
    )


class _StepLog(Protocol):
    """What the guard writes to: the harness's current step and the steps so far (the harness, which imports
    this module, so it is named by what it offers)."""

    step: str
    steps: list[tuple[str, float]]
    deadline: float
    """When the running example's time is up (the event loop's clock)."""

    def began(self, step: str) -> None:
        """Note that an adapter step began: the journal's length then (what a stalled adapter is told apart by)."""

    def called(self, tool: str, arguments: Mapping[str, Any], outcome: Outcome) -> None:
        """Note a call and its outcome for the ledger checked after close."""


class GuardedAdapter:
    """The adapter as the properties see it: it tracks the step in progress for hang reports, and turns
    an exception escaping an adapter method, or a value that is not an `Outcome`, into a `ContractError`."""

    def __init__(self, adapter: BridgeAdapter, harness: _StepLog) -> None:
        self._adapter = adapter
        self._harness = harness
        self._closed = False
        self.abandoning = False
        """Set by a property that cancels a call on purpose (P10, as an application's cancel scope would): that
        cancellation is let through, not taken for the adapter's error."""

    def __getattr__(self, name: str) -> Any:
        return getattr(self._adapter, name)

    async def _step(self, step: str, work: Callable[[], Awaitable[Any]]) -> Any:
        import anyio

        self._harness.step = step
        self._harness.steps.append((step, anyio.current_time()))
        self._harness.began(step)
        try:
            result = await work()
        except (KeyboardInterrupt, SystemExit):
            raise
        except anyio.get_cancelled_exc_class() as exc:
            if self.abandoning or anyio.current_time() >= self._harness.deadline:
                raise  # the property abandoned the call, or the example's deadline: the harness reports the hang
            raise adapter_raised(step, exc) from exc
        except BaseException as exc:
            raise adapter_raised(step, exc) from exc
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

    def use_oauth(self, redirect_handler: Any, callback_handler: Any) -> None:
        self._sync("use_oauth", redirect_handler, callback_handler)

    def _sync(self, method: str, *args: Any) -> None:
        try:
            getattr(self._adapter, method)(*args)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            raise adapter_raised(method, exc) from exc

    async def close(self) -> None:
        """Close the adapter, once: a property that closes it itself to look at what closing sent is not
        followed by a second close."""
        if not self._closed:
            self._closed = True
            await self._step("close", self._adapter.close)
