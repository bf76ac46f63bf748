"""Scenario files for `mcp-testkit serve --scenario FILE`: a Python file or a JSON document.

A Python scenario defines `def scenario(server): ...` and has the whole Python API; it may also
define `server_options`, a dict of `TestMcpServer` keyword arguments. A JSON scenario holds the
server's settings, tools with static answers, resources, resource templates, prompts, completion values,
required headers and fault rules (in the form `Rule.to_json()` writes), and is checked against
`scenario.schema.json`, shipped in this package; an error names the bad field by its path, e.g.
`tools/0/annotations/readOnlyHint`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import importlib.util
import json
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._renamed import milliseconds, renamed
from mcp_testkit.tools import ToolError

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer
    from mcp_testkit.tools import ScriptedTool

__all__ = [
    "OFFERING_KINDS",
    "Scenario",
    "ScenarioError",
    "add_offering",
    "add_rules",
    "add_tool",
    "check_transport",
    "from_json",
    "load_scenario",
    "parse_rules",
    "scenario_schema",
    "transport_problem",
    "validate",
]

_MAX_DEPTH = 160
"""The deepest nesting of a scenario document: a message's bound (128) and room for the file's envelope."""
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
_OPTIONS = ("name", "preset", "page_size", "response_mode", "get_stream", "eras", "resumable", "retry_s")
"""Top-level keys of a JSON scenario that are `TestMcpServer` keyword arguments."""


class ScenarioError(ValueError):
    """A scenario that cannot be loaded; the message names the file and the bad field."""


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: keyword arguments for `TestMcpServer`, and what to do to it once built."""

    source: str
    options: Mapping[str, Any] = field(default_factory=dict)
    setup: Callable[[TestMcpServer], None] = field(default=lambda server: None, repr=False)

    def apply(self, server: TestMcpServer) -> None:
        """Script `server` as the scenario says; ScenarioError naming the file if that fails."""
        try:
            self.setup(server)
        except ScenarioError:
            raise
        except Exception as exc:
            where = _origin(exc, self.source)
            raise ScenarioError(f"scenario {self.source}: {where}{type(exc).__name__}: {exc}") from exc


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
        raise ScenarioError(f"{_join(at, _path(error.absolute_path)) or '(top level)'}: {message}")


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file: `.py` (defines `scenario(server)`) or `.json`; ScenarioError naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise ScenarioError(f"scenario {path}: no such file")
    if path.suffix == ".py":
        return _load_python(path)
    if path.suffix == ".json":
        return from_json(decode(path.read_bytes(), str(path)), source=str(path))
    raise ScenarioError(f"scenario {path}: a scenario is a .py file defining scenario(server) or a .json file")


def decode(data: bytes, source: str) -> Any:
    """A scenario document's JSON, decoded as strictly as a message on the wire (UTF-8, no NaN or Infinity,
    bounded nesting); ScenarioError naming the source and the field where it is refused."""
    from mcp_testkit._wire.strict_json import JsonError, loads, where_refused

    try:
        return loads(data, "file", max_depth=_MAX_DEPTH)
    except JsonError as exc:
        field = where_refused(data.decode("utf-8", "replace"), _MAX_DEPTH)
        raise ScenarioError(f"scenario {source}: {f'{field}: ' if field else ''}not valid JSON: {exc}") from None


