"""The bridge's answers to a tool's input requests (elicitation, sampling, roots), through the application's handler.

`ToolPool(input_handler=...)` gives an async function of an `InputRequested`, returning the client's result
(`{"action": "accept", "content": {...}}`, a `CreateMessageResult`, `{"roots": [...]}`). With one, the bridge
declares the elicitation, sampling and roots capabilities and answers: in the handshake era each server-to-client
request on the call's stream (POSTed back, or written on stdio); in 2026-07-28 each `InputRequiredResult` round, by
retrying the call with `inputResponses` and the echoed `requestState`. Without one it declares none, and a call
that needs input fails with `MCPInputRequired`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "INPUT_CAPABILITIES",
    "MAX_INPUT_ROUNDS",
    "AskInput",
    "InputHandler",
    "InputRequested",
    "NoInputHandler",
    "answer_request",
    "answer_round",
    "bind",
]

INPUT_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
INPUT_CAPABILITIES: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
"""What a bridge with an input handler declares it can answer."""
MAX_INPUT_ROUNDS = 10
"""InputRequiredResult rounds of one call before the bridge gives up on a server that keeps asking."""

logger = logging.getLogger("mcp_testkit.bridge")


@dataclass(frozen=True)
class InputRequested:
    """A tool's request for input, as the pool's `input_handler` is given it."""

    server: str
    tool: str
    method: str
    """`elicitation/create`, `sampling/createMessage` or `roots/list`."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """The request's params as the server sent them (`message` and `requestedSchema` for an elicitation...)."""
    key: str | None = None
    """The key of the request in its `InputRequiredResult` (2026-07-28); None in the handshake era."""

    @property
    def kind(self) -> str:
        """`elicit`, `sample` or `roots`."""
        return {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}.get(
            self.method, self.method
        )


InputHandler = Callable[[InputRequested], Awaitable[Mapping[str, Any]]]
"""The application's answer to an input request: the client's result for it."""

AskInput = Callable[[str, str, Mapping[str, Any], "str | None"], Awaitable[Mapping[str, Any]]]
"""An input handler bound to its server: (tool, method, params, key) -> the result."""


class NoInputHandler(Exception):
    """A call needs input and the pool has no `input_handler` (the link raises `MCPInputRequired`)."""

    def __init__(self, tool: str, methods: list[str]) -> None:
        super().__init__(", ".join(methods))
        self.tool = tool
        self.methods = methods


def bind(handler: InputHandler | None, server: str) -> AskInput | None:
    """`handler` for the sessions of one server."""
    if handler is None:
        return None

    async def ask(tool: str, method: str, params: Mapping[str, Any], key: str | None) -> Mapping[str, Any]:
        return await handler(InputRequested(server, tool, method, dict(params), key))

    return ask


async def answer_request(ask: AskInput | None, tool: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON-RPC response to a server-to-client request of the handshake era: the handler's result, `{}` to a
    ping, or an error (no handler, a method that is no input request, a handler that raised)."""
    method = request.get("method")
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
    if method == "ping":
        return {**reply, "result": {}}
    if ask is None or method not in INPUT_METHODS:
        return {**reply, "error": {"code": -32601, "message": f"Method not found: {method!s:.100}"}}
    params = request.get("params")
    try:
        result = await ask(tool, str(method), params if isinstance(params, Mapping) else {}, None)
    except Exception as exc:
        logger.warning("the input handler failed on %s of tool %r: %s", method, tool, type(exc).__name__)
        failed = f"the client's input handler failed ({type(exc).__name__})"
        return {**reply, "error": {"code": -32603, "message": failed}}
    return {**reply, "result": dict(result)}


async def answer_round(ask: AskInput | None, tool: str, requests: Any) -> dict[str, Any]:
    """The `inputResponses` of a 2026-07-28 retry: the handler's result for each of the round's `inputRequests`."""
    if not isinstance(requests, Mapping):
        requests = {}
    if ask is None:
        raise NoInputHandler(tool, sorted({str(r.get("method")) for r in requests.values() if isinstance(r, Mapping)}))
    answers = {}
    for key, request in requests.items():
        if not isinstance(request, Mapping):
            continue
        params = request.get("params")
        answers[str(key)] = dict(
            await ask(tool, str(request.get("method")), params if isinstance(params, Mapping) else {}, str(key))
        )
    return answers
