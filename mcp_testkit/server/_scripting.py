"""Scripting what a `TestMcpServer` offers besides tools: resources, templates, prompts, completion values.

A mixin of `TestMcpServer`, kept apart so that the server's class holds its life cycle and tools, and this
module the rest of what a test scripts. Every method may be called from any thread while traffic flows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_testkit.resources import ScriptedPrompt, ScriptedResource, ScriptedTemplate
from mcp_testkit.server._dispatch._offerings import notify_changed, notify_updated

if TYPE_CHECKING:
    from mcp_testkit.resources import Messages, ReadsTemplate
    from mcp_testkit.server._state import ServerState

__all__ = ["OfferingScripting"]


class OfferingScripting:
    """`resource`, `resource_template`, `prompt`, `complete` and their changes, and the listings' cache TTL, for
    `TestMcpServer`."""

    _lock: threading.RLock
    _state: ServerState

    @property
    def cache_ttl_s(self) -> float:
        """The TTL of 2026-07-28 listings (`server/discover`, `tools/list`), in seconds (the wire's `ttlMs` is it in
        whole milliseconds); setting it lasts until `reset()`."""
        return self._state.cache_ttl_ms / 1000

    @cache_ttl_s.setter
    def cache_ttl_s(self, value: float) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < float("inf"):
            raise ValueError(f"cache_ttl_s must be a number of seconds >= 0, not {value!r}")
        self._state.cache_ttl_ms = round(value * 1000)

    @property
    def get_stream(self) -> bool:
        """Whether a handshake-era session may open a GET stream of server messages (else GET is answered 405);
        setting it lasts until `reset()`."""
        return self._state.get_stream

    @get_stream.setter
    def get_stream(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise ValueError(f"get_stream must be True or False, not {value!r}")
        self._state.get_stream = value

    @property
    def input_timeout_s(self) -> float:
        """How long a tool's input request (elicitation, sampling, roots) of the handshake era waits for the client's
        answer before the ctx call raises `InputUnavailable` (-32001); setting it lasts until `reset()`."""
        return self._state.input_timeout_s

    @input_timeout_s.setter
    def input_timeout_s(self, value: float) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
            raise ValueError(f"input_timeout_s must be a number of seconds > 0, not {value!r}")
        self._state.input_timeout_s = float(value)

    def resource(
        self,
        uri: str,
        *,
        text: str | None = None,
        blob: bytes | None = None,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> ScriptedResource:
        """Offer (or replace) a resource at `uri` with its `text` or `blob`; listed by `resources/list` (named
        `name`, by default the URI's last segment) and read by `resources/read`. Open sessions are told the
        listing changed, and those subscribed to `uri` that its content did when it replaces another."""
        resource = ScriptedResource(
            uri,
            name or uri.rstrip("/").rsplit("/", 1)[-1] or uri,
            text=text,
            blob=blob,
            mime_type=mime_type,
            description=description,
            title=title,
        )
        with self._lock:
            known = self._state.offerings.resources.get(uri)
            self._state.offerings.resources[uri] = resource
        notify_changed(self._state, "resources")
        if known is not None and (known.text, known.blob) != (text, blob):
            notify_updated(self._state, uri)
        return resource

    def update_resource(self, uri: str, *, text: str | None = None, blob: bytes | None = None) -> ScriptedResource:
        """Change a resource's content; every session subscribed to it gets `notifications/resources/updated`."""
        resources = self._state.offerings.resources
        with self._lock:
            known = resources.get(uri)
            if known is None:
                raise KeyError(f"no resource {uri!r}; resources: {', '.join(resources) or '(none)'}")
            resource = ScriptedResource(
                uri, known.name, text=text, blob=blob, mime_type=known.mime_type, description=known.description,
                title=known.title,
            )  # fmt: skip
            resources[uri] = resource
        notify_updated(self._state, uri)
        return resource

    def remove_resource(self, uri: str) -> None:
        """Stop offering a resource or a template (by its URI template); KeyError naming those there are."""
        offerings = self._state.offerings
        with self._lock:
            if offerings.resources.pop(uri, None) is None and offerings.templates.pop(uri, None) is None:
                there = [*offerings.resources, *offerings.templates]
                raise KeyError(f"no resource or template {uri!r}; there are: {', '.join(there) or '(none)'}")
        notify_changed(self._state, "resources")

    def resource_template(
        self,
        uri_template: str,
        *,
        reads: ReadsTemplate,
        name: str | None = None,
        mime_type: str | None = None,
        description: str | None = None,
        title: str | None = None,
    ) -> ScriptedTemplate:
        """Offer resources named by a URI template (`db://rows/{id}`): `reads(params)` gives the content of a URI
        it matches (text, bytes, or a contents entry as a dict); listed by `resources/templates/list`."""
        template = ScriptedTemplate(
            uri_template, name or uri_template, reads, mime_type=mime_type, description=description, title=title
        )
        with self._lock:
            self._state.offerings.templates[uri_template] = template
        notify_changed(self._state, "resources")
        return template

    def prompt(
        self,
        name: str,
        *,
        messages: Messages | Sequence[Mapping[str, Any]],
        arguments: Iterable[Mapping[str, Any]] = (),
        description: str | None = None,
        title: str | None = None,
    ) -> ScriptedPrompt:
        """Offer (or replace) a prompt: `arguments` as `prompts/list` gives them (`{"name": ..., "required": True}`),
        `messages` a list or a function of the arguments given; a message's `content` may be a plain string."""
        declared = tuple(dict(argument) for argument in arguments)
        if any(not isinstance(argument.get("name"), str) for argument in declared):
            raise ValueError(f"prompt {name!r}: every argument needs a name (a string)")
        prompt = ScriptedPrompt(name, messages, declared, description=description, title=title)
        with self._lock:
            self._state.offerings.prompts[name] = prompt
        notify_changed(self._state, "prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Stop offering a prompt; KeyError naming the prompts there are."""
        prompts = self._state.offerings.prompts
        with self._lock:
            if prompts.pop(name, None) is None:
                raise KeyError(f"no prompt {name!r}; prompts: {', '.join(prompts) or '(none)'}")
        notify_changed(self._state, "prompts")

    def complete(
        self,
        *,
        argument: str,
        values: Iterable[str],
        prompt: str | None = None,
        resource_template: str | None = None,
    ) -> None:
        """The values `completion/complete` offers for a prompt's argument or a template's parameter (those that
        start with what the client typed, at most 100 at once)."""
        if (prompt is None) == (resource_template is None):
            raise ValueError("complete() needs exactly one of prompt= or resource_template=")
        key = ("ref/prompt", prompt) if prompt is not None else ("ref/resource", resource_template)
        with self._lock:
            self._state.offerings.completions[(key[0], str(key[1]), argument)] = tuple(values)
