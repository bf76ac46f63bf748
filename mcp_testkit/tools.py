"""Scripted tools: their definitions as the wire shows them, and the answers a test gives them."""

from __future__ import annotations

import inspect
import json
import re
import weakref
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import mcp_types
from pydantic import BaseModel

from mcp_testkit._wire.param_headers import mirrored_params

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "Answer",
    "Elicit",
    "InputUnavailable",
    "JsonRpcError",
    "ListRoots",
    "RawResult",
    "Sample",
    "ScriptedTool",
    "ToolContext",
    "ToolError",
]

_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
TASK_SUPPORT = ("optional", "required")
"""A tool's `task=`: run as a task when the client asks for one, or only as a task (`execution.taskSupport`)."""

Answer = Union[
    str,
    Mapping[str, Any],
    Sequence[Any],
    mcp_types.CallToolResult,
    "ToolError",
    Callable[..., Any],
]
"""What a tool can answer: text, a dict (structured content), content blocks, a whole result,
a `ToolError`, or a callable (sync or async) taking the arguments and returning one of those."""


class ToolError(Exception):
    """Raised by a handler (or given as an answer) to answer a call with an `isError` result."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __repr__(self) -> str:
        return f"ToolError({self.text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolError) and other.text == self.text

    def __hash__(self) -> int:
        return hash(("ToolError", self.text))


class JsonRpcError(Exception):
    """Raised by a handler to answer the call with a JSON-RPC error instead of a result (a replay's recorded one)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data


class InputUnavailable(JsonRpcError):
    """Raised by `ToolContext.elicit`, `sample`, `list_roots` and `ask` when the client gives no usable input: it did
    not declare the capability (-32600, or -32021 in 2026-07-28), did not answer within
    `TestMcpServer.input_timeout_s` (-32001), answered with an error, or answered what the request does not allow
    (-32602). Let through, it answers the call with its JSON-RPC error, and the call counts no execution (the handler
    stopped at its input request); a tool may catch it and answer otherwise."""


@dataclass(frozen=True)
class Elicit:
    """An `elicitation/create` request for `ToolContext.ask`: a message and the schema of the answer's content."""

    message: str
    schema: Mapping[str, Any]

    method = "elicitation/create"
    capability = "elicitation"

    def params(self) -> dict[str, Any]:
        return {"message": self.message, "requestedSchema": dict(self.schema)}


@dataclass(frozen=True)
class Sample:
    """A `sampling/createMessage` request for `ToolContext.ask`: the messages (a string is one user text message),
    `max_tokens`, and any other parameter of the request in wire spelling (`systemPrompt`, `modelPreferences`...)."""

    messages: str | Sequence[Mapping[str, Any]]
    max_tokens: int
    extra: Mapping[str, Any] = field(default_factory=dict)

    method = "sampling/createMessage"
    capability = "sampling"

    def params(self) -> dict[str, Any]:
        messages = self.messages
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        return {**self.extra, "messages": [dict(message) for message in messages], "maxTokens": self.max_tokens}


@dataclass(frozen=True)
class ListRoots:
    """A `roots/list` request for `ToolContext.ask`."""

    method = "roots/list"
    capability = "roots"

    def params(self) -> dict[str, Any]:
        return {}


InputRequest = Elicit | Sample | ListRoots
"""What a tool may ask the client for."""

AskInput = Callable[[dict[str, InputRequest]], Awaitable[dict[str, Any]]]
"""How a context asks the client, given by the era: a request on the call's stream, or an `InputRequiredResult`."""


class RawResult(dict[str, Any]):
    """A `CallToolResult` already in wire form, answered exactly as given (a replay's recorded answer)."""


@dataclass
class ToolContext:
    """Handed to a handler that takes a second parameter: reports progress for the running call."""

    tool: str
    request_id: Any
    progress_token: Any
    _notify: Callable[[dict[str, Any]], Awaitable[None]] = field(repr=False)
    log_level: str | None = None
    """The level the client asked for (`logging/setLevel`, or a 2026-07-28 request's `_meta`), if it did."""
    logs: bool = True
    """Whether log messages may be sent: a 2026-07-28 request that names no level gets none."""
    era: str = "handshake"
    """The protocol era of the request: 'handshake', or 'stateless' (2026-07-28), whose results may differ in shape."""
    sent: list[dict[str, Any]] = field(default_factory=list)
    """The progress and log notifications this call sent, in order (what the client was told meanwhile)."""
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    """What the client declared it can do (`initialize`, or a 2026-07-28 request's `_meta`): `elicitation`,
    `sampling`, `roots`..."""
    session_id: str | None = None
    """The session the call came on (handshake era); None in 2026-07-28, which has no sessions."""
    session_state: dict[str, Any] | None = None
    """A dict the handlers of one session share and keep between its calls (a login, a cursor, a transaction), empty
    when the session opens and gone with it (a lost session, a restart); None in 2026-07-28, which has no sessions.
    See docs/server.md, "State kept in a session"."""
    _ask: AskInput | None = field(default=None, repr=False)
    _keys: dict[str, int] = field(default_factory=dict, repr=False)

    async def ask(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        """Ask the client for several inputs at once (`Elicit`, `Sample`, `ListRoots`, by keys of your choosing);
        returns the client's answers by the same keys, as it sent them. See docs/input.md."""
        if self._ask is None:
            raise InputUnavailable(
                -32600, f"{self.tool!r} asked the client for input, but this request cannot carry input requests"
            )
        if not requests:
            return {}
        return await self._ask(dict(requests))

    async def elicit(self, message: str, schema: Mapping[str, Any], *, key: str | None = None) -> dict[str, Any]:
        """Ask the user, through the client, for content matching `schema`; returns the `ElicitResult`
        (`{"action": "accept", "content": {...}}`, or a decline or cancel)."""
        key = key or self._key("elicit")
        return (await self.ask({key: Elicit(message, schema)}))[key]  # type: ignore[no-any-return]

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int,
        key: str | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a message (`sampling/createMessage`); `params` are further request parameters in
        wire spelling. Returns the `CreateMessageResult`."""
        key = key or self._key("sample")
        return (await self.ask({key: Sample(messages, max_tokens, params)}))[key]  # type: ignore[no-any-return]

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """Ask the client for its roots (`roots/list`); returns the list of roots (`{"uri": ..., "name": ...}`)."""
        key = key or self._key("roots")
        answer = (await self.ask({key: ListRoots()}))[key]
        return list(answer.get("roots", []))

    def _key(self, kind: str) -> str:
        """The next default key of a kind: `elicit-1`, `elicit-2`...; the same on every round of a 2026-07-28 call."""
        count = self._keys[kind] = self._keys.get(kind, 0) + 1
        return f"{kind}-{count}"

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send `notifications/progress` for this call, if the client asked for progress."""
        if self.progress_token is None:
            return
        params: dict[str, Any] = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._send({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send `notifications/message` at `level`, unless the client asked for a higher level (or for none)."""
        if not self.logs:
            return
        if self.log_level is not None and _LEVELS.index(level) < _LEVELS.index(self.log_level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._send({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

    async def _send(self, notification: dict[str, Any]) -> None:
        self.sent.append(notification)
        await self._notify(notification)


_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def text_result(text: str, *, is_error: bool = False) -> dict[str, Any]:
    """A `CallToolResult` of one text block, in wire form."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["isError"] = True
    return result


def _dump(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def _block(block: Any) -> dict[str, Any]:
    if isinstance(block, BaseModel):
        return _dump(block)
    if isinstance(block, Mapping):
        return dict(block)
    raise TypeError(f"a content block must be an mcp_types model or a dict, not {type(block).__name__}")


def result_of(answer: Any) -> dict[str, Any]:
    """Turn a non-callable answer into a `CallToolResult` in wire form."""
    if isinstance(answer, RawResult):
        return dict(answer)
    if isinstance(answer, str):
        return {"content": [{"type": "text", "text": answer}]}
    if isinstance(answer, ToolError):
        return text_result(answer.text, is_error=True)
    if isinstance(answer, mcp_types.CallToolResult):
        result = _dump(answer)
        if "result_type" not in answer.model_fields_set:
            # A 2026-07-28 field with a default: not part of the handshake-era result a test scripted.
            result.pop("resultType", None)
        return result
    if isinstance(answer, Mapping):
        structured = dict(answer)
        return {
            "content": [{"type": "text", "text": json.dumps(structured, separators=(",", ":"))}],
            "structuredContent": structured,
        }
    if isinstance(answer, BaseModel):
        return {"content": [_dump(answer)]}
    if isinstance(answer, Sequence):
        return {"content": [_block(block) for block in answer]}
    if answer is None:
        return {"content": []}
    raise TypeError(
        f"a tool answer must be str, dict, a list of content blocks, a CallToolResult or ToolError, "
        f"not {type(answer).__name__}"
    )


_TAKES_CONTEXT: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()
"""Whether a handler takes a context, by handler; weak, so that it keeps no handler (nor its server) alive."""


def takes_context(handler: Callable[..., Any]) -> bool:
    """Whether a handler (of a tool, or a prompt's messages) takes a context as its second parameter."""
    return _takes_context(handler)


def _takes_context(handler: Callable[..., Any]) -> bool:
    try:
        return _TAKES_CONTEXT[handler]
    except KeyError:
        takes = _TAKES_CONTEXT[handler] = _inspect_takes_context(handler)
        return takes
    except TypeError:  # not weakly referenceable, or unhashable: inspected every time
        return _inspect_takes_context(handler)


def _inspect_takes_context(handler: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(handler).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in positional)


_NAME_LISTS = {
    "requires": "client capability names, such as ['sampling']",
    "scopes": "OAuth scope names, such as ['tickets:write']",
}
"""What each list of names a tool takes holds, for the error that refuses a bad one."""


@dataclass(eq=False)
class ScriptedTool:
    """One tool of a `TestMcpServer`: its wire definition and what it answers, call after call.

    Returned by `TestMcpServer.tool`; calling it with a function makes that function the handler,
    so it also works as a decorator.
    """

    name: str
    definition: dict[str, Any]
    answers: list[Any]
    validator: Validator | None = field(default=None, repr=False)
    requires: tuple[str, ...] = ()
    """Client capabilities a call needs ('sampling', 'elicitation', ...): a 2026-07-28 call whose `_meta`
    does not declare them all is refused with -32021 before the tool runs."""
    scopes: tuple[str, ...] = ()
    """OAuth scopes a call needs on a `TestMcpServer(auth=...)`: a token without them all gets 403
    insufficient_scope naming them, before the tool runs."""
    _served: int = field(default=0, repr=False)
    _mirrored: tuple[Any, list[tuple[tuple[str, ...], str]]] | None = field(default=None, repr=False)
    _handler: tuple[Any, bool] | None = field(default=None, repr=False)
    """The last handler called, and whether it takes a context (`_takes_context`, without its weak lookup)."""

    @classmethod
    def build(
        cls,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        annotations: Mapping[str, Any] | mcp_types.ToolAnnotations | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        returns: Any = None,
        answers: Sequence[Any] | None = None,
        requires: Sequence[str] = (),
        task: str | None = None,
        scopes: Sequence[str] = (),
    ) -> ScriptedTool:
        """Check a tool definition against the spec and build it; raises ValueError naming the problem.

        These are the keywords of `TestMcpServer.tool`, whose docstring tells what each does.
        """
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(
                f"tool name {name!r} is not valid: use 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
            )
        if returns is not None and answers is not None:
            raise ValueError(f"tool {name!r}: give either returns= or answers=, not both")
        if answers is not None and (isinstance(answers, (str, bytes, Mapping)) or len(answers) == 0):
            raise ValueError(f"tool {name!r}: answers= must be a non-empty list, one answer per call")
        for label, names in (("requires", requires), ("scopes", scopes)):
            if isinstance(names, str) or not all(isinstance(one, str) and one for one in names):
                raise ValueError(f"tool {name!r}: {label}= is a list of {_NAME_LISTS[label]}")
        schema = dict(input_schema) if input_schema is not None else {"type": "object"}
        if schema.get("type") != "object":
            raise ValueError(f'tool {name!r}: input_schema must have "type": "object" at its root')
        hints: dict[str, Any] = {}
        if isinstance(annotations, mcp_types.ToolAnnotations):
            hints.update(_dump(annotations))
        elif annotations is not None:
            hints.update(annotations)
        for key, value in (
            ("readOnlyHint", read_only),
            ("destructiveHint", destructive),
            ("idempotentHint", idempotent),
            ("openWorldHint", open_world),
        ):
            if value is not None:
                hints[key] = value
        definition: dict[str, Any] = {"name": name}
        if title is not None:
            definition["title"] = title
        if description is not None:
            definition["description"] = description
        definition["inputSchema"] = schema
        if output_schema is not None:
            definition["outputSchema"] = dict(output_schema)
        if hints:
            definition["annotations"] = hints
        try:
            mcp_types.Tool.model_validate(definition)
        except Exception as exc:
            raise ValueError(f"tool {name!r} is not a valid MCP tool definition: {exc}") from None
        if task is not None:
            if task not in TASK_SUPPORT:
                raise ValueError(
                    f"tool {name!r}: task= is 'optional' or 'required' (or None: never a task), not {task!r}"
                )
            definition["execution"] = {"taskSupport": task}
        validator = _validator_for(name, schema)
        script = list(answers) if answers is not None else [returns]
        return cls(name, definition, script, validator, tuple(requires), tuple(scopes))

    def __call__(self, handler: Callable[..., Any]) -> Callable[..., Any]:
        """Make `handler` this tool's only answer; returns it unchanged, so this works as a decorator."""
        self.answers = [handler]
        self._served = 0
        return handler

    @property
    def read_only(self) -> bool:
        return bool(self.definition.get("annotations", {}).get("readOnlyHint", False))

    def next_answer(self) -> Any:
        """The answer for the next call: one per call, the last repeating."""
        index = min(self._served, len(self.answers) - 1)
        self._served += 1
        return self.answers[index]

    def mirrored_params(self) -> list[tuple[tuple[str, ...], str]]:
        """The parameters its `inputSchema` mirrors into `Mcp-Param-{name}` headers (`_param_headers.mirrored_params`),
        found once per schema: walked again whenever the definition holds another schema object."""
        schema = self.definition.get("inputSchema")
        cached = self._mirrored
        if cached is None or cached[0] is not schema:
            cached = self._mirrored = (schema, mirrored_params(schema))
        return cached[1]

    def validation_error(self, arguments: Mapping[str, Any]) -> str | None:
        """A message describing why `arguments` break the input schema, or None when they fit."""
        if self.validator is None:
            return None
        from mcp_testkit._wire.validation import argument_problem

        return argument_problem(self.name, self.validator, arguments)


def _validator_for(name: str, schema: Mapping[str, Any]) -> Validator | None:
    if set(schema) <= {"type"} or (set(schema) <= {"type", "properties"} and not schema.get("properties")):
        return None
    from mcp_testkit._wire.validation import build_validator

    return build_validator(name, schema)


def start_answer(tool: ScriptedTool, arguments: dict[str, Any], context: Callable[[], ToolContext]) -> Any:
    """The next answer of `tool`, its handler called if it has one: an answer, or an awaitable of one.

    `context` makes the `ToolContext`, only for a handler that takes one."""
    answer = tool.next_answer()
    if type(answer) in _PLAIN_ANSWERS or not callable(answer) or isinstance(answer, (ToolError, BaseModel)):
        return answer
    known = tool._handler
    if known is None or known[0] is not answer:
        known = tool._handler = (answer, _takes_context(answer))
    return answer(arguments, context()) if known[1] else answer(arguments)


_PLAIN_ANSWERS = frozenset({str, dict, list, type(None)})
"""Answer types that are never a handler, passed on without asking."""
