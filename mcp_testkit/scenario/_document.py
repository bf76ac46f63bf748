"""A JSON scenario as a document: decoded as strictly as the wire, checked against `scenario.schema.json`, and its
errors naming the field by its path (`tools/0/annotations/readOnlyHint`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["MAX_DEPTH", "ScenarioError", "check_block", "decode", "join", "path_of", "scenario_schema", "strings"]

MAX_DEPTH = 160
"""The deepest nesting of a scenario document: a message's bound (128) and room for the file's envelope."""


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the file and the bad field."""


@functools.lru_cache(maxsize=1)
def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a JSON scenario (`mcp_testkit/scenario/scenario.schema.json`)."""
    text = Path(__file__).with_name("scenario.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate(data: Any, definition: str | None = None, *, at: str = "") -> None:
    """Check `data` against the scenario schema (or one of its `$defs`); ScenarioError naming the field.

    `at` is the path of `data` inside a larger document, put in front of the field's path.
    """
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    schema = scenario_schema()
    if definition is not None:
        schema = {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    error = best_match(Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        message = error.message
        if error.validator == "oneOf" and isinstance(error.schema, dict) and "description" in error.schema:
            message += f"; expected {error.schema['description'][0].lower()}{error.schema['description'][1:]}"
        raise ScenarioError(f"{join(at, path_of(error.absolute_path)) or '(top level)'}: {message}")


def decode(data: bytes, source: str) -> Any:
    """A scenario document's JSON, decoded as strictly as a message on the wire (UTF-8, no NaN or Infinity,
    bounded nesting); ScenarioError naming the source and the field where it is refused."""
    from mcp_testkit._wire.strict_json import JsonError, loads, where_refused

    try:
        return loads(data, "file", max_depth=MAX_DEPTH)
    except JsonError as exc:
        field = where_refused(data.decode("utf-8", "replace"), MAX_DEPTH)
        raise ScenarioError(f"scenario {source}: {f'{field}: ' if field else ''}not valid JSON: {exc}") from None


def check_block(block: Mapping[str, Any], where: str) -> None:
    """ScenarioError naming the field when a content block (of an answer, or a prompt's message) is not one the MCP
    types accept."""
    import mcp_types
    from pydantic import ValidationError

    model: Any = {
        "text": mcp_types.TextContent,
        "image": mcp_types.ImageContent,
        "audio": mcp_types.AudioContent,
        "resource_link": mcp_types.ResourceLink,
        "resource": mcp_types.EmbeddedResource,
    }[block["type"]]
    try:
        model.model_validate(block)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ScenarioError(f"{join(where, path_of(first['loc']))}: {first['msg']}") from None


def strings(value: Any) -> Iterable[str]:
    """Every string in a JSON value, the keys of its objects left out."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def path_of(parts: Any) -> str:
    """A field's path from its parts: `tools/0/name`."""
    return "/".join(str(part) for part in parts)


def join(where: str, more: str) -> str:
    """The path `more` inside the field at `where` (either may be empty)."""
    return "/".join(part for part in (where, more) if part)
