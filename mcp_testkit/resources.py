"""What a test scripts a server to offer besides tools: resources, resource templates and prompts, as values.

`TestMcpServer.resource(...)`, `.resource_template(...)` and `.prompt(...)` build these; dispatch
(`server/_dispatch/_offerings.py`) answers `resources/*`, `prompts/*` and `completion/complete` from them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Offerings", "ScriptedPrompt", "ScriptedResource", "ScriptedTemplate"]

ReadsTemplate = Callable[[dict[str, str]], "str | bytes | Mapping[str, Any]"]
Messages = Callable[[dict[str, str]], Sequence[Mapping[str, Any]]]

COMPLETION_LIMIT = 100
"""At most this many values in one `completion/complete` answer (the spec's maximum); `hasMore` says if cut."""

_PARAMETER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


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
    one path segment); `reads(params)` gives a URI's content: text, bytes, or a contents entry as a dict."""

    uri_template: str
    name: str
    reads: ReadsTemplate
    mime_type: str | None = None
    description: str | None = None
    title: str | None = None
    _pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts = _PARAMETER.split(self.uri_template)
        if len(parts) == 1:
            raise ValueError(
                f"resource template {self.uri_template!r} has no {{parameter}}; use resource() for one URI"
            )
        names = parts[1::2]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"resource template {self.uri_template!r} names {{{twice[0]}}} twice; name each once")
        regex = "".join(
            re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/?#]+)" for index, part in enumerate(parts)
        )
        object.__setattr__(self, "_pattern", re.compile(regex))

    @property
    def parameters(self) -> list[str]:
        """The template's parameter names, in order."""
        return _PARAMETER.findall(self.uri_template)

    @property
    def definition(self) -> dict[str, Any]:
        """The entry of `resources/templates/list`."""
        entry: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value is not None:
                entry[key] = value
        return entry

    def match(self, uri: str) -> dict[str, str] | None:
        """The parameters a URI gives this template, or None when it is not one of its URIs."""
        found = self._pattern.fullmatch(uri)
        return None if found is None else found.groupdict()

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

    def knows(self, uri: str) -> bool:
        """Whether `resources/read` of `uri` has an answer: a resource there, or a template matching it."""
        return uri in self.resources or any(t.match(uri) is not None for t in list(self.templates.values()))

    def completing(self, kind: str, target: str, argument: str, value: str) -> dict[str, Any]:
        """The `completion/complete` result: the values scripted for (`kind`, `target`, `argument`) that start
        with `value`, at most `COMPLETION_LIMIT` (`total` and `hasMore` say how many there were)."""
        values = [v for v in self.completions.get((kind, target, argument), ()) if v.startswith(value)]
        more = len(values) > COMPLETION_LIMIT
        return {"completion": {"values": values[:COMPLETION_LIMIT], "total": len(values), "hasMore": more}}

    def reading(self, uri: str) -> dict[str, Any] | None:
        """The `resources/read` result for `uri`: a fixed resource first, then the first template matching it."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource.read()
        for template in list(self.templates.values()):
            params = template.match(uri)
            if params is not None:
                return template.read(uri, params)
        return None