def from_json(data: Any, *, source: str = "<json>") -> Scenario:
    """The scenario a JSON document describes, checked against the schema and built eagerly.

    Its tools are built (and their schemas checked) here, so that applying it only puts them in the catalogue,
    all at once: a large scenario costs its time where it is read, not where the server serves.
    """
    from mcp_testkit._wire.strict_json import unfit

    problem = unfit(data, _MAX_DEPTH)  # a value built in Python has not been through the decoder's bounds
    if problem:
        raise ScenarioError(f"scenario {source}: {problem}")
    try:
        validate(data)
        tools = [_built_tool(tool, f"tools/{i}") for i, tool in enumerate(data.get("tools", ()))]
        rules = [(f"faults/{i}", _rule(rule, f"faults/{i}")) for i, rule in enumerate(data.get("faults", ()))]
        offerings = _offerings(data)
    except ScenarioError as exc:
        raise ScenarioError(f"scenario {source}: {exc}") from None
    headers = [(h["name"], h["value"], h.get("status", 401)) for h in data.get("required_headers", ())]

    def setup(server: TestMcpServer) -> None:
        if tools:  # one swap: a listing sees all of them or none, and one list_changed is sent
            server.add_tools(dataclasses.replace(tool, answers=list(tool.answers), _served=0) for tool in tools)
        for name, value, status in headers:
            server.require_header(name, value, status=status)
        for at, rule in rules:
            try:
                server.add_rule(rule)  # refused when the server's eras can never meet it, as inject refuses it
            except ValueError as exc:
                raise ScenarioError(f"scenario {source}: {at}: {exc}") from None
        for offer in offerings:
            offer(server)

    options = {key: data[key] for key in _OPTIONS if key in data}
    if "retry_ms" in data:
        if "retry_s" in data:
            raise ScenarioError(f"scenario {source}: give retry_s only (retry_ms is its old spelling, in milliseconds)")
        where = f"scenario {source}"
        options["retry_s"] = renamed(dict(data), "retry_ms", "retry_s", None, where=where, convert=milliseconds)
    return Scenario(source, options, setup)


def add_tool(server: TestMcpServer, data: Any) -> dict[str, Any]:
    """Add (or replace) the tool a JSON tool object describes; returns its wire definition."""
    validate(data, "tool")
    tool = _built_tool(data, "")
    server.add_tools([tool])  # as server.tool() does, with the tool built (and checked) once
    return tool.definition


def add_offering(server: TestMcpServer, key: str, data: Any) -> dict[str, Any]:
    """Add (or replace) the resource, template, prompt or completion values a JSON object describes, `key` being
    its scenario key (`resources`, `resource_templates`, `prompts`, `completions`); returns what the server
    now offers for it, as its listing shows it."""
    validate(data, OFFERING_KINDS[key])
    return _offer(key, data, "")(server)


def add_rules(server: TestMcpServer, data: Any, *, stdio: bool | None = None) -> list[faults.Rule]:
    """Add the fault rule (or list of rules) a JSON document describes; all are checked before any is added.

    With `stdio` True or False, a fault that means nothing on that transport is refused too.
    """
    parsed = []
    for at, rule in parse_rules(data, stdio=stdio):
        try:
            server.check_rule(rule)
        except ValueError as exc:
            raise ScenarioError(f"{at or '(rule)'}: {exc}") from None
        parsed.append(rule)
    return [server.add_rule(rule) for rule in parsed]


def parse_rules(data: Any, *, stdio: bool | None = None) -> list[tuple[str, faults.Rule]]:
    """The fault rule (or list of rules) a JSON document describes, each with where it stands in `data`; with
    `stdio` True or False, a fault that means nothing on that transport is refused (ScenarioError naming it)."""
    items = data if isinstance(data, list) else [data]
    parsed = []
    for index, item in enumerate(items):
        at = str(index) if isinstance(data, list) else ""
        validate(item, "rule", at=at)
        rule = _rule(item, at)
        if stdio is not None:
            problem = transport_problem(rule.fault, stdio=stdio)
            if problem is not None:
                raise ScenarioError(f"{_join(at, 'fault')}: {problem}")
        parsed.append((at, rule))
    return parsed


def transport_problem(fault: faults.Fault, *, stdio: bool) -> str | None:
    """Why `fault` means nothing over stdio (or over HTTP), or None when it applies there."""
    if stdio:
        from mcp_testkit.server.effects import supports_stdio

        if not supports_stdio(fault):
            return f"{type(fault).__name__} means nothing over stdio (it is an HTTP fault)"
    elif fault.stdio_only:
        return f"{type(fault).__name__} means something only over stdio (mcp-testkit serve --stdio)"
    return None


