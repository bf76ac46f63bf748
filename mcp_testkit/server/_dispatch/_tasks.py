"""The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) in 2026-07-28: tools that run as tasks.

A tool declared with `task="optional"` or `task="required"` (its definition says so as
`execution.taskSupport`) is run as a task when the request's client declares the extension in
`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`: `tools/call` answers at once with a flat
`CreateTaskResult` (`resultType: "task"`, `taskId`, `status`, `createdAt`, `lastUpdatedAt`, `ttlMs`,
`pollIntervalMs`), the tool runs in the background, and the client follows it with `tasks/get` (the result, or
the error, inlined once terminal), answers its input with `tasks/update` and stops it with `tasks/cancel`.
Without the extension an optional tool runs as any tool and a required one is refused with -32021. A task runs
its tool once: the execution ledger counts it when the task is created.

A tool running as a task asks its client for input with `ctx.elicit`/`sample`/`list_roots`/`ask` or
`await ask_client({key: request})`: the task is `input_required` with those `inputRequests` until `tasks/update`
answers every key. A handler marked `@asks_first` runs in the request instead, asking in `InputRequiredResult`
rounds, until it awaits `start_task()`: that round answers the `CreateTaskResult` and the rest runs as the task.
Every status change is published as `notifications/tasks` to the `subscriptions/listen` streams that asked for the
task's id in `notifications.taskIds`. The tasks themselves, and the server's table of them, are its state
(`server/_state/_tasks.py`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import sniffio

from mcp_testkit._wire.eras import CAPABILITIES_KEY, MISSING_CAPABILITY
from mcp_testkit.journal import Record
from mcp_testkit.server._dispatch._messages import INTERNAL_ERROR, INVALID_PARAMS, error_response, result_response
from mcp_testkit.server._state._tasks import TERMINAL, Task

if TYPE_CHECKING:
    from mcp_testkit.tools import ScriptedTool

__all__ = [
    "TASKS_EXTENSION",
    "TASK_METHODS",
    "ask_client",
    "ask_task",
    "asks_first",
    "declare_task",
    "declared_by",
    "missing_extension",
    "start_task",
    "task_tool_call",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_SUPPORT = ("optional", "required")
ASKS_FIRST = "__mcp_testkit_asks_first__"

Call = Any
"""`_protocol.Call` (a dataclass; not imported: `_protocol` builds on this module, through `_input`)."""
Handler = Callable[[Any, dict[str, Any], Call], Awaitable[Any]]


def declare_task(tool: ScriptedTool, support: str) -> None:
    """Mark a tool as run as a task ('optional' or 'required'), in its definition's `execution.taskSupport`."""
    if support not in TASK_SUPPORT:
        raise ValueError(
            f"tool {tool.name!r}: task= is 'optional' or 'required' (or None: never a task), not {support!r}"
        )
    tool.definition["execution"] = {"taskSupport": support}


def task_support(tool: ScriptedTool | None) -> str | None:
    execution = tool.definition.get("execution") if tool is not None else None
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if support in TASK_SUPPORT else None


_CURRENT: contextvars.ContextVar[Task | None] = contextvars.ContextVar("mcp_testkit_task", default=None)
_STARTING: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "mcp_testkit_task_start", default=None
)


def running_task() -> Task | None:
    """The task the calling handler runs as (None: no task, or an `@asks_first` handler before `start_task()`)."""
    return _CURRENT.get()


