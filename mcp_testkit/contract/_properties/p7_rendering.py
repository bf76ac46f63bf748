"""P7: rendering is total and deterministic for every valid result."""

from __future__ import annotations

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


async def _check(h: ContractHarness, adapter: BridgeAdapter, facts: BridgeFacts, inputs: Inputs) -> None:
    result = inputs["result"]
    server = h.server
    server.tool("tool", description="answers the generated result", read_only=True, returns=result)
    await h.connect(adapter)
    first = await adapter.call("tool", {})
    second = await adapter.call("tool", {})
    expected = "tool_error" if result.is_error else "ok"
    facts_ = {"first": first, "second": second}
    if first.kind != expected or second.kind != expected:
        raise h.fail(f"a valid result did not render as {expected}", **facts_)
    if first.text != second.text:
        raise h.fail(f"the same result rendered two different ways: {first.text!r} and {second.text!r}", **facts_)


PROPERTY = Property(
    "P7",
    "Rendering is total and deterministic for every valid result",
    "rendering_is_total_and_deterministic",
    "every content block kind, structured content, error results",
    _strategies,
    _cases,
    _labels,
    _check,
    guarantee=(
        "Rendering is total and deterministic for every valid result, errors included: any mix of text, image, "
        "audio, resource links and embedded resources, `structuredContent`, `isError`."
    ),
    breaks="crashing on an unexpected block kind; rendering one result, or one error, two ways",
)