def check_transport(rules: Iterable[faults.Rule], *, stdio: bool) -> None:
    """ScenarioError naming the first rule whose fault means nothing on the transport served."""
    for rule in rules:
        problem = transport_problem(rule.fault, stdio=stdio)
        if problem is not None:
            raise ScenarioError(f"fault rule {rule.fault!r}: {problem}")


# -- JSON to Python values ----------------------------------------------------------------------------------------


def _built_tool(data: Mapping[str, Any], where: str) -> ScriptedTool:
    arguments: dict[str, Any] = {
        "name": data["name"],
        "title": data.get("title"),
        "description": data.get("description"),
        "input_schema": data.get("inputSchema"),
        "output_schema": data.get("outputSchema"),
        "annotations": data.get("annotations"),
        "task": data.get("task"),
    }
    if "asks" in data:
        arguments["returns"] = _asking(data, where)
    elif "answers" in data:
        arguments["answers"] = [_answer(a, _join(where, f"answers/{i}")) for i, a in enumerate(data["answers"])]
    elif "returns" in data:
        arguments["returns"] = _answer(data["returns"], _join(where, "returns"))
    else:
        arguments["returns"] = {"content": []}
    from mcp_testkit.tools import ScriptedTool

    try:  # check the definition now, so a bad one is reported with the scenario's path
        return ScriptedTool.build(**arguments)
    except ValueError as exc:
        raise ScenarioError(f"{where or '(tool)'}: {exc}") from None


def _asking(data: Mapping[str, Any], where: str) -> Any:
    """The handler of a tool that asks the client for input (`asks`), then answers `returns` with the answers."""
    from mcp_testkit.scenario._asks import AskError, asking_handler, check_asks

    if "answers" in data:
        raise ScenarioError(f"{_join(where, 'answers')}: a tool with asks answers once, with returns (which may use "
                            "the answers, as {key.content.field}); give returns, not answers")  # fmt: skip
    returns = data.get("returns", {"content": []})
    try:
        check_asks(data["asks"], returns, where)
    except AskError as exc:
        raise ScenarioError(str(exc)) from None
    _answer(returns, _join(where, "returns"))  # checked now, with its placeholders as they stand
    return asking_handler(data["asks"], returns, lambda filled: _answer(filled, _join(where, "returns")))


