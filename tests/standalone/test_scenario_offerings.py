"""A JSON scenario's resources, resource templates, prompts and completions: built as the Python API builds them,
and every mistake refused with the field that holds it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from mcp_testkit import TestMcpServer
from mcp_testkit.scenario import ScenarioError, add_offering, from_json

PROMPT = {
    "name": "summarize",
    "arguments": [{"name": "topic", "required": True}],
    "messages": [{"role": "user", "content": "Summarize {topic} {{as is}}"}],
}


def _served(data: dict[str, Any]) -> TestMcpServer:
    server = TestMcpServer()
    from_json(data).apply(server)
    return server


def test_each_key_scripts_what_the_python_api_does() -> None:
    """Resources (text and blob), a template's {parameter}, a prompt's {argument} and completions are scripted."""
    server = _served(
        {
            "resources": [
                {"uri": "file:///a.txt", "text": "A", "title": "A file"},
                {"uri": "file:///b.bin", "blob": "AAE=", "mimeType": "application/octet-stream"},
            ],
            "resource_templates": [{"uriTemplate": "db://{table}/{id}", "text": "{table} row {id}"}],
            "prompts": [PROMPT],
            "completions": [{"prompt": "summarize", "argument": "topic", "values": ["mcp", "pytest"]}],
        }
    )
    offerings = server._state.offerings
    assert offerings.resources["file:///a.txt"].definition == {
        "uri": "file:///a.txt", "name": "a.txt", "title": "A file", "size": 1,
    }  # fmt: skip
    assert offerings.resources["file:///b.bin"].blob == b"\x00\x01"
    assert offerings.reading("db://users/7") == {"contents": [{"uri": "db://users/7", "text": "users row 7"}]}
    got = offerings.prompts["summarize"].get({"topic": "paging"})
    assert got["messages"] == [{"role": "user", "content": {"type": "text", "text": "Summarize paging {as is}"}}]
    assert offerings.completions[("ref/prompt", "summarize", "topic")] == ("mcp", "pytest")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"resources": [{"uri": "file:///a"}]}, "resources/0: "),
        ({"resources": [{"uri": "file:///a", "text": "x", "blob": "AA=="}]}, "resources/0: "),
        ({"resources": [{"uri": "file:///a", "blob": "not base64!"}]}, "resources/0/blob: not base64"),
        ({"resources": [{"uri": "file:///a", "text": "x", "mime": "t"}]}, "resources/0: Additional properties"),
        ({"resource_templates": [{"uriTemplate": "db://rows", "text": "x"}]}, "resource_templates/0/uriTemplate: "),
        (
            {"resource_templates": [{"uriTemplate": "db://{id}/{id}", "text": "x"}]},
            "resource_templates/0/uriTemplate: resource template 'db://{id}/{id}' names {id} twice",
        ),
        (
            {"resource_templates": [{"uriTemplate": "db://rows/{id}", "text": "row {ID}"}]},
            "resource_templates/0/text: {ID} is no parameter of template 'db://rows/{id}' (there are: id)",
        ),
        (
            {"prompts": [{**PROMPT, "messages": [{"role": "user", "content": "About {tpoic}"}]}]},
            "prompts/0/messages/0/content: {tpoic} is no argument of prompt 'summarize' (there are: topic)",
        ),
        (
            {"prompts": [{**PROMPT, "messages": [{"role": "robot", "content": "x"}]}]},
            "prompts/0/messages/0/role: 'robot' is not one of",
        ),
        (
            {"prompts": [{**PROMPT, "messages": [{"role": "user", "content": {"type": "image", "data": "x"}}]}]},
            "prompts/0/messages/0/content/mimeType: Field required",
        ),
        (
            {"prompts": [{**PROMPT, "arguments": [{"name": "topic"}, {"name": "topic"}]}]},
            "prompts/0/arguments: argument 'topic' is declared twice",
        ),
        ({"completions": [{"argument": "topic", "values": []}]}, "completions/0: "),
        ({"completions": [{"prompt": "p", "argument": "a", "values": [1]}]}, "completions/0/values/0: 1 is not"),
    ],
)
def test_mistakes_name_the_field(data: dict[str, Any], message: str) -> None:
    """A scenario's bad resource, template, prompt or completion is refused when read, naming the field."""
    with pytest.raises(ScenarioError) as raised:
        from_json(data, source="s.json")
    assert f"scenario s.json: {message}" in str(raised.value)


@pytest.mark.parametrize(
    ("completion", "message"),
    [
        ({"prompt": "nope", "argument": "topic", "values": []}, "completions/0/prompt: the server offers no prompt"),
        (
            {"resource_template": "db://{id}", "argument": "id", "values": []},
            "completions/0/resource_template: the server offers no resource template 'db://{id}'",
        ),
        (
            {"prompt": "summarize", "argument": "tpoic", "values": []},
            "completions/0/argument: 'tpoic' is no argument of prompt 'summarize' (it has: topic)",
        ),
    ],
)
def test_completions_for_what_the_server_does_not_offer_are_refused(completion: dict[str, Any], message: str) -> None:
    """Completion values name a prompt, template and argument the server offers, checked when applied."""
    scenario = from_json({"prompts": [PROMPT], "completions": [completion]})
    with pytest.raises(ScenarioError, match=re.escape(message)):
        scenario.apply(TestMcpServer())


def test_completions_may_name_a_prompt_of_the_preset() -> None:
    """A completion may name what a preset scripts, not only what the scenario itself declares."""
    server = TestMcpServer(preset="conformance")
    from_json({"completions": [{"prompt": "test_prompt_with_arguments", "argument": "arg2", "values": ["x"]}]}).apply(
        server
    )
    assert server.offerings.completions[("ref/prompt", "test_prompt_with_arguments", "arg2")] == ("x",)


def test_add_offering_checks_one_item_and_answers_its_listing_entry() -> None:
    """`add_offering` (the admin API's) takes one item of a key, checked, and returns its listing entry."""
    server = TestMcpServer()
    assert add_offering(server, "prompts", PROMPT)["name"] == "summarize"
    with pytest.raises(ScenarioError, match="uri"):
        add_offering(server, "resources", {"text": "x"})
