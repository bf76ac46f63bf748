"""Result guardrails: named checks of what a server's tool answered, before the caller is given it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, TypeAlias

from mcp_testkit.bridge._errors import MCPResultWithheld

if TYPE_CHECKING:
    from mcp_testkit.bridge._tool import BridgeTool

__all__ = ["ResultGuardrail", "check_guardrails", "screen_result"]

ResultGuardrail: TypeAlias = Callable[[str, str], "str | Awaitable[str | None] | None"]
"""``(tool, text) -> reason | None``: a reason withholds the result; ``tool`` is the pool's ``server.tool``."""


def check_guardrails(guardrails: Mapping[str, ResultGuardrail] | None) -> dict[str, ResultGuardrail]:
    """Refuse, when the pool is built, a guardrail without a name or that cannot be called."""
    if guardrails is None:
        return {}
    if not isinstance(guardrails, Mapping):
        raise TypeError("result_guardrails takes a mapping of names to functions (tool, text) -> reason | None")
    for name, guardrail in guardrails.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"result_guardrails: a guardrail's name must be a non-empty str, not {name!r}")
        if not callable(guardrail):
            raise TypeError(f"result guardrail {name!r} is not callable; give a function (tool, text) -> reason | None")
    return dict(guardrails)


async def _verdict(guardrail: ResultGuardrail, tool: str, text: str) -> object:
    answer: object = guardrail(tool, text)
    if inspect.isawaitable(answer):
        answer = await answer
    return answer


async def screen_result(guardrails: Mapping[str, ResultGuardrail], tool: BridgeTool, text: str) -> str:
    """``text`` if every guardrail lets it through, in order; else ``MCPResultWithheld`` naming the first that did not.

    A guardrail that raises, or answers something that is neither a reason nor None, withholds the
    result too: a check that cannot say yes has not said yes. Its exception is chained, never quoted,
    since its message may repeat the text it was shown.
    """
    for name, guardrail in guardrails.items():
        try:
            answer = await _verdict(guardrail, tool.name, text)
        except Exception as exc:
            raise MCPResultWithheld(tool.server, tool.name, name, f"the guardrail raised {type(exc).__name__}") from exc
        if answer is None:
            continue
        if isinstance(answer, str):
            raise MCPResultWithheld(tool.server, tool.name, name, answer or "the guardrail gave an empty reason")
        raise MCPResultWithheld(
            tool.server, tool.name, name, f"the guardrail answered a {type(answer).__name__}, neither a reason nor None"
        )
    return text
