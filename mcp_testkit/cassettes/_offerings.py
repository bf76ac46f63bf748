"""Replaying what a recorded server offered besides tools: its listings of resources, templates and prompts as
recorded, and each `resources/read`, `prompts/get` and `completion/complete` answered as it was while recording.

A request the recording never made is answered -32603 naming the cassette, and fails `check()` (`UnrecordedRequest`),
as an unmatched call does; what a test scripts on the replay (`server.resource(...)`) answers as on any server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mcp_testkit.cassettes._answers import handshake_result
from mcp_testkit.cassettes._format import Cassette
from mcp_testkit.resources import Offerings, ScriptedPrompt, ScriptedResource, ScriptedTemplate
from mcp_testkit.tools import JsonRpcError
from mcp_testkit.upstream import Exchange

__all__ = ["OFFERING_METHODS", "RecordedOfferings", "UnrecordedRequest", "offering_notes", "request_key"]

OFFERING_METHODS = (
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
)
"""The methods besides tools a replay answers from its recording."""
_LISTED = {"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}
_ANSWERED = ("resources/read", "prompts/get", "completion/complete")


class UnrecordedRequest(AssertionError):
    """A replay was asked for a resource, prompt or completion the recording never asked the server for."""

    def __init__(self, source: str, method: str, params: Mapping[str, Any]) -> None:
        self.method = method
        self.params = dict(params)
        super().__init__(
            f"cassette {source} has no recorded {method} of {json.dumps(params, sort_keys=True)}: record it, "
            "or script it on the replay (server.resource(...), server.prompt(...), server.complete(...))"
        )


def request_key(method: str, params: Mapping[str, Any]) -> str:
    """What makes two requests of `method` the same request: their params without `_meta` (a prompt's
    absent arguments are no arguments)."""
    bare = {key: value for key, value in params.items() if key != "_meta"}
    if method == "prompts/get":
        bare.setdefault("arguments", {})
        if bare["arguments"] is None:
            bare["arguments"] = {}
    return json.dumps(bare, sort_keys=True)


@dataclass(frozen=True)
class _RecordedResource(ScriptedResource):
    """A resource as a recorded `resources/list` listed it."""

    entry: Mapping[str, Any] = field(default_factory=dict)

    @property
    def definition(self) -> dict[str, Any]:
        return dict(self.entry)


@dataclass(frozen=True)
class _RecordedTemplate(ScriptedTemplate):
    """A template as a recorded `resources/templates/list` listed it (one whose syntax we do not match, such as
    `{+path}`, is listed and matches nothing: its recorded reads are answered by URI)."""

    strict: ClassVar[bool] = False
    entry: Mapping[str, Any] = field(default_factory=dict)

    @property
    def definition(self) -> dict[str, Any]:
        return dict(self.entry)


@dataclass(frozen=True)
class _RecordedPrompt(ScriptedPrompt):
    """A prompt as a recorded `prompts/list` listed it; `prompts/get` answers as recorded for the same arguments."""

    entry: Mapping[str, Any] = field(default_factory=dict)
    answer: Any = field(default=None, compare=False, repr=False)

    @property
    def definition(self) -> dict[str, Any]:
        return dict(self.entry)

    def get(self, given: dict[str, str]) -> dict[str, Any]:
        return self.answer("prompts/get", {"name": self.name, "arguments": given})  # type: ignore[no-any-return]


class RecordedOfferings(Offerings):
    """The offerings of a replay: listings as recorded (first entry of a URI or name wins), answers by request."""

    def __init__(self, cassette: Cassette) -> None:
        super().__init__()
        self.source = cassette.source
        self.answers: dict[tuple[str, str], Exchange] = {}
        for method in _ANSWERED:
            for exchange in cassette.requests(method):
                if exchange.result is not None or exchange.rpc_error is not None:
                    self.answers.setdefault((method, request_key(method, exchange.params)), exchange)
        self.recorded = frozenset(method for method in OFFERING_METHODS if cassette.requests(method))
        """The methods the recording holds answers to (a listing even when it listed nothing)."""
        for entry in _entries(cassette, "resources/list", "uri"):
            self.resources[entry["uri"]] = _RecordedResource(
                entry["uri"], str(entry.get("name", entry["uri"])), text="", entry=entry
            )
        for entry in _entries(cassette, "resources/templates/list", "uriTemplate"):
            template = entry["uriTemplate"]
            name = str(entry.get("name", template))
            self.templates[template] = _RecordedTemplate(template, name, _never, entry=entry)
        prompts = {entry["name"]: entry for entry in _entries(cassette, "prompts/list", "name")}
        unlisted_prompts, unlisted_templates = _unlisted(cassette)
        for name in unlisted_prompts:
            prompts.setdefault(name, {"name": name})
        for template in unlisted_templates:
            self.templates.setdefault(template, _RecordedTemplate(template, template, _never, entry={
                "uriTemplate": template, "name": template
            }))  # fmt: skip
        for name, entry in prompts.items():
            declared = tuple(a for a in entry.get("arguments") or () if isinstance(a, dict))
            self.prompts[name] = _RecordedPrompt(name, (), declared, entry=entry, answer=self._answer)

    def capabilities(self, *, notifies: bool = True) -> dict[str, Any]:
        announced = super().capabilities(notifies=notifies)
        recorded = self.recorded
        if "resources" not in announced and recorded & {"resources/list", "resources/templates/list", "resources/read"}:
            announced["resources"] = {}
        if "prompts" not in announced and recorded & {"prompts/list", "prompts/get"}:
            announced["prompts"] = {}
        if "completions" not in announced and "completion/complete" in recorded:
            announced["completions"] = {}
        return announced

    def knows(self, uri: str, *, deadline_s: float | None = None) -> bool:
        recorded = ("resources/read", request_key("resources/read", {"uri": uri})) in self.answers
        return recorded or super().knows(uri, deadline_s=deadline_s)

    def reading(self, uri: str, *, deadline_s: float | None = None) -> dict[str, Any] | None:
        known = self.resources.get(uri)
        if known is not None and not isinstance(known, _RecordedResource):
            return known.read()  # scripted on the replay
        if ("resources/read", request_key("resources/read", {"uri": uri})) in self.answers or isinstance(
            known, _RecordedResource
        ):
            return self._answer("resources/read", {"uri": uri})
        found = self.template_for(uri, deadline_s=deadline_s)
        if found is None:
            return None
        template, params = found
        if isinstance(template, _RecordedTemplate):
            return self._answer("resources/read", {"uri": uri})
        return template.read(uri, params)

    def completing(self, kind: str, target: str, argument: str, value: str) -> dict[str, Any]:
        if (kind, target, argument) in self.completions:
            return super().completing(kind, target, argument, value)  # scripted on the replay
        ref = {"type": kind, "name" if kind == "ref/prompt" else "uri": target}
        return self._answer("completion/complete", {"ref": ref, "argument": {"name": argument, "value": value}})

    def _answer(self, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """The recorded answer to this request: its result, or its JSON-RPC error raised."""
        exchange = self.answers.get((method, request_key(method, params)))
        if exchange is None:
            raise UnrecordedRequest(self.source, method, params)
        error = exchange.rpc_error
        if error is not None:
            raise JsonRpcError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
        assert exchange.result is not None
        return handshake_result(exchange.result)


def offering_notes(cassette: Cassette) -> list[str]:
    """What a replay of `cassette` serves of resources and prompts otherwise than recorded."""
    prompts, templates = _unlisted(cassette)
    notes = [
        f"prompt {name!r} was asked for but never listed: it is replayed with a bare definition" for name in prompts
    ]
    notes.extend(
        f"resource template {template!r} was completed but never listed: it is replayed with a bare definition"
        for template in templates
    )
    return notes


def _unlisted(cassette: Cassette) -> tuple[list[str], list[str]]:
    """The prompts a recorded `prompts/get` or completion names, and the templates a completion names, that no
    recorded listing held: a replay lists them bare, so that it can answer for them."""
    listed_prompts = {entry["name"] for entry in _entries(cassette, "prompts/list", "name")}
    listed_templates = {entry["uriTemplate"] for entry in _entries(cassette, "resources/templates/list", "uriTemplate")}
    prompts: dict[str, None] = {}
    templates: dict[str, None] = {}
    for exchange in [*cassette.requests("prompts/get"), *cassette.requests("completion/complete")]:
        params = exchange.params
        ref: dict[str, Any] = {"type": "ref/prompt", "name": params.get("name")}
        if exchange.method == "completion/complete":
            ref = params["ref"] if isinstance(params.get("ref"), dict) else {}
        name, uri = ref.get("name"), ref.get("uri")
        if ref.get("type") == "ref/prompt" and isinstance(name, str) and name not in listed_prompts:
            prompts[name] = None
        if ref.get("type") == "ref/resource" and isinstance(uri, str) and uri not in listed_templates:
            templates[uri] = None
    return list(prompts), list(templates)


def _never(params: dict[str, str]) -> str:
    raise AssertionError("a recorded template's reads are answered by URI")  # pragma: no cover


def _entries(cassette: Cassette, method: str, key: str) -> list[dict[str, Any]]:
    """Every entry any recorded page of a listing held, the first of each `key` kept."""
    found: dict[str, dict[str, Any]] = {}
    for exchange in cassette.requests(method):
        listed = (exchange.result or {}).get(_LISTED[method])
        for entry in listed if isinstance(listed, list) else ():
            if isinstance(entry, dict) and isinstance(entry.get(key), str):
                found.setdefault(entry[key], entry)
    return list(found.values())
