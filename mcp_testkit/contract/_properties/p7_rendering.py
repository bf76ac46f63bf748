"""P7: rendering shows every valid result's content (each text, each error's text, the structured result's
JSON), the same way each time, and results whose content differs render differently."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mcp_testkit import strategies as mst
from mcp_testkit.contract._properties._property import Inputs, Property

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from mcp_testkit.adapters import BridgeAdapter
    from mcp_testkit.contract._harness import BridgeFacts, ContractHarness

__all__ = ["PROPERTY"]


def _cases(facts: BridgeFacts) -> list[Inputs]:
    import mcp_types

    data = "aGVsbG8="
    blocks: list[Any] = [
        mcp_types.TextContent(type="text", text="hello"),
        mcp_types.ImageContent(type="image", data=data, mime_type="image/png"),
        mcp_types.AudioContent(type="audio", data=data, mime_type="audio/wav"),
        mcp_types.ResourceLink(type="resource_link", uri="file:///report.pdf", name="report", mime_type=None),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.TextResourceContents(uri="memo://x", mime_type="text/plain", text="t")
        ),
        mcp_types.EmbeddedResource(
            type="resource", resource=mcp_types.BlobResourceContents(uri="memo://y", mime_type=None, blob=data)
        ),
    ]
    results = [mcp_types.CallToolResult(content=[], structured_content=None, is_error=False)]
    results += [
        mcp_types.CallToolResult(content=[block], structured_content=None, is_error=is_error)
        for is_error in (False, True)
        for block in blocks
    ]
    results += [
        mcp_types.CallToolResult(content=[], structured_content={"b": [1, None], "a": "x"}, is_error=False),
        mcp_types.CallToolResult(content=[blocks[0], blocks[0]], structured_content=None, is_error=True),
    ]
    return [{"result": result} for result in results]


def _strategies(facts: BridgeFacts) -> dict[str, SearchStrategy[Any]]:
    return {"result": mst.call_results(errors=True, max_blocks=4)}


def _labels(inputs: Inputs) -> list[str]:
    result = inputs["result"]
    kinds = sorted({block.type for block in result.content}) or ["no blocks"]
    return [*kinds, "isError" if result.is_error else "result"]


_VARIANT = "p7: another result"
"""The text of the block added to make a result whose content differs: its rendering must differ too."""


def _forms(text: str) -> tuple[str, ...]:
    """The ways a text may appear in a rendering: verbatim, or escaped in JSON (as an adapter that renders the
    whole result as JSON shows it), with or without non-ASCII escaped."""
    return (text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1])


def _leaves(value: Any) -> list[str]:
    """The keys and scalar values of a structured result, as text: what its JSON shows in any layout."""
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in (str(key), *_leaves(item))]
    if isinstance(value, list):
        return [text for item in value for text in _leaves(item)]
    return [value if isinstance(value, str) else json.dumps(value)]


def _absent(texts: list[str], rendering: str) -> list[str]:
    return [text for text in texts if text and not any(form in rendering for form in _forms(text))]


def _missing(result: Any, rendering: str) -> list[str]:
    """The texts of `result` that its rendering does not show: each text block's (error or not). A result with
    `structuredContent` may show that instead (its keys and values), as the spec makes its blocks a fallback for
    it; without blocks it must. Non-text blocks may render as the adapter's placeholders."""
    texts = _absent([block.text for block in result.content if block.type == "text"], rendering)
    if result.structured_content is None:
        return texts
    leaves = _absent(_leaves(result.structured_content), rendering)
    if not result.content or not leaves:
        return leaves
    return texts


def _variant(result: Any) -> Any:
    """`result` with one more text block (and one more structured key, where it has structured content)."""
    import mcp_types

    extra = mcp_types.TextContent(type="text", text=_VARIANT)
    update: dict[str, Any] = {"content": [*result.content, extra]}
    if result.structured_content is not None:
        update["structured_content"] = {**result.structured_content, "p7": _VARIANT}
    return result.model_copy(update=update)


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    result = inputs["result"]
    other = _variant(result)
    server = h.server
    server.tool(
        "tool", description="answers the generated result", read_only=True, answers=[result, result, other]
    )
    await h.connect(adapter)
    first = await adapter.call("tool", {})
    second = await adapter.call("tool", {})
    third = await adapter.call("tool", {})
    expected = "tool_error" if result.is_error else "ok"
    facts_ = {"first": first, "second": second, "third (another result)": third}
    if first.kind != expected or second.kind != expected or third.kind != expected:
        raise h.fail(f"a valid result did not render as {expected}", **facts_)
    if first.text != second.text:
        raise h.fail(f"the same result rendered two different ways: {first.text!r} and {second.text!r}", **facts_)
    missing = _missing(result, first.text or "")
    if missing:
        shown = ", ".join(repr(text) for text in missing[:5])
        raise h.fail(f"the rendering {first.text!r} leaves out what the result says: {shown}", **facts_)
    if third.text == first.text:
        raise h.fail(f"a result with another text block ({_VARIANT!r}) rendered the same: {third.text!r}", **facts_)


PROPERTY = Property(
    "P7",
    "Rendering shows each text, error and structured result, the same way each time",
    "rendering_is_total_and_deterministic",
    "every content block kind, structured content, error results; a result with one more text block",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee=(
        "Rendering is total, deterministic and faithful for every valid result, errors included: any mix of text, "
        "image, audio, resource links and embedded resources, `structuredContent`, `isError`. Every text block's "
        "text (an error's too) appears in the rendering, verbatim or JSON-escaped, or else (the blocks being its "
        "fallback) every key and value of the result's `structuredContent`; other blocks may render as the "
        "adapter's placeholder; a result with different content renders differently."
    ),
    breaks=(
        "crashing on an unexpected block kind; rendering one result, or one error, two ways; dropping a text, an "
        "error's text or the structured result (rendering every result as \"\")"
    ),
)
