"""Hypothesis strategies for MCP: tools, catalogues, results, paging layouts, faults and fault schedules.

Every strategy here is a function with keyword-only options, checked when it is called, that
returns a `SearchStrategy`. Use them to drive your own bridge through `TestMcpServer`:

```python
from hypothesis import given
from mcp_testkit import strategies as mst

@given(catalogue=mst.catalogues(max_size=8), layout=mst.paging_layouts())
def test_my_bridge_lists_everything(catalogue, layout): ...
```

Installing mcp-testkit also registers `mcp_types.Tool` and `mcp_types.CallToolResult`, so
`st.from_type(mcp_types.Tool)` works.
"""

from __future__ import annotations

import base64
import string
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from mcp_testkit import faults
from mcp_testkit._wire.eras import ERAS, STATELESS

if TYPE_CHECKING:
    import mcp_types
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "PagingLayout",
    "call_faults",
    "call_results",
    "catalogues",
    "content_blocks",
    "fault_schedules",
    "listing_faults",
    "paging_layouts",
    "tool_names",
    "tools",
]

_NAME_CHARS = string.ascii_letters + string.digits + "_.-"
_MIME_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_MIME_AUDIO = ("audio/wav", "audio/mpeg", "audio/ogg")
_MIME_OTHER = ("application/octet-stream", "application/pdf", "text/plain", "application/json", None)


def _check_size(min_size: int, max_size: int, what: str) -> None:
    if not isinstance(min_size, int) or min_size < 0:
        raise ValueError(f"{what}: min_size must be an int >= 0, not {min_size!r}")
    if not isinstance(max_size, int) or max_size < min_size:
        raise ValueError(f"{what}: max_size must be an int >= min_size ({min_size}), not {max_size!r}")


# -- tools --------------------------------------------------------------------------------------------


def tool_names(*, min_size: int = 1, max_size: int = 24) -> SearchStrategy[str]:
    """Valid MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`."""
    _check_size(min_size, max_size, "tool_names")
    if min_size < 1 or max_size > 128:
        raise ValueError(f"tool_names: sizes must lie within 1..128, not {min_size}..{max_size}")
    return st.text(alphabet=_NAME_CHARS, min_size=min_size, max_size=max_size)


_PROPERTY_SCHEMAS = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": {"type": "string"}},
        {"type": "string", "enum": ["a", "b", "c"]},
    ]
)


@st.composite
def _input_schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=8), max_size=4, unique=True))
    schema: dict[str, Any] = {"type": "object"}
    if names:
        schema["properties"] = {name: draw(_PROPERTY_SCHEMAS) for name in names}
        required = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
        if required:
            schema["required"] = required
    return schema


@st.composite
def _annotations(draw: st.DrawFn) -> Any:
    import mcp_types

    hint = st.none() | st.booleans()
    return mcp_types.ToolAnnotations(
        read_only_hint=draw(hint),
        destructive_hint=draw(hint),
        idempotent_hint=draw(hint),
        open_world_hint=draw(hint),
    )


@st.composite
def _tools(draw: st.DrawFn, names: SearchStrategy[str], annotations: bool, schemas: bool) -> Any:
    import mcp_types

    text = st.none() | st.text(max_size=40)
    return mcp_types.Tool(
        name=draw(names),
        title=draw(text),
        description=draw(text),
        input_schema=draw(_input_schemas()) if schemas else {"type": "object"},
        output_schema=draw(st.none() | _input_schemas()) if schemas else None,
        annotations=draw(st.none() | _annotations()) if annotations else None,
    )


def tools(
    *, names: SearchStrategy[str] | None = None, annotations: bool = True, schemas: bool = True
) -> SearchStrategy[mcp_types.Tool]:
    """Valid `mcp_types.Tool` values, with and without titles, descriptions, annotations and schemas."""
    if names is not None and not isinstance(names, st.SearchStrategy):
        raise ValueError(f"tools: names must be a strategy of tool names (e.g. tool_names()), not {names!r}")
    return _tools(names if names is not None else tool_names(), bool(annotations), bool(schemas))


def catalogues(
    *, min_size: int = 0, max_size: int = 12, annotations: bool = True, schemas: bool = True
) -> SearchStrategy[list[mcp_types.Tool]]:
    """Lists of tools with unique names, as one server offers them."""
    _check_size(min_size, max_size, "catalogues")
    return st.lists(
        tools(annotations=annotations, schemas=schemas),
        min_size=min_size,
        max_size=max_size,
        unique_by=lambda tool: tool.name,
    )


# -- results ------------------------------------------------------------------------------------------

_DATA = st.binary(min_size=1, max_size=24).map(lambda raw: base64.b64encode(raw).decode())
_URIS = st.sampled_from(["file:///report.pdf", "https://example.com/a", "test://resource/1", "memo://x"])


