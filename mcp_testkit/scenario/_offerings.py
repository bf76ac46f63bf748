"""What a JSON scenario offers besides tools: resources, resource templates, prompts and completion values, each
built (and checked) when the scenario is read and scripted on the server when it is applied.

A resource's, a template's or a prompt's text may hold `{name}` placeholders, replaced by a template parameter's or
a prompt argument's value; `{{` and `}}` stand for a literal brace, as in `str.format`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_testkit.scenario._document import ScenarioError, check_block, join, strings, validate

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = ["OFFERING_KINDS", "Offer", "add_offering", "offer", "offerings_of"]

OFFERING_KINDS = {
    "resources": "resource",
    "resource_templates": "resourceTemplate",
    "prompts": "prompt",
    "completions": "completion",
}
"""The keys of a JSON scenario for what a server offers besides tools, and the schema definition of one item."""
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""`{name}` in a scenario's text: replaced by a prompt argument's or a template parameter's value; `{{` and `}}`
stand for a literal brace, as in `str.format`."""
Offer = Callable[["TestMcpServer"], dict[str, Any]]
"""Scripts one item on a server, and returns what the server now offers for it, as its listing shows it."""


def add_offering(server: TestMcpServer, key: str, data: Any) -> dict[str, Any]:
    """Add (or replace) the resource, template, prompt or completion values a JSON object describes, `key` being
    its scenario key (`resources`, `resource_templates`, `prompts`, `completions`); returns what the server
    now offers for it, as its listing shows it."""
    validate(data, OFFERING_KINDS[key])
    return offer(key, data, "")(server)


def offerings_of(data: Mapping[str, Any]) -> list[Offer]:
    """What a scenario offers besides tools, each item built (and checked) now and scripted on apply."""
    return [
        offer(key, item, f"{key}/{index}") for key in OFFERING_KINDS for index, item in enumerate(data.get(key, ()))
    ]


def offer(key: str, data: Mapping[str, Any], where: str) -> Offer:
    build = {"resources": _resource, "resource_templates": _template, "prompts": _prompt, "completions": _completion}
    return build[key](data, where)


def _content(data: Mapping[str, Any], where: str) -> str | bytes:
    """A resource's or template's `text`, or its `blob` decoded from base64."""
    if "text" in data:
        return str(data["text"])
    try:
        return base64.b64decode(data["blob"], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ScenarioError(f"{join(where, 'blob')}: not base64 ({exc}); give the bytes in base64, or text") from None


def _described(data: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": data.get("name"), "title": data.get("title"), "description": data.get("description")}


def _resource(data: Mapping[str, Any], where: str) -> Offer:
    content = _content(data, where)
    text, blob = (content, None) if isinstance(content, str) else (None, content)

    def offer(server: TestMcpServer) -> dict[str, Any]:
        uri, mime_type, described = data["uri"], data.get("mimeType"), _described(data)
        known = server.offerings.resources.get(uri)
        if known is not None and (known.mime_type, known.title, known.description) == (
            mime_type, described["title"], described["description"]
        ) and described["name"] in (None, known.name):  # fmt: skip
            return server.update_resource(uri, text=text, blob=blob).definition  # its content only: subscribers hear
        return server.resource(uri, text=text, blob=blob, mime_type=mime_type, **described).definition

    return offer


def _template(data: Mapping[str, Any], where: str) -> Offer:
    from mcp_testkit.resources import ScriptedTemplate

    uri_template = data["uriTemplate"]
    try:
        parameters = ScriptedTemplate(uri_template, uri_template, lambda params: "").parameters
    except ValueError as exc:
        raise ScenarioError(f"{join(where, 'uriTemplate')}: {exc}") from None
    content = _content(data, where)
    if isinstance(content, str):
        _check_placeholders(content, parameters, join(where, "text"), f"parameter of template {uri_template!r}")

    def reads(params: dict[str, str]) -> str | bytes:
        return _substituted(content, params) if isinstance(content, str) else content

    def offer(server: TestMcpServer) -> dict[str, Any]:
        described = _described(data)
        scripted = server.resource_template(uri_template, reads=reads, mime_type=data.get("mimeType"), **described)
        return scripted.definition

    return offer


def _prompt(data: Mapping[str, Any], where: str) -> Offer:
    name = data["name"]
    arguments = [dict(argument) for argument in data.get("arguments", ())]
    names = [argument["name"] for argument in arguments]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ScenarioError(f"{join(where, 'arguments')}: argument {twice[0]!r} is declared twice")
    messages = [dict(message) for message in data["messages"]]
    for index, message in enumerate(messages):
        at = join(where, f"messages/{index}/content")
        if isinstance(message["content"], dict):
            check_block(message["content"], at)
        _check_placeholders(message["content"], names, at, f"argument of prompt {name!r}")

    def made(given: dict[str, str]) -> list[dict[str, Any]]:
        values = {argument: given.get(argument, "") for argument in names}
        return [_substituted(message, values) for message in messages]

    def offer(server: TestMcpServer) -> dict[str, Any]:
        scripted = server.prompt(
            name, messages=made, arguments=arguments, description=data.get("description"), title=data.get("title")
        )
        return scripted.definition

    return offer


def _completion(data: Mapping[str, Any], where: str) -> Offer:
    kind = "prompt" if "prompt" in data else "resource_template"
    target, argument, values = data[kind], data["argument"], list(data["values"])

    def offer(server: TestMcpServer) -> dict[str, Any]:
        offerings = server.offerings
        if kind == "prompt":
            prompt = offerings.prompts.get(target)
            what, there = "prompt", list(offerings.prompts)
            names = None if prompt is None else [str(a.get("name")) for a in prompt.arguments]
        else:
            template = offerings.templates.get(target)
            what, there = "resource template", list(offerings.templates)
            names = None if template is None else template.parameters
        if names is None:
            raise ScenarioError(
                f"{join(where, kind)}: the server offers no {what} {target!r} "
                f"(it offers: {', '.join(there) or 'none'}); script it before its completion values"
            )
        if argument not in names:
            raise ScenarioError(
                f"{join(where, 'argument')}: {argument!r} is no argument of {what} {target!r} "
                f"(it has: {', '.join(names) or 'none'})"
            )
        server.complete(argument=argument, values=values, **{kind: target})
        ref = {"type": "ref/prompt", "name": target} if kind == "prompt" else {"type": "ref/resource", "uri": target}
        return {"ref": ref, "argument": argument, "values": values}

    return offer


def _check_placeholders(value: Any, names: Iterable[str], where: str, what: str) -> None:
    """ScenarioError naming the first `{name}` in `value`'s strings that is not one of `names` (a typo, likely)."""
    known = set(names)
    for text in strings(value):
        for found in _PLACEHOLDER.finditer(text):
            if found[1] is not None and found[1] not in known:
                raise ScenarioError(
                    f"{where}: {{{found[1]}}} is no {what} (there are: {', '.join(sorted(known)) or 'none'}); "
                    "write {{ and }} for a literal brace"
                )


def _substituted(value: Any, values: Mapping[str, str]) -> Any:
    """`value` with each `{name}` of its strings replaced by its value (`{{` and `}}` by one brace)."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]) if m[1] is not None else m[0][0], value)
    if isinstance(value, dict):
        return {key: _substituted(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, values) for item in value]
    return value
