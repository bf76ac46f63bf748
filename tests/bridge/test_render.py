"""Rendering of ``tools/call`` results into the text a model reads (rule 10), without a server."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest

from mcp_testkit.bridge import render_result


def _result(**fields: Any) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult.model_validate(fields)


def test_text_blocks_join_with_newlines() -> None:
    """Text blocks pass through verbatim, joined with one newline each."""
    result = _result(content=[{"type": "text", "text": "a\n"}, {"type": "text", "text": " b "}])
    assert render_result(result) == "a\n\n b "


@pytest.mark.parametrize(
    ("block", "text"),
    [
        ({"type": "image", "data": "aGk=", "mimeType": "image/png"}, "[image: image/png]"),
        ({"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}, "[audio: audio/wav]"),
        (
            {"type": "resource_link", "name": "r", "uri": "file:///report.pdf"},
            "[resource link: file:///report.pdf]",
        ),
        (
            {
                "type": "resource",
                "resource": {"uri": "file:///b.bin", "mimeType": "application/octet-stream", "blob": "aGk="},
            },
            "[resource: file:///b.bin (application/octet-stream)]",
        ),
        (
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "aGk="}},
            "[resource: file:///b.bin]",
        ),
        ({"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}}, "inside"),
    ],
    ids=["image", "audio", "resource-link", "blob", "blob-without-mime", "text-resource"],
)
def test_placeholders_for_other_blocks(block: dict[str, Any], text: str) -> None:
    """Each non-text block becomes its placeholder; an embedded text resource gives its text."""
    assert render_result(_result(content=[block])) == text


def test_structured_content_without_blocks_is_compact_sorted_json() -> None:
    """With no content blocks the result is structuredContent as compact JSON with sorted keys."""
    result = _result(content=[], structuredContent={"z": {"y": 1, "x": [1, 2]}, "a": "é"})
    assert render_result(result) == '{"a":"é","z":{"x":[1,2],"y":1}}'


def test_blocks_win_over_structured_content() -> None:
    """When both are present the content blocks are what the model reads."""
    result = _result(content=[{"type": "text", "text": "t"}], structuredContent={"k": 1})
    assert render_result(result) == "t"


def test_empty_result_is_empty_text() -> None:
    """No blocks and no structured content render as the empty string."""
    assert render_result(_result(content=[])) == ""


def test_rendering_is_deterministic() -> None:
    """The same result renders to the same text however its keys were ordered."""
    one = _result(content=[], structuredContent={"a": 1, "b": {"c": 2, "d": 3}})
    two = _result(content=[], structuredContent={"b": {"d": 3, "c": 2}, "a": 1})
    assert render_result(one) == render_result(two)
