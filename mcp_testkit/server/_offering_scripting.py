"""Scripting what a `TestMcpServer` offers besides tools: resources, templates, prompts, completion values.

`OfferingScripting` is a part of the server: the server's verbs of the same names call it. It changes the current
state under the server's lock and tells open sessions what changed; every method may be called from any thread
while traffic flows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mcp_testkit.resources import ScriptedPrompt, ScriptedResource, ScriptedTemplate
from mcp_testkit.server._dispatch._offerings import notify_changed, notify_updated

if TYPE_CHECKING:
    from mcp_testkit.resources import Messages, ReadsTemplate
    from mcp_testkit.server._current import CurrentState

__all__ = ["OfferingScripting", "OfferingsView"]


@dataclass(frozen=True)
class OfferingsView:
    """What a server offers besides tools, read-only and live: resources by URI, templates by URI template, prompts
    by name, and completion values by (`ref/prompt` or `ref/resource`, prompt or template, argument)."""

    resources: Mapping[str, ScriptedResource]
    templates: Mapping[str, ScriptedTemplate]
    prompts: Mapping[str, ScriptedPrompt]
    completions: Mapping[tuple[str, str, str], tuple[str, ...]]


class OfferingScripting:
    """`resource`, `resource_template`, `prompt`, `complete` and their changes, on the server's current state."""

    def __init__(self, current: CurrentState) -> None:
        self._current = current

    def view(self) -> OfferingsView:
        """What the server offers now, as read-only mappings (they follow later changes)."""
        offerings = self._current.state.offerings
        return OfferingsView(
            MappingProxyType(offerings.resources),
            MappingProxyType(offerings.templates),
            MappingProxyType(offerings.prompts),
            MappingProxyType(offerings.completions),
        )

    def _put(self, table: str, key: str, offered: Any, listing: str) -> None:
        """Offer `offered` under `key` in the offerings' `table`, and tell open sessions that `listing` changed."""
        current = self._current
        with current.lock:
            state = current.state
            getattr(state.offerings, table)[key] = offered
        notify_changed(state, listing)

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
        current = self._current
        with current.lock:
            state = current.state
            known = state.offerings.resources.get(uri)
            state.offerings.resources[uri] = resource
        notify_changed(state, "resources")
        if known is not None and (known.text, known.blob) != (text, blob):
            notify_updated(state, uri)
        return resource

    def update_resource(self, uri: str, *, text: str | None = None, blob: bytes | None = None) -> ScriptedResource:
        """Change a resource's content; every session subscribed to it gets `notifications/resources/updated`."""
        current = self._current
        with current.lock:
            state = current.state
            resources = state.offerings.resources
            known = resources.get(uri)
            if known is None:
                raise KeyError(f"no resource {uri!r}; resources: {', '.join(resources) or '(none)'}")
            resource = ScriptedResource(
                uri, known.name, text=text, blob=blob, mime_type=known.mime_type, description=known.description,
                title=known.title,
            )  # fmt: skip
            resources[uri] = resource
        notify_updated(state, uri)
        return resource

    def remove_resource(self, uri: str) -> None:
        """Stop offering a resource or a template (by its URI template); KeyError naming those there are."""
        current = self._current
        with current.lock:
            state = current.state
            offerings = state.offerings
            if offerings.resources.pop(uri, None) is None and offerings.templates.pop(uri, None) is None:
                there = [*offerings.resources, *offerings.templates]
                raise KeyError(f"no resource or template {uri!r}; there are: {', '.join(there) or '(none)'}")
        notify_changed(state, "resources")

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
        self._put("templates", uri_template, template, "resources")
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
        self._put("prompts", name, prompt, "prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Stop offering a prompt; KeyError naming the prompts there are."""
        current = self._current
        with current.lock:
            state = current.state
            prompts = state.offerings.prompts
            if prompts.pop(name, None) is None:
                raise KeyError(f"no prompt {name!r}; prompts: {', '.join(prompts) or '(none)'}")
        notify_changed(state, "prompts")

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
        current = self._current
        with current.lock:
            current.state.offerings.completions[(key[0], str(key[1]), argument)] = tuple(values)
