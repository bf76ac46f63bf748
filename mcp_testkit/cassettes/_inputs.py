"""Input rounds in cassettes: a recorded call's input requests linked to the answers the client gave, and asked
again by a replay.

- Handshake era: each input request is a server-to-client request among the call's `events`; the client's answer is
  an exchange of its own (a POST, or a stdio line) whose request is the JSON-RPC response with that id, in the same
  session.
- 2026-07-28: a round that ends asking is a `tools/call` answered `input_required` (`inputRequests`, `requestState`);
  the retry carries `inputResponses` and echoes the `requestState`, which links the rounds. Every round but the last
  gets `next_round`, and the last (the one that completes) holds the inputs.

Either way the completed call's exchange gets `inputs`: `{round, key, method, params, answer}`, the same in both
eras, so that a replay asks the same questions in whichever era its client speaks (minting its own `requestState`:
the recorded one is signed by the upstream) and answers the recorded result only when the answers match.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from mcp_testkit.cassettes._calls import RecordedCall
from mcp_testkit.cassettes._matching import arguments_match
from mcp_testkit.tools import Elicit, ListRoots, Sample, ToolContext
from mcp_testkit.upstream import Exchange

__all__ = ["UnmatchedInput", "ask_recorded", "link_inputs"]

_KINDS = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}


class UnmatchedInput(AssertionError):
    """A replayed call's client answered an input request otherwise than the recorded client did."""

    def __init__(self, source: str, call: RecordedCall, asked: Mapping[str, Any], difference: str) -> None:
        self.tool = call.tool
        self.key = str(asked.get("key"))
        super().__init__(
            f"cassette {source}: {call.describe()} asked {asked.get('method')} ({self.key!r}) and the client answered "
            f"otherwise than when it was recorded: {difference}; answer as recorded, or record the cassette again"
        )


def link_inputs(exchanges: list[Exchange]) -> list[Exchange]:
    """`exchanges` with each completed `tools/call` holding its input rounds (`inputs`), and each 2026-07-28 round
    that ended asking pointing at its retry (`next_round`); derived again from the messages on every call."""
    linked = [dataclasses.replace(e, inputs=[], next_round=None) if e.inputs or e.next_round else e for e in exchanges]
    answers: dict[tuple[Any, str], Any] = {}
    retries: dict[str, Exchange] = {}
    for exchange in linked:
        request = exchange.request
        if isinstance(request, dict) and "method" not in request and "id" in request and "result" in request:
            answers.setdefault((exchange.session, json.dumps(request["id"])), request["result"])
        state = exchange.params.get("requestState") if exchange.method == "tools/call" else None
        if isinstance(state, str):
            retries.setdefault(state, exchange)
    for exchange in linked:
        if exchange.method == "tools/call" and exchange.events:
            exchange.inputs = _asked_on_stream(exchange, answers)
    for exchange in linked:
        if exchange.method == "tools/call" and "requestState" not in exchange.params and _asks(exchange):
            _link_rounds(exchange, retries)
    return linked


def _asks(exchange: Exchange) -> bool:
    result = exchange.result
    return result is not None and result.get("resultType") == "input_required"


def _asked_on_stream(exchange: Exchange, answers: Mapping[tuple[Any, str], Any]) -> list[dict[str, Any]]:
    """The handshake era's input requests of a call and the answers its client POSTed; none unless all were
    answered with a result (a call whose client failed to answer replays its recorded answer as it is)."""
    asked = [m for m in exchange.events if isinstance(m, dict) and m.get("method") in _KINDS and "id" in m]
    counts: Counter[str] = Counter()
    inputs = []
    for number, message in enumerate(asked, 1):
        answer = answers.get((exchange.session, json.dumps(message["id"])))
        if not isinstance(answer, dict):
            return []
        kind = _KINDS[message["method"]]
        counts[kind] += 1
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        inputs.append({"round": number, "key": f"{kind}-{counts[kind]}", "method": message["method"],
                       "params": params, "answer": answer})  # fmt: skip
    return inputs