def _answer(data: Any, where: str) -> Any:
    """A JSON answer as the Python API takes it, its content blocks checked against the MCP types."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict) and "structured" in data:
        return dict(data["structured"])
    if isinstance(data, dict) and "error" in data:
        return ToolError(data["error"])
    blocks = data["content"] if isinstance(data, dict) else data
    at = _join(where, "content") if isinstance(data, dict) else where
    for index, block in enumerate(blocks):
        _check_block(block, _join(at, str(index)))
    if isinstance(data, dict):
        import mcp_types

        return mcp_types.CallToolResult.model_validate(data)
    return list(data)


def _check_block(block: Mapping[str, Any], where: str) -> None:
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
        raise ScenarioError(f"{_join(where, _path(first['loc']))}: {first['msg']}") from None


def _rule(data: Mapping[str, Any], where: str) -> faults.Rule:
    """The rule a JSON rule describes, so that `Rule.to_json()` round-trips.

    A field given (even null) is taken as is, as `Rule.from_json` reads it; a field left out takes
    the fault's default, as `server.inject` does (its keywords are `faults.placed_rule`'s, the rule's fields).
    """
    try:
        fault = faults.from_json(data["fault"])
    except ValueError as exc:
        raise ScenarioError(f"{_join(where, 'fault')}: {exc}") from None
    try:
        rule = faults.placed_rule(fault, **{key: value for key, value in data.items() if key != "fault"})
        if "page" in data:
            rule = dataclasses.replace(rule, page=data["page"])
    except ValueError as exc:
        raise ScenarioError(f"{where or '(rule)'}: {exc}") from None
    return rule


# -- offerings: resources, templates, prompts, completion ----------------------------------------------------------

Offer = Callable[["TestMcpServer"], dict[str, Any]]


def _offerings(data: Mapping[str, Any]) -> list[Offer]:
    """What a scenario offers besides tools, each item built (and checked) now and scripted on apply."""
    return [
        _offer(key, item, f"{key}/{index}") for key in OFFERING_KINDS for index, item in enumerate(data.get(key, ()))
    ]


def _offer(key: str, data: Mapping[str, Any], where: str) -> Offer:
    build = {"resources": _resource, "resource_templates": _template, "prompts": _prompt, "completions": _completion}
    return build[key](data, where)


def _content(data: Mapping[str, Any], where: str) -> str | bytes:
    """A resource's or template's `text`, or its `blob` decoded from base64."""
    if "text" in data:
        return str(data["text"])
    try:
        return base64.b64decode(data["blob"], validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ScenarioError(f"{_join(where, 'blob')}: not base64 ({exc}); give the bytes in base64, or text") from None


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
        raise ScenarioError(f"{_join(where, 'uriTemplate')}: {exc}") from None
    content = _content(data, where)
    if isinstance(content, str):
        _check_placeholders(content, parameters, _join(where, "text"), f"parameter of template {uri_template!r}")

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
        raise ScenarioError(f"{_join(where, 'arguments')}: argument {twice[0]!r} is declared twice")
    messages = [dict(message) for message in data["messages"]]
    for index, message in enumerate(messages):
        at = _join(where, f"messages/{index}/content")
        if isinstance(message["content"], dict):
            _check_block(message["content"], at)
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
                f"{_join(where, kind)}: the server offers no {what} {target!r} "
                f"(it offers: {', '.join(there) or 'none'}); script it before its completion values"
            )
        if argument not in names:
            raise ScenarioError(
                f"{_join(where, 'argument')}: {argument!r} is no argument of {what} {target!r} "
                f"(it has: {', '.join(names) or 'none'})"
            )
        server.complete(argument=argument, values=values, **{kind: target})
        ref = {"type": "ref/prompt", "name": target} if kind == "prompt" else {"type": "ref/resource", "uri": target}
        return {"ref": ref, "argument": argument, "values": values}

    return offer


def _check_placeholders(value: Any, names: Iterable[str], where: str, what: str) -> None:
    """ScenarioError naming the first `{name}` in `value`'s strings that is not one of `names` (a typo, likely)."""
    known = set(names)
    for text in _strings(value):
        for found in _PLACEHOLDER.finditer(text):
            if found[1] is not None and found[1] not in known:
                raise ScenarioError(
                    f"{where}: {{{found[1]}}} is no {what} (there are: {', '.join(sorted(known)) or 'none'}); "
                    "write {{ and }} for a literal brace"
                )


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _substituted(value: Any, values: Mapping[str, str]) -> Any:
    """`value` with each `{name}` of its strings replaced by its value (`{{` and `}}` by one brace)."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m[1], m[0]) if m[1] is not None else m[0][0], value)
    if isinstance(value, dict):
        return {key: _substituted(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, values) for item in value]
    return value


def _path(parts: Any) -> str:
    return "/".join(str(part) for part in parts)


def _join(where: str, more: str) -> str:
    return "/".join(part for part in (where, more) if part)


# -- Python scenarios ---------------------------------------------------------------------------------------------


def _load_python(path: Path) -> Scenario:
    name = f"mcp_testkit_scenario_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ScenarioError(f"scenario {path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        where = _origin(exc, str(path))
        raise ScenarioError(f"scenario {path}: importing it raised {where}{type(exc).__name__}: {exc}") from exc
    setup = getattr(module, "scenario", None)
    if not callable(setup):
        raise ScenarioError(f"scenario {path}: defines no function scenario(server)")
    options = getattr(module, "server_options", {})
    if not isinstance(options, Mapping):
        raise ScenarioError(f"scenario {path}: server_options must be a dict of TestMcpServer arguments")
    return Scenario(str(path), dict(options), setup)


def _origin(exc: BaseException, source: str) -> str:
    """'line N: ' for the deepest frame of `exc` that is in the scenario file, else ''."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == source]
    if not frames:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).name == Path(source).name]
    return f"line {frames[-1].lineno}: " if frames else ""
