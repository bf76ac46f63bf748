"""The text a model reads for a ``tools/call`` result."""

from __future__ import annotations

import json

import mcp_types

__all__ = ["render_block", "render_result"]


def render_block(block: mcp_types.ContentBlock) -> str:
    """One content block as text: text verbatim, anything else as a placeholder naming it."""
    if isinstance(block, mcp_types.TextContent):
        return block.text
    if isinstance(block, mcp_types.ImageContent):
        return f"[image: {block.mime_type}]"
    if isinstance(block, mcp_types.AudioContent):
        return f"[audio: {block.mime_type}]"
    if isinstance(block, mcp_types.ResourceLink):
        return f"[resource link: {block.uri}]"
    resource = block.resource
    if isinstance(resource, mcp_types.TextResourceContents):
        return resource.text
    if resource.mime_type:
        return f"[resource: {resource.uri} ({resource.mime_type})]"
    return f"[resource: {resource.uri}]"


def render_result(result: mcp_types.CallToolResult) -> str:
    """Content blocks joined with newlines; without any, ``structuredContent`` as compact sorted JSON."""
    if result.content:
        return "\n".join(render_block(block) for block in result.content)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return ""
