"""Input requests from a tool or prompt (`ToolContext.elicit`, `sample`, `list_roots`, `ask`), in both eras.

- Handshake era: each input request is a server-to-client JSON-RPC request on the call's own stream (an answer
  that was going to be JSON switches to SSE); the client POSTs (or, over stdio, writes) its response, which
  `answer_arrived` matches by id to the waiting handler. A client that never answers fails the ctx call after
  `input_timeout_s` with `InputUnavailable` (-32001), and is sent `notifications/cancelled`.
- 2026-07-28: Multi Round-Trip Requests (SEP-2322). The handler runs from the answers it has so far; an input it
  lacks ends the round with an `InputRequiredResult` whose `requestState` carries the answers so far, HMAC-signed
  with a key of the server (`ServerState.input_key`), bound to the method, the name and a digest of the arguments,
  and expiring after `STATE_TTL_S`. The client's retry re-runs the handler, which now finds its answers. A round
  that ends asking executed nothing in the ledger's sense; the round that completes is the one execution.

Both eras check answers the same way (`answer_problem`) and journal each exchange (`journal.inputs`). Which of
the two ways a request asks is its era's choice (`Era.asker`, `Era.begin_rounds`: `server/_eras/`); this module
holds both ways.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import inspect
import itertools
import json
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS
from mcp_testkit._wire.referee import judge_result
from mcp_testkit.journal import InputExchange
from mcp_testkit.server._dispatch._messages import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    error_response,
    handler_raised,
    result_response,
)
from mcp_testkit.server._dispatch._tasks import ask_task, running_task
from mcp_testkit.tools import InputUnavailable, JsonRpcError, ToolContext

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from mcp_testkit.journal import Record
    from mcp_testkit.resources import ScriptedPrompt
    from mcp_testkit.server._dispatch._era import Era
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session
    from mcp_testkit.tools import AskInput, InputRequest

__all__ = [
    "REQUEST_TIMEOUT",
    "STATE_TTL_S",
    "InputNeeded",
    "answer_arrived",
    "answer_problem",
    "begin_rounds",
    "input_required",
    "prompt_with_input",
    "requests_asker",
    "rounds_asker",
]

REQUEST_TIMEOUT = -32001
"""The code of a ctx call whose client never answered (the `mcp` SDK's REQUEST_TIMEOUT)."""

STATE_TTL_S = 600
"""How long a `requestState` stays good: the spec's "short expiry", long enough for a person to answer."""

_IDS = itertools.count(1)


class Call(Protocol):
    """What input requests need of dispatch's `Call` (not imported: dispatch imports this module)."""

    state: ServerState
    record: Record
    session: Session | None
    era: Era
    rounds: Any

    @property
    def notify(self) -> Any: ...

    @property
    def to_client(self) -> Any: ...


class InputNeeded(BaseException):
    """Raised through the handler when a 2026-07-28 round lacks answers: the round ends with an InputRequiredResult.

    A BaseException, so that a handler's `except Exception` does not swallow the end of its round."""

    def __init__(self, requests: dict[str, InputRequest]) -> None:
        super().__init__(", ".join(requests))
        self.requests = requests


@dataclass
class Rounds:
    """What a 2026-07-28 request brings for its handler's input requests: the answers of earlier rounds (from the
    verified `requestState`) and of this retry (`inputResponses`)."""

    method: str
    name: str
    digest: str
    carried: dict[str, Any] = field(default_factory=dict)
    offered: dict[str, Any] = field(default_factory=dict)
    used: dict[str, Any] = field(default_factory=dict)
    token: Any = None
    """The request's `requestState`, verified when the handler first asks (None: none, or verified)."""


def _digest(arguments: Mapping[str, Any]) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def seal(key: bytes, payload: dict[str, Any]) -> str:
    """`payload` as base64url JSON, a dot, and its HMAC-SHA256 under `key`."""
    body = _b64(json.dumps(payload, separators=(",", ":")).encode())
    return f"{body}.{_b64(hmac.new(key, body.encode(), hashlib.sha256).digest())}"


def unseal(key: bytes, token: Any) -> dict[str, Any] | None:
    """The payload of a token `seal` made with `key`; None for anything else (changed, foreign, not a token)."""
    if not isinstance(token, str) or token.count(".") != 1:
        return None
    body, signature = token.split(".")
    try:
        expected = hmac.new(key, body.encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(_unb64(signature), expected):
            return None
        payload = json.loads(_unb64(body))
    except (binascii.Error, ValueError, UnicodeError):
        return None
    return payload if isinstance(payload, dict) else None


def begin_rounds(
    call: Call, request_id: Any, method: str, name: str, arguments: Mapping[str, Any], params: Mapping[str, Any]
) -> dict[str, Any] | None:
    """Check a 2026-07-28 request's `inputResponses` and keep them, with its `requestState` (verified when the
    handler asks, by `_verify`), for its handler; the JSON-RPC error when they are malformed (None when usable)."""
    if "inputResponses" not in params and "requestState" not in params:
        return None  # a first round: `asker` makes its Rounds only if the handler asks
    what = f"{method} {name}"
    offered = params.get("inputResponses", {})
    if not isinstance(offered, dict):
        return error_response(
            request_id,
            INVALID_PARAMS,
            f"Invalid params: {what}: inputResponses must be an object mapping the keys of the inputRequests "
            f"to the client's results, not {type(offered).__name__ if offered is not None else 'null'}",
        )
    for key, answer in offered.items():
        if not isinstance(answer, dict):
            return error_response(
                request_id,
                INVALID_PARAMS,
                f"Invalid params: {what}: inputResponses[{key!r}] must be an object (the client's result for that "
                f"input request), not {type(answer).__name__ if answer is not None else 'null'}",
            )
    # The requestState is verified when the handler asks for input: a handler that never asks (a replay answering
    # from its recording) is not refused for a state it does not read.
    token = params.get("requestState") if "requestState" in params else None
    call.rounds = Rounds(method, name, _digest(arguments), {}, dict(offered), token=token)
    return None


def _verify(call: Call, rounds: Rounds) -> None:
    """Take the answers of earlier rounds from the request's `requestState`; -32602 (raised) if it is not good."""
    token, rounds.token = rounds.token, None
    if token is None:
        return
    payload = unseal(call.state.input_key, token)
    problem = _state_problem(payload, rounds.method, rounds.name, rounds.digest)
    if problem is not None:
        call.record.error = f"requestState refused: {problem}"
        raise InputUnavailable(
            INVALID_PARAMS,
            f"Invalid params: {rounds.method} {rounds.name}: requestState {problem}; send the request again without "
            "requestState and inputResponses to start over",
        )
    assert payload is not None
    rounds.carried = dict(payload["a"])


def _state_problem(payload: dict[str, Any] | None, method: str, name: str, digest: str) -> str | None:
    if payload is None or not isinstance(payload.get("a"), dict) or not isinstance(payload.get("e"), (int, float)):
        return "failed its integrity check (it was changed, or this server did not issue it)"
    if payload["e"] < time.time():
        return f"has expired (a requestState is good for {STATE_TTL_S} s)"
    if (payload.get("m"), payload.get("n"), payload.get("d")) != (method, name, digest):
        return f"was issued for another request ({payload.get('m')} {payload.get('n')!r} with other arguments)"
    return None


def input_required(call: Call, request_id: Any, name: str, needed: InputNeeded) -> dict[str, Any]:
    """The InputRequiredResult that ends a round: the missing inputs, and the answers so far in a signed state."""
    rounds = call.rounds
    if rounds is None:  # a first round that asked: its Rounds was made by the asker
        raise RuntimeError("input_required without rounds")
    inputs = call.state.journal.inputs
    seq = call.record.seq
    requests = {}
    for key, request in needed.requests.items():
        asked = request.params()
        requests[key] = {"method": request.method, "params": asked}
        inputs.append(InputExchange(seq, name, request.method, key, asked, STATELESS))
    payload = {
        "m": rounds.method,
        "n": rounds.name,
        "d": rounds.digest,
        "a": {**rounds.carried, **rounds.used},
        "e": int(time.time()) + STATE_TTL_S,
    }
    token = seal(call.state.input_key, payload)
    result = {"resultType": "input_required", "inputRequests": requests, "requestState": token}
    return result_response(request_id, result)


async def prompt_with_input(
    call: Call, request_id: Any, params: dict[str, Any], prompt: ScriptedPrompt, given: dict[str, str]
) -> dict[str, Any]:
    """`prompts/get` of a prompt whose messages function takes a context, as a tool handler does: it may ask the
    client for input (in 2026-07-28 through InputRequiredResult rounds, as `tools/call`)."""
    name, era = prompt.name, call.era
    refused = era.begin_rounds(call, request_id, "prompts/get", name, given, params)
    if refused is not None:
        return refused
    context = ToolContext(
        tool=name,
        request_id=request_id,
        progress_token=None,
        _notify=call.notify,
        era=era.name,
        client_capabilities=era.capabilities(call),
        _ask=era.asker(call, name, "prompts/get", given),
    )
    messages: Any = prompt.messages
    try:
        made = messages(given, context)
        if inspect.isawaitable(made):
            made = await made
        return result_response(request_id, replace(prompt, messages=list(made)).get(given))
    except InputNeeded as needed:
        return input_required(call, request_id, name, needed)
    except JsonRpcError as exc:
        return error_response(request_id, exc.code, exc.message, exc.data)
    except Exception as exc:
        call.state.errors.append(exc)
        return error_response(request_id, INTERNAL_ERROR, f"prompt {name!r} raised {handler_raised(exc)}")


def rounds_asker(call: Call, name: str, method: str, arguments: Mapping[str, Any]) -> AskInput:
    """How a handler asks for input in 2026-07-28: from the answers of earlier rounds, ending its round with an
    `InputRequiredResult` for what it lacks (or, running as a task, through `tasks/update`)."""

    async def ask_in_rounds(requests: dict[str, InputRequest]) -> dict[str, Any]:
        if running_task() is not None:
            return await _ask_in_task(call, name, requests)
        if call.rounds is None:
            call.rounds = Rounds(method, name, _digest(arguments))
        _verify(call, call.rounds)
        return _from_rounds(call, name, call.rounds, requests)

    return ask_in_rounds


def requests_asker(call: Call, name: str, method: str, arguments: Mapping[str, Any]) -> AskInput:
    """How a handler asks for input in the handshake era: server-to-client requests on the call's own stream."""

    async def ask_the_client(requests: dict[str, InputRequest]) -> dict[str, Any]:
        return await _ask_client(call, name, requests)

    return ask_the_client


def _refuse_undeclared(call: Call, name: str, requests: Mapping[str, InputRequest]) -> None:
    era = call.era
    declared = era.capabilities(call)
    lacking = sorted({r.capability for r in requests.values() if r.capability not in declared})
    if not lacking:
        return
    raise InputUnavailable(
        era.undeclared_code,
        f"{name!r} asked the client for {', '.join(lacking)}, which the client did not declare in {era.declared_in}; "
        "check ctx.client_capabilities before asking",
        {"requiredCapabilities": {capability: {} for capability in lacking}},
    )


def _from_rounds(call: Call, name: str, rounds: Rounds, requests: dict[str, InputRequest]) -> dict[str, Any]:
    _refuse_undeclared(call, name, requests)
    inputs = call.state.journal.inputs
    answers: dict[str, Any] = {}
    missing: dict[str, InputRequest] = {}
    for key, request in requests.items():
        fresh = key in rounds.offered
        if not fresh and key not in rounds.carried:
            missing[key] = request
            continue
        answer = rounds.offered[key] if fresh else rounds.carried[key]
        problem = answer_problem(request, answer)
        if fresh and key not in rounds.used:
            exchange = inputs.latest(name, request.method, key)
            if exchange is None:  # answered before it was asked (a client that knew the key)
                asked = request.params()
                exchange = InputExchange(call.record.seq, name, request.method, key, asked, STATELESS)
                inputs.append(exchange)
            exchange.answer, exchange.answered_seq, exchange.error = answer, call.record.seq, problem
        if problem is not None:
            raise InputUnavailable(INVALID_PARAMS, f"Invalid params: inputResponses[{key!r}]: {problem}")
        answers[key] = rounds.used[key] = answer
    if missing:
        raise InputNeeded(missing)
    return answers


async def _ask_in_task(call: Call, name: str, requests: dict[str, InputRequest]) -> dict[str, Any]:
    """A ctx input request of a tool running as a task (2026-07-28): the task is `input_required` with them, the
    client answers with `tasks/update`, each answer checked as a round's is."""
    _refuse_undeclared(call, name, requests)
    inputs = call.state.journal.inputs
    exchanges = {}
    for key, request in requests.items():
        exchanges[key] = InputExchange(call.record.seq, name, request.method, key, request.params(), STATELESS)
        inputs.append(exchanges[key])
    asked = {key: {"method": exchange.method, "params": exchange.params} for key, exchange in exchanges.items()}
    answers = {}
    for key, (answer, seq) in (await ask_task(asked)).items():
        exchange = exchanges[key]
        answers[key] = exchange.answer = answer
        exchange.answered_seq = seq
        exchange.error = answer_problem(requests[key], answer)
        if exchange.error is not None:
            raise InputUnavailable(INVALID_PARAMS, f"Invalid params: tasks/update inputResponses: {exchange.error}")
    return answers


@dataclass(eq=False)
class _Waiting:
    """A server-to-client request of the handshake era waiting for the client's response."""

    exchange: InputExchange
    done: anyio.Event = field(default_factory=anyio.Event)
    error: dict[str, Any] | None = None


async def _ask_client(call: Call, name: str, requests: dict[str, InputRequest]) -> dict[str, Any]:
    session, send = call.session, call.to_client
    if session is None or send is None:
        raise InputUnavailable(
            INVALID_REQUEST, f"{name!r} asked the client for input, but this request has no stream to ask it on"
        )
    _refuse_undeclared(call, name, requests)
    inputs = call.state.journal.inputs
    waiting: dict[str, tuple[str, _Waiting]] = {}
    for key, request in requests.items():
        request_id = f"mcp-testkit-input-{next(_IDS)}"
        exchange = InputExchange(call.record.seq, name, request.method, key, request.params(), HANDSHAKE)
        inputs.append(exchange)
        waiting[key] = (request_id, _Waiting(exchange))
        session.waiting[request_id] = waiting[key][1]
    timeout = call.state.input_timeout_s
    try:
        for request_id, slot in waiting.values():
            message = {"jsonrpc": "2.0", "id": request_id, "method": slot.exchange.method}
            await send({**message, "params": slot.exchange.params})
        with anyio.move_on_after(timeout):
            for _, slot in waiting.values():
                await slot.done.wait()
        late = [(request_id, slot) for request_id, slot in waiting.values() if not slot.done.is_set()]
        if late:
            for request_id, slot in late:
                slot.exchange.error = f"no answer within {timeout} s"
                reason = f"mcp-testkit: no answer within {timeout} s (input_timeout_s)"
                params = {"requestId": request_id, "reason": reason}
                await send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
            methods = ", ".join(slot.exchange.method for _, slot in late)
            raise InputUnavailable(
                REQUEST_TIMEOUT,
                f"the client did not answer {methods} of {name!r} within {timeout} s "
                "(TestMcpServer.input_timeout_s bounds the wait)",
            )
    finally:
        for request_id, _ in waiting.values():
            session.waiting.pop(request_id, None)
    answers = {}
    for key, (_, slot) in waiting.items():
        exchange = slot.exchange
        if slot.error is not None:
            code, text = slot.error.get("code"), slot.error.get("message")
            exchange.error = f"the client answered with error {code}: {text}"
            raise InputUnavailable(
                code if isinstance(code, int) else INVALID_REQUEST,
                f"the client answered {exchange.method} of {name!r} with an error: {text}",
            )
        exchange.error = answer_problem(requests[key], exchange.answer)
        if exchange.error is not None:
            problem = f"the client's answer to {exchange.method}: {exchange.error}"
            raise InputUnavailable(INVALID_PARAMS, f"Invalid params: {problem}")
        answers[key] = exchange.answer
    return answers


def answer_arrived(session: Session | None, message: dict[str, Any], record: Record) -> str | None:
    """Hand a client's JSON-RPC response to the input request waiting for it; why it was ignored, for the journal.

    The referee judges the result against the model of the request it answers (its violations go on `record`).
    """
    seq = record.seq
    request_id = message.get("id")
    slot = session.waiting.pop(request_id, None) if session is not None else None
    if not isinstance(slot, _Waiting):
        return f"ignored: a response to {request_id!r}, which names no input request of this session still waiting"
    for violation in judge_result(slot.exchange.method, record.era, record.protocol_version, message):
        record.note(violation)
    error = message.get("error")
    if error is not None:
        slot.error = error if isinstance(error, dict) else {"message": str(error)}
    slot.exchange.answer = message.get("result")
    slot.exchange.answered_seq = seq
    slot.done.set()
    return None


def answer_problem(request: InputRequest, answer: Any) -> str | None:
    """Why `answer` is not a valid result for `request` (its shape, an elicitation's content against its schema)."""
    if not isinstance(answer, dict):
        return f"the answer must be an object, not {type(answer).__name__}"
    check: Callable[[Any, dict[str, Any]], str | None] = _CHECKS[request.method]
    return check(request, answer)


def _elicit_problem(request: Any, answer: dict[str, Any]) -> str | None:
    action = answer.get("action")
    if action not in ("accept", "decline", "cancel"):
        return f"an ElicitResult's action must be accept, decline or cancel, not {action!r}"
    content = answer.get("content")
    if action != "accept" or content is None:
        return None
    if not isinstance(content, dict):
        return f"an ElicitResult's content must be an object, not {type(content).__name__}"
    from mcp_testkit._wire.validation import argument_problem, build_validator

    try:
        validator = build_validator("elicitation", request.schema)
    except ValueError:
        return None  # a schema the validator will not serve: the tool asked for it, the tool reads the content
    problem = argument_problem("elicitation", validator, content)
    if problem is None:
        return None
    problem = problem.replace("invalid arguments for tool 'elicitation' ", "", 1)
    return f"the content does not match the requested schema: {problem}"


def _sample_problem(request: Any, answer: dict[str, Any]) -> str | None:
    if answer.get("role") not in ("assistant", "user") or not isinstance(answer.get("content"), (dict, list)):
        return "a CreateMessageResult needs a role and content (a content block or a list of them)"
    return None


def _roots_problem(request: Any, answer: dict[str, Any]) -> str | None:
    roots = answer.get("roots")
    if not isinstance(roots, list) or not all(isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots):
        return "a ListRootsResult needs roots, a list of objects each with a uri"
    return None


_CHECKS: dict[str, Callable[[Any, dict[str, Any]], str | None]] = {
    "elicitation/create": _elicit_problem,
    "sampling/createMessage": _sample_problem,
    "roots/list": _roots_problem,
}