@st.composite
def _content_block(draw: st.DrawFn, kinds: Sequence[str]) -> Any:
    import mcp_types

    kind = draw(st.sampled_from(kinds))
    if kind == "text":
        return mcp_types.TextContent(type="text", text=draw(st.text(max_size=40)))
    if kind == "image":
        return mcp_types.ImageContent(type="image", data=draw(_DATA), mime_type=draw(st.sampled_from(_MIME_IMAGES)))
    if kind == "audio":
        return mcp_types.AudioContent(type="audio", data=draw(_DATA), mime_type=draw(st.sampled_from(_MIME_AUDIO)))
    if kind == "resource_link":
        return mcp_types.ResourceLink(
            type="resource_link",
            uri=draw(_URIS),
            name=draw(st.text(alphabet=string.ascii_letters, min_size=1, max_size=10)),
            mime_type=draw(st.sampled_from(_MIME_OTHER)),
        )
    mime = draw(st.sampled_from(_MIME_OTHER))
    if draw(st.booleans()):
        contents: Any = mcp_types.TextResourceContents(uri=draw(_URIS), mime_type=mime, text=draw(st.text(max_size=30)))
    else:
        contents = mcp_types.BlobResourceContents(uri=draw(_URIS), mime_type=mime, blob=draw(_DATA))
    return mcp_types.EmbeddedResource(type="resource", resource=contents)


_BLOCK_KINDS = ("text", "image", "audio", "resource_link", "resource")


def content_blocks(*, kinds: Sequence[str] = _BLOCK_KINDS) -> SearchStrategy[Any]:
    """Content blocks of every kind: text, image, audio, resource link, embedded text or blob resource."""
    unknown = sorted(set(kinds) - set(_BLOCK_KINDS))
    if unknown or not kinds:
        raise ValueError(f"content_blocks: kinds must be a non-empty subset of {_BLOCK_KINDS}, not {kinds!r}")
    return _content_block(tuple(kinds))


_JSON_SCALARS = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=12)
_STRUCTURED = st.dictionaries(
    st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6),
    st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=5),
    max_size=4,
)


@st.composite
def _call_result(draw: st.DrawFn, errors: bool, max_blocks: int) -> Any:
    import mcp_types

    return mcp_types.CallToolResult(
        content=draw(st.lists(content_blocks(), max_size=max_blocks)),
        structured_content=draw(st.none() | _STRUCTURED),
        is_error=draw(st.booleans()) if errors else False,
    )


def call_results(*, errors: bool = True, max_blocks: int = 4) -> SearchStrategy[mcp_types.CallToolResult]:
    """`CallToolResult` values: any mix of blocks, with or without `structuredContent`, `isError` or not."""
    _check_size(0, max_blocks, "call_results")
    return _call_result(bool(errors), max_blocks)


