"""What a test scripts a server to offer besides tools: resources, resource templates and prompts, as values.

`TestMcpServer.resource(...)`, `.resource_template(...)` and `.prompt(...)` build these; dispatch
(`server/_dispatch/_offerings.py`) answers `resources/*`, `prompts/*` and `completion/complete` from them.

A client chooses the URI it reads, so matching it is bounded: a template matches in time linear in the URI
(`_wire/uri_templates.py`), a URI longer than `MAX_URI_LENGTH` matches nothing, and one read tries templates for at
most `MATCH_BUDGET_S` before it stops with `MatchingOverBudget`.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from mcp_testkit._wire.uri_templates import MAX_TEMPLATE_PARAMETERS, MAX_URI_LENGTH, UriTemplate, parameter_names

__all__ = [
    "MATCH_BUDGET_S",
    "MAX_TEMPLATE_PARAMETERS",
    "MAX_URI_LENGTH",
    "MatchingOverBudget",
    "Offerings",
    "ScriptedPrompt",
    "ScriptedResource",
    "ScriptedTemplate",
    "match_deadline",
]

ReadsTemplate = Callable[[dict[str, str]], "str | bytes | Mapping[str, Any]"]
Messages = Callable[[dict[str, str]], Sequence[Mapping[str, Any]]]

COMPLETION_LIMIT = 100
"""At most this many values in one `completion/complete` answer (the spec's maximum); `hasMore` says if cut."""

MATCH_BUDGET_S = 0.1
"""The time one `resources/read` may spend matching its URI against templates, in seconds, checked before each
template after the first: the event loop is held for this plus one template's match (well under a millisecond for
a usual URI, tens of milliseconds for `MAX_URI_LENGTH` characters against `MAX_TEMPLATE_PARAMETERS`). Read at each
read, so a test may set it (`monkeypatch.setattr(mcp_testkit.resources, "MATCH_BUDGET_S", 1.0)`)."""


class MatchingOverBudget(Exception):
    """Matching a URI against the templates ran past its deadline (`MATCH_BUDGET_S`)."""

    def __init__(self, uri: str, tried: int, offered: int) -> None:
        self.tried, self.offered = tried, offered
        shown = uri if len(uri) <= 80 else uri[:80] + "..."
        super().__init__(
            f"matching {shown!r} against resource templates ran over its budget of {MATCH_BUDGET_S} s after "
            f"{tried} of {offered} templates; offer fewer templates or raise mcp_testkit.resources.MATCH_BUDGET_S"
        )


def match_deadline() -> float:
    """The `time.monotonic()` by which one read's matching ends: now plus `MATCH_BUDGET_S`."""
    return time.monotonic() + MATCH_BUDGET_S


def _contents(uri: str, value: str | bytes | Mapping[str, Any], mime_type: str | None) -> dict[str, Any]:
    """One entry of `resources/read`'s `contents`: text, a blob (base64), or a dict as given (with its uri)."""
    if isinstance(value, Mapping):
        return {"uri": uri, **value}
    entry: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        entry["mimeType"] = mime_type
    if isinstance(value, bytes):
        entry["blob"] = base64.b64encode(value).decode("ascii")
    else:
        entry["text"] = value
    return entry


@dataclass(frozen=True)
class ScriptedResource:
    """A resource at a fixed URI: its text or blob, listed by `resources/list` and read by `resources/read`."""

    uri: str
    name: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    description: str | None = None
    title: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            raise ValueError(f"resource {self.uri!r}: give exactly one of text= or blob=")

    @property
    def definition(self) -> dict[str, Any]:
        """The entry of `resources/list`."""
        entry: dict[str, Any] = {"uri": self.uri, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value is not None:
                entry[key] = value
        size = len(self.blob) if self.blob is not None else len((self.text or "").encode())
        entry["size"] = size
        return entry

    def read(self) -> dict[str, Any]:
        """The `resources/read` result."""
        value: str | bytes = self.blob if self.blob is not None else self.text or ""
        return {"contents": [_contents(self.uri, value, self.mime_type)]}


@dataclass(frozen=True)
class ScriptedTemplate:
    """A family of resources named by a URI template (`db://rows/{id}`: simple `{name}` parameters, each matching
    one path segment or a part of one, at most `MAX_TEMPLATE_PARAMETERS`); `reads(params)` gives a URI's content:
    text, bytes, or a contents entry as a dict."""

    strict: ClassVar[bool] = True
    """Whether a template we cannot match (no parameter, one named twice, too many) is refused with ValueError;
    when False it is kept and matches no URI (a recorded server's `{+path}`)."""

    uri_template: str
    name: str
    reads: ReadsTemplate
    mime_type: str | None = None
    description: str | None = None
    title: str | None = None
    _matcher: UriTemplate | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        try:
            matcher: UriTemplate | None = UriTemplate.parse(self.uri_template)
        except ValueError:
            if self.strict:
                raise
            matcher = None
        object.__setattr__(self, "_matcher", matcher)

    @property
    def parameters(self) -> list[str]:
        """The template's parameter names, in order."""
        return parameter_names(self.uri_template)

    @property
    def definition(self) -> dict[str, Any]:
        """The entry of `resources/templates/list`."""
        entry: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value is not None:
                entry[key] = value
        return entry

    def match(self, uri: str) -> dict[str, str] | None:
        """The parameters a URI gives this template, or None when it is not one of its URIs (nor is a URI longer
        than `MAX_URI_LENGTH`). Each parameter is as long as the rest of the template allows, the first first, as
        the regex `(?P<name>[^/?#]+)` per parameter would have it; found in time linear in the URI."""
        return None if self._matcher is None else self._matcher.match(uri)

    def read(self, uri: str, params: dict[str, str]) -> dict[str, Any]:
        """The `resources/read` result for one of its URIs."""
        return {"contents": [_contents(uri, self.reads(params), self.mime_type)]}


@dataclass(frozen=True)
class ScriptedPrompt:
    """A prompt: its declared arguments (`{"name": ..., "required": True}`) and the messages `prompts/get` answers,
    a list, or a function of the arguments given; a message's `content` may be a plain string (a text block)."""

    name: str
    messages: Messages | Sequence[Mapping[str, Any]]
    arguments: tuple[Mapping[str, Any], ...] = ()
    description: str | None = None
    title: str | None = None

    @property
    def definition(self) -> dict[str, Any]:
        """The entry of `prompts/list`."""
        entry: dict[str, Any] = {"name": self.name, "arguments": [dict(argument) for argument in self.arguments]}
        for key, value in (("title", self.title), ("description", self.description)):
            if value is not None:
                entry[key] = value
        return entry

    def missing(self, given: Mapping[str, Any]) -> list[str]:
        """The required arguments `given` lacks."""
        return [str(a["name"]) for a in self.arguments if a.get("required") and a.get("name") not in given]

    def get(self, given: dict[str, str]) -> dict[str, Any]:
        """The `prompts/get` result."""
        made = self.messages(given) if callable(self.messages) else self.messages
        messages = []
        for message in made:
            content = message.get("content")
            if isinstance(content, str):
                content = {"type": "text", "text": content}
            messages.append({**message, "content": content})
        result: dict[str, Any] = {"messages": messages}
        if self.description is not None:
            result["description"] = self.description
        return result


@dataclass(eq=False)
class Offerings:
    """Everything a server offers besides tools, as scripted: resources, templates, prompts and completion values."""

    resources: dict[str, ScriptedResource] = field(default_factory=dict)
    templates: dict[str, ScriptedTemplate] = field(default_factory=dict)
    prompts: dict[str, ScriptedPrompt] = field(default_factory=dict)
    completions: dict[tuple[str, str, str], tuple[str, ...]] = field(default_factory=dict)
    """Values by (`ref/prompt` or `ref/resource`, prompt name or URI template, argument name)."""

    def __bool__(self) -> bool:
        return bool(self.resources or self.templates or self.prompts or self.completions)

    def capabilities(self, *, notifies: bool = True) -> dict[str, Any]:
        """What the server announces for them (nothing when nothing is scripted: a tools-only server is as before);
        `notifies`: whether it can tell a client of changes (subscriptions and list_changed), as a session can."""
        announced: dict[str, Any] = {}
        if self.resources or self.templates:
            announced["resources"] = {"subscribe": True, "listChanged": True} if notifies else {}
        if self.prompts:
            announced["prompts"] = {"listChanged": True} if notifies else {}
        if self.completions:
            announced["completions"] = {}
        return announced

    def knows(self, uri: str, *, deadline_s: float | None = None) -> bool:
        """Whether `resources/read` of `uri` has an answer: a resource there, or a template matching it (by
        `deadline_s`, see `template_for`)."""
        return uri in self.resources or self.template_for(uri, deadline_s=deadline_s) is not None

    def template_for(
        self, uri: str, *, deadline_s: float | None = None
    ) -> tuple[ScriptedTemplate, dict[str, str]] | None:
        """The first template matching `uri` and the parameters it gives, or None; MatchingOverBudget when
        `deadline_s` (a `time.monotonic()`, by default `match_deadline()`) passes before all are tried."""
        ends = match_deadline() if deadline_s is None else deadline_s
        templates = list(self.templates.values())
        for tried, template in enumerate(templates):
            if tried and time.monotonic() >= ends:
                raise MatchingOverBudget(uri, tried, len(templates))
            params = template.match(uri)
            if params is not None:
                return template, params
        return None

    def completing(self, kind: str, target: str, argument: str, value: str) -> dict[str, Any]:
        """The `completion/complete` result: the values scripted for (`kind`, `target`, `argument`) that start
        with `value`, at most `COMPLETION_LIMIT` (`total` and `hasMore` say how many there were)."""
        values = [v for v in self.completions.get((kind, target, argument), ()) if v.startswith(value)]
        more = len(values) > COMPLETION_LIMIT
        return {"completion": {"values": values[:COMPLETION_LIMIT], "total": len(values), "hasMore": more}}

    def reading(self, uri: str, *, deadline_s: float | None = None) -> dict[str, Any] | None:
        """The `resources/read` result for `uri`: a fixed resource first, then the first template matching it (by
        `deadline_s`, see `template_for`)."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource.read()
        found = self.template_for(uri, deadline_s=deadline_s)
        return None if found is None else found[0].read(uri, found[1])