def _link_rounds(first: Exchange, retries: Mapping[str, Exchange]) -> None:
    """Follow a 2026-07-28 call's rounds by their `requestState` to the one that completed, and give that the
    inputs; rounds that never completed stay as they are."""
    rounds = [first]
    while _asks(rounds[-1]):
        state = (rounds[-1].result or {}).get("requestState")
        retry = retries.get(state) if isinstance(state, str) else None
        if retry is None or retry in rounds or retry.params.get("name") != first.params.get("name"):
            return
        rounds.append(retry)
    if rounds[-1].result is None and rounds[-1].rpc_error is None:
        return
    inputs = []
    for number, (asking, retry) in enumerate(itertools.pairwise(rounds), 1):
        requests = (asking.result or {}).get("inputRequests") or {}
        given = retry.params.get("inputResponses") or {}
        for key, request in requests.items():
            answer = given.get(key) if isinstance(given, dict) else None
            if isinstance(request, dict) and request.get("method") in _KINDS and isinstance(answer, dict):
                params = request.get("params") if isinstance(request.get("params"), dict) else {}
                inputs.append({"round": number, "key": key, "method": request["method"], "params": params,
                               "answer": answer})  # fmt: skip
        asking.next_round = retry.seq
    rounds[-1].inputs = inputs


# -- replaying ----------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _RecordedElicit(Elicit):
    """An elicitation as recorded: its other parameters (`mode`, `_meta`...) sent again as they were."""

    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        return {**self.extra, **super().params()}


def _request(method: str, params: Mapping[str, Any]) -> Any:
    if method == "elicitation/create":
        extra = {key: value for key, value in params.items() if key not in ("message", "requestedSchema")}
        return _RecordedElicit(str(params.get("message", "")), dict(params.get("requestedSchema") or {}), extra)
    if method == "sampling/createMessage":
        extra = {key: value for key, value in params.items() if key not in ("messages", "maxTokens")}
        return Sample(list(params.get("messages") or []), int(params.get("maxTokens") or 1), extra)
    return ListRoots()


async def ask_recorded(call: RecordedCall, context: ToolContext, source: str) -> None:
    """Ask the client what the recorded call asked, round by round; UnmatchedInput naming the first difference
    between an answer and the recorded one (a redacted recorded value matches any text)."""
    rounds: dict[int, list[Mapping[str, Any]]] = {}
    for asked in call.inputs:
        rounds.setdefault(int(asked["round"]), []).append(asked)
    for number in sorted(rounds):
        requests = {str(asked["key"]): _request(str(asked["method"]), asked["params"]) for asked in rounds[number]}
        answers = await context.ask(requests)
        for asked in rounds[number]:
            difference = _difference(asked["answer"], answers.get(str(asked["key"])), "")
            if difference is not None:
                raise UnmatchedInput(source, call, asked, difference)


def _difference(recorded: Any, given: Any, at: str) -> str | None:
    """Where `given` first differs from `recorded` (`_meta` aside), as `content.date: recorded '...', got '...'`."""
    if isinstance(recorded, dict) and isinstance(given, dict):
        for key in sorted({*recorded, *given} - {"_meta"}):
            where = f"{at}.{key}" if at else key
            if key not in given:
                return f"{where}: recorded {_short(recorded[key])}, got nothing"
            if key not in recorded:
                return f"{where}: not recorded, got {_short(given[key])}"
            found = _difference(recorded[key], given[key], where)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(given, list) and len(recorded) == len(given):
        for index, (old, new) in enumerate(zip(recorded, given, strict=True)):
            found = _difference(old, new, f"{at}.{index}" if at else str(index))
            if found is not None:
                return found
        return None
    if arguments_match(recorded, given):
        return None
    return f"{at or 'the answer'}: recorded {_short(recorded)}, got {_short(given)}"


def _short(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