async def ask_client(requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """From a tool running as a task: ask the client for input (`{key: {"method": "elicitation/create", "params":
    {...}}}`), wait until `tasks/update` answered every key, and return the answers by key. RuntimeError outside a
    task. A key the task used before goes on the wire with a suffix (`key-2`): keys are unique over a task."""
    return {key: answer for key, (answer, _) in (await ask_task(requests)).items()}


async def ask_task(requests: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[Any, int | None]]:
    """`ask_client`, each answer with the journal seq of the `tasks/update` that carried it."""
    task = _CURRENT.get()
    if task is None:
        raise RuntimeError("ask_client() asks for input from a tool running as a task (declared with task=...)")
    wire: dict[str, str] = {}
    for key in requests:
        sent, n = key, 1
        while sent in task.asked:
            n += 1
            sent = f"{key}-{n}"
        task.asked.add(sent)
        wire[key] = sent
    pending = {wire[key]: dict(request) for key, request in requests.items()}
    task.input_requests.update(pending)
    task.move("input_required")
    while any(key not in task.responses for key in pending):
        task.answered = anyio.Event()
        await task.answered.wait()
    task.move("working")
    return {key: (task.responses.pop(wire[key]), task.answered_by.get(wire[key])) for key in requests}


def asks_first(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a task tool's handler as one that asks for input before it is a task: it runs in the `tools/call`
    request, whose `ctx` input requests are `InputRequiredResult` rounds, until it awaits `start_task()`."""
    setattr(handler, ASKS_FIRST, True)
    return handler


async def start_task() -> None:
    """From an `@asks_first` handler: the inputs are in, the rest runs as a task (the round that gets here answers
    the `CreateTaskResult`). Nothing happens anywhere else (no extension declared: the tool runs as any tool)."""
    start = _STARTING.get()
    if start is not None:
        _STARTING.set(None)
        start()


def declared_by(capabilities: Any) -> bool:
    """Whether a client's capabilities (a request's `_meta` ones) declare the tasks extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _declared(call: Call) -> bool:
    """Whether the request's client declared the tasks extension in its `_meta` capabilities."""
    return declared_by((call.record.meta or {}).get(CAPABILITIES_KEY))


def missing_extension(request_id: Any, what: str) -> dict[str, Any]:
    """The -32021 error for `what`, done by a client that did not declare the tasks extension."""
    return error_response(
        request_id,
        MISSING_CAPABILITY,
        f"Missing required client capability: {what} needs the {TASKS_EXTENSION} extension; declare it in "
        f"_meta[{CAPABILITIES_KEY!r}].extensions",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def _spawn(run: Callable[[], Awaitable[None]]) -> None:
    """Run `run` in the background of the server's event loop, beyond the request that started it."""
    if sniffio.current_async_library() == "trio":
        import trio

        trio.lowlevel.spawn_system_task(run)
        return
    import asyncio

    background: asyncio.Task[None] = asyncio.get_running_loop().create_task(run())  # type: ignore[arg-type]
    _RUNNING.add(background)
    background.add_done_callback(_RUNNING.discard)


_RUNNING: set[Any] = set()
"""The asyncio tasks running tasks: a reference keeps each from being collected mid-run."""


async def _nowhere(message: dict[str, Any]) -> None:
    return None  # a task's notifications have no stream: its request was answered long ago


def _asks_first(tool: ScriptedTool) -> bool:
    return any(getattr(answer, ASKS_FIRST, False) for answer in tool.answers)


def task_tool_call(call_tool: Handler, cancelled: Any) -> Handler:
    """`tools/call` of 2026-07-28 with tasks: a task-declared tool called by a client with the extension runs as a
    task; a required one without it is -32021; every other call is `call_tool`'s (`cancelled`: what it returns for
    a cancelled call)."""

    async def answer(request_id: Any, params: dict[str, Any], call: Call) -> Any:
        state = call.state
        name = params.get("name")
        tool = state.tools.get(name) if isinstance(name, str) else None
        support = task_support(tool)
        if tool is None or support is None:
            return await call_tool(request_id, params, call)
        if not _declared(call):
            if support == "required":
                call.record.executed = False
                return missing_extension(request_id, f"tool {name!r} runs only as a task: it")
            return await call_tool(request_id, params, call)
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict) or tool.validation_error(arguments) is not None:
            return await call_tool(request_id, params, call)  # answered at once, as any call with bad arguments
        if _asks_first(tool):
            return await _asking_first(call_tool, cancelled, request_id, params, call, tool.name)
        task = state.tasks.create(tool.name, publish=state.listeners.publish)
        call.record.executed = True  # it runs once, in the background; the ledger counts it there
        record = call.record
        # its seq (the inputs it asks name the call) and body (its _meta: the client's capabilities)
        detached = Record(record.seq, time.time(), "TASK", record.path, record.headers, record.body)
        background = dataclasses.replace(call, record=detached, session=None, notify=_nowhere, effect=None)

        async def run() -> None:
            _CURRENT.set(task)
            await _run(task, call_tool, cancelled, request_id, params, background)

        _spawn(run)
        return result_response(request_id, {"resultType": "task", **task.envelope()})

    return answer


async def _asking_first(
    call_tool: Handler, cancelled: Any, request_id: Any, params: dict[str, Any], call: Call, name: str
) -> Any:
    """An `@asks_first` handler's round: it runs here, in the request, with the request's input rounds; if it
    awaits `start_task()` the task is made then and this round answers its `CreateTaskResult`, else this round
    answers what the handler did (an `InputRequiredResult`, an error, or its result at once)."""
    state = call.state
    task = state.tasks.draft(name, publish=state.listeners.publish)
    started = anyio.Event()
    ended: list[Any] = []
    background = dataclasses.replace(call, notify=_nowhere, effect=None)

    def start() -> None:
        state.tasks.tasks[task.task_id] = task
        _CURRENT.set(task)
        started.set()

    async def run() -> None:
        _STARTING.set(start)
        try:
            response = await _run(task, call_tool, cancelled, request_id, params, background, early=True)
            if response is not None:
                ended.append(response)
        finally:
            started.set()

    _spawn(run)
    await started.wait()
    if ended:  # it never started a task: its round's own answer (input required, an error, or the result)
        return ended[0]
    return result_response(request_id, {"resultType": "task", **task.envelope()})


async def _run(
    task: Task,
    call_tool: Handler,
    cancelled: Any,
    request_id: Any,
    params: dict[str, Any],
    background: Call,
    early: bool = False,
) -> Any:
    """Run the tool for `task` and settle the task from its answer. With `early`: an `@asks_first` handler, whose
    answer is returned as it is (not settled) when the handler never reached `start_task()`."""
    response: Any = None
    with anyio.CancelScope() as scope:
        task.scope = scope
        try:
            response = await call_tool(request_id, params, background)
        except Exception as exc:  # a bug of ours: the task fails loudly, and check() reports it
            background.state.errors.append(exc)
            why = f"Internal error: mcp-testkit failed running the task ({exc!r}); please report it"
            response = error_response(request_id, INTERNAL_ERROR, why)
    if early and _CURRENT.get() is not task:
        return response
    if scope.cancelled_caught or response is cancelled:
        task.settle("cancelled")
    elif isinstance(response, dict) and "error" in response:
        task.error = response["error"]
        task.settle("failed")
    else:
        task.result = {"resultType": "complete", **(response or {}).get("result", {})}
        task.settle("completed")
    return None


def _task_of(request_id: Any, params: dict[str, Any], call: Call, method: str) -> Task | dict[str, Any]:
    """The task a tasks/* request names, or its error: -32021 without the extension, -32602 for an unknown id."""
    if not _declared(call):
        return missing_extension(request_id, method)
    task_id = params.get("taskId")
    task: Task | None = call.state.tasks.tasks.get(task_id) if isinstance(task_id, str) else None
    if task is None:
        return error_response(request_id, INVALID_PARAMS, f"{method}: unknown taskId {task_id!r}")
    return task


async def _get(request_id: Any, params: dict[str, Any], call: Call) -> Any:
    task = _task_of(request_id, params, call, "tasks/get")
    return task if isinstance(task, dict) else result_response(request_id, task.detailed())


async def _update(request_id: Any, params: dict[str, Any], call: Call) -> Any:
    task = _task_of(request_id, params, call, "tasks/update")
    if isinstance(task, dict):
        return task
    responses = params.get("inputResponses")
    if not isinstance(responses, dict):
        return error_response(request_id, INVALID_PARAMS, "tasks/update needs params.inputResponses (an object)")
    for key, response in responses.items():
        if key in task.input_requests:  # answers to keys it never asked for are ignored
            task.responses[key] = response
            task.answered_by[key] = call.record.seq
            del task.input_requests[key]
    if task.status == "input_required" and not task.input_requests:
        task.move("working")  # every outstanding request is answered: it works again (its handler resumes)
    if task.answered is not None:
        task.answered.set()
    return result_response(request_id, {})


async def _cancel(request_id: Any, params: dict[str, Any], call: Call) -> Any:
    task = _task_of(request_id, params, call, "tasks/cancel")
    if isinstance(task, dict):
        return task
    if task.status not in TERMINAL:
        task.settle("cancelled")
        if task.scope is not None:
            task.scope.cancel()
    return result_response(request_id, {})  # the same ack for a terminal task: cancel is idempotent


TASK_METHODS: dict[str, Handler] = {"tasks/get": _get, "tasks/update": _update, "tasks/cancel": _cancel}
"""The extension's methods (2026-07-28); `tasks/result` and `tasks/list` of the 2025-11-25 tasks are gone."""
