"""A JSON scenario's tool that asks the client for input: its `asks`, and a `returns` that uses the answers.

```json
{"name": "book",
 "asks": [{"key": "date", "elicit": {"message": "Which date?", "schema": {"type": "object", ...}}}],
 "returns": "booked {date.content.date} for {arguments.guest}"}
```

Each ask is asked in turn, as `ctx.elicit`, `ctx.sample` and `ctx.list_roots` ask (one round each in 2026-07-28).
`{key.path}` in the answer's strings (and in a later ask's) stands for a part of that ask's answer as the client
sent it (`{date.action}`, `{date.content.date}`, `{note.content.text}`, `{where.roots.0.uri}`), `{arguments.name}`
for a tool argument; a part the answer lacks (a declined form's content) is the empty string, and any other value
its JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mcp_testkit.scenario._document import join, strings

__all__ = ["ARGUMENTS", "AskError", "asking_handler", "check_asks"]

ARGUMENTS = "arguments"
"""The placeholder root that names the tool's arguments, so no ask may take it as its key."""
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z0-9_\-]+)*)\}")
"""`{key}` or `{key.path.to.value}`; `{{` and `}}` stand for a literal brace, as in `str.format`."""


class AskError(ValueError):
    """A bad `asks` or placeholder; the message starts with the field's path."""


def check_asks(asks: Sequence[Mapping[str, Any]], returns: Any, where: str) -> list[str]:
    """The asks' keys, once checked with the placeholders of `returns`; AskError naming the field otherwise."""
    keys: list[str] = []
    for index, ask in enumerate(asks):
        key = ask["key"]
        at = join(where, f"asks/{index}/key")
        if key == ARGUMENTS:
            raise AskError(f"{at}: {ARGUMENTS!r} names the tool's arguments in placeholders; choose another key")
        if key in keys:
            raise AskError(f"{at}: key {key!r} is used twice; each ask needs its own key")
        keys.append(key)
    for index, ask in enumerate(asks):  # an ask may use the arguments and the answers before it
        kind = next(kind for kind in ("elicit", "sample", "roots") if kind in ask)
        _check_placeholders(ask[kind], keys[:index], join(where, f"asks/{index}/{kind}"))
    _check_placeholders(returns, keys, join(where, "returns"))
    return keys


def _check_placeholders(value: Any, keys: Sequence[str], where: str) -> None:
    known = {*keys, ARGUMENTS}
    for text in strings(value):
        for found in _PLACEHOLDER.finditer(text):
            if found[1] is not None and found[1] not in known:
                raise AskError(
                    f"{where}: {{{found[1]}{found[2]}}} names no ask before it (the asks' keys: "
                    f"{', '.join(keys) or 'none'}; or {ARGUMENTS}.NAME for a tool argument); write {{{{ and }}}} for "
                    "a literal brace"
                )


def asking_handler(asks: Sequence[Mapping[str, Any]], returns: Any, answer: Callable[[Any], Any]) -> Callable[..., Any]:
    """A tool handler that asks each of `asks` in turn, then answers `answer(returns with the answers put in)`."""
    from mcp_testkit.tools import Elicit, ListRoots, Sample

    def request(ask: Mapping[str, Any]) -> Any:
        if "elicit" in ask:
            return Elicit(ask["elicit"]["message"], dict(ask["elicit"]["schema"]))
        if "sample" in ask:
            sample = dict(ask["sample"])
            messages, max_tokens = sample.pop("messages"), sample.pop("maxTokens")
            return Sample(messages, max_tokens, sample)
        return ListRoots()

    async def handler(arguments: dict[str, Any], ctx: Any) -> Any:
        values: dict[str, Any] = {ARGUMENTS: arguments}
        for ask in asks:
            values.update(await ctx.ask({ask["key"]: request(_filled(ask, values))}))
        return answer(_filled(returns, values))

    return handler


def _part(values: Mapping[str, Any], root: str, path: str) -> str:
    value: Any = values.get(root)
    for step in path.split(".")[1:]:
        if isinstance(value, dict):
            value = value.get(step)
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            value = None
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _filled(value: Any, values: Mapping[str, Any]) -> Any:
    """`value` with each placeholder of its strings replaced (`{{` and `}}` by one brace)."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: _part(values, m[1], m[2]) if m[1] is not None else m[0][0], value)
    if isinstance(value, dict):
        return {key: _filled(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_filled(item, values) for item in value]
    return value