# -- paging -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PagingLayout:
    """A catalogue size and a page size: how a listing is cut into pages."""

    tool_count: int
    page_size: int

    @property
    def pages(self) -> int:
        """How many pages the listing has (an empty catalogue still has one, empty, page)."""
        return max(1, -(-self.tool_count // self.page_size))

    def tool_names(self) -> list[str]:
        """Names for the catalogue: `t0`, `t1`, ..."""
        return [f"t{index}" for index in range(self.tool_count)]


def paging_layouts(*, max_tools: int = 12, max_page_size: int = 5) -> SearchStrategy[PagingLayout]:
    """Catalogue sizes and page sizes, shrinking towards one short page."""
    _check_size(0, max_tools, "paging_layouts")
    if not isinstance(max_page_size, int) or max_page_size < 1:
        raise ValueError(f"paging_layouts: max_page_size must be an int >= 1, not {max_page_size!r}")
    return st.builds(PagingLayout, st.integers(0, max_tools), st.integers(1, max_page_size))


# -- faults -------------------------------------------------------------------------------------------


def listing_faults(*, max_page: int = 4, detectable_only: bool = False) -> SearchStrategy[faults.Fault]:
    """Faults of a `tools/list` walk, on pages 1..max_page.

    With `detectable_only`, only faults a client can notice from the pages alone: no catalogue
    change or `list_changed` (which a client only sees through notifications), no slow page.
    """
    if not isinstance(max_page, int) or max_page < 2:
        raise ValueError(f"listing_faults: max_page must be an int >= 2, not {max_page!r}")
    page = st.integers(1, max_page)
    later = st.integers(2, max_page)
    options = [
        st.builds(faults.RepeatCursor, later),
        st.builds(faults.StuckCursor, page),
        st.builds(faults.EmptyCursor, page),
        st.builds(faults.DuplicateTool, page),
        st.builds(faults.PageError, page),
        st.builds(faults.MalformedPage, page),
        st.just(faults.EndlessPages()),
        st.builds(faults.InvalidCursor, later),
    ]
    if not detectable_only:
        options += [
            st.builds(faults.SlowPage, page, st.sampled_from([0.001, 0.01])),
            st.builds(faults.CatalogueChange, later, st.just(("added",)), st.just(())),
            st.builds(faults.ListChanged, page),
        ]
    return st.one_of(options)


_TRANSPORT_FAULTS = [
    faults.Drop(),
    faults.Drop(after_execution=True),
    faults.TruncateBody(),
    faults.EndStream(),
    faults.MalformedSse(),
    faults.LoseSession(),
    faults.Restart(),
    faults.Restart(unknown_session_status=400),
    faults.Accepted(),
]


def call_faults(
    *, transient_only: bool = False, auth: bool = True, era: str = "handshake", byte_faults: bool = True
) -> SearchStrategy[faults.Fault]:
    """Faults of a `tools/call`: answers, HTTP statuses, dropped connections, lost sessions, and faults at the level
    of bytes (a connection reset or cut after a few bytes; an answer late, paced, sliced or closed late, whose bytes
    all arrive), bounded so that an example stays fast: delays of a few milliseconds, at most 4 pieces.

    With `transient_only`, only what a resilient client may retry: lost connections (dropped, reset, cut) and
    sessions. With `auth=False`, no 401/403. With `era="stateless"`, the faults of a 2026-07-28 call: no session
    faults (there are no sessions), and the era's own refusals (`HeaderMismatch`, `UnsupportedVersion`,
    `MissingCapability`, `EraDowngrade`) among the others. With `byte_faults=False`, none at the level of bytes
    (for a client that reaches the server in-process, where there is no socket to reset or pace).
    """
    if era not in ERAS:
        raise ValueError(f"call_faults: era must be 'handshake' or 'stateless', not {era!r}")
    stateless = era == STATELESS
    transport = [f for f in _TRANSPORT_FAULTS if era in f.eras]
    transient = [f for f in transport if f.transient]
    cuts = _cut_faults() if byte_faults else []
    if transient_only:
        return st.one_of([st.sampled_from(transient), *cuts])
    statuses = [400, 404, 429, 500, 503] + ([401, 403] if auth else [])
    options = [
        st.sampled_from(transport),
        *cuts,
        *(_paced_faults() if byte_faults else []),
        st.builds(faults.HttpStatus, st.sampled_from(statuses)),
        st.builds(faults.ErrorResult, st.text(alphabet=string.ascii_letters + " ", min_size=1, max_size=20)),
        st.builds(faults.ProtocolError, st.sampled_from([-32603, -32602, -32000]), st.just("scripted failure")),
        st.just(faults.Delay(0.001)),
    ]
    if stateless:
        options.append(st.sampled_from(_STATELESS_FAULTS))
    return st.one_of(options)


def _cut_faults() -> list[SearchStrategy[faults.Fault]]:
    """A connection reset (after the call ran, or before) or closed after at most 32 bytes of the answer: always
    short of a JSON-RPC answer, so always a cut."""
    return [st.builds(faults.ResetPeer, st.booleans()), st.builds(faults.LimitData, st.integers(0, 32))]


def _paced_faults() -> list[SearchStrategy[faults.Fault]]:
    """Every byte of the answer arrives, a few milliseconds late at most: late, paced, in pieces, or closed late."""
    seeds = st.integers(0, 2**16)
    return [
        st.builds(faults.Latency, st.sampled_from([0.001, 0.005]), st.sampled_from([0.0, 0.001]), seed=seeds),
        st.builds(faults.Bandwidth, st.sampled_from([16_000.0, 64_000.0])),
        st.builds(faults.Slice, seeds, st.integers(2, 4), st.just(0.001)),
        st.builds(faults.SlowClose, st.sampled_from([0.001, 0.01])),
    ]


_STATELESS_FAULTS = [
    faults.HeaderMismatch(),
    faults.UnsupportedVersion(),
    faults.MissingCapability(),
    faults.EraDowngrade(),
]


@st.composite
def _schedules(
    draw: st.DrawFn, fault_strategy: SearchStrategy[faults.Fault], tools: Sequence[str], max_size: int
) -> Any:
    rules = []
    for _ in range(draw(st.integers(0, max_size))):
        fault = draw(fault_strategy)
        tool = draw(st.sampled_from(tools)) if tools and fault.default_method == "tools/call" else None
        if tools and fault.default_method == "*":
            tool = draw(st.none() | st.sampled_from(tools))
        method = "tools/call" if tool is not None else fault.default_method
        rules.append(faults.Rule(fault, method=method, tool=tool, nth=draw(st.integers(1, 3))))
    return rules


def fault_schedules(
    *, faults: SearchStrategy[Any] | None = None, tools: Sequence[str] = (), max_size: int = 3
) -> SearchStrategy[list[Any]]:
    """Lists of fault rules (`faults.Rule`), each hitting the nth matching request, aimed at `tools`."""
    _check_size(0, max_size, "fault_schedules")
    if faults is not None and not isinstance(faults, st.SearchStrategy):
        raise ValueError(f"fault_schedules: faults must be a strategy of faults (e.g. call_faults()), not {faults!r}")
    if isinstance(tools, str) or not all(isinstance(name, str) for name in tools):
        raise ValueError(f"fault_schedules: tools must be a list of tool names, not {tools!r}")
    return _schedules(faults if faults is not None else call_faults(), tuple(tools), max_size)


# -- st.from_type -------------------------------------------------------------------------------------


def _register_types() -> None:
    import mcp_types

    st.register_type_strategy(mcp_types.Tool, tools())
    st.register_type_strategy(mcp_types.CallToolResult, call_results())


if "mcp_types" in sys.modules:  # imported first: the hook left the registering to this module (see _hypothesis_hook)
    _register_types()
