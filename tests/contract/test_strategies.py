"""Tests of `mcp_testkit.strategies`: every public strategy draws valid values, options are checked eagerly,
`st.from_type` knows the MCP types, and importing the package stays light."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from typing import Any

import mcp_types
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import NoSuchExample

from mcp_testkit import faults
from mcp_testkit import strategies as mst

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
BLOCK_KINDS = ("text", "image", "audio", "resource_link", "resource")
FIND = settings(database=None, max_examples=2000, suppress_health_check=list(HealthCheck))


def _roundtrip_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


# -- tools and catalogues -------------------------------------------------------------------------


@given(name=mst.tool_names())
def test_tool_names_match_the_spec(name: str) -> None:
    """tool_names() draws 1-128 letters, digits, '_', '-' and '.', as the MCP spec allows."""
    assert TOOL_NAME.match(name)


@given(name=mst.tool_names(min_size=3, max_size=5))
def test_tool_names_respect_sizes(name: str) -> None:
    """tool_names(min_size, max_size) bounds the length of every name."""
    assert 3 <= len(name) <= 5


@given(tool=mst.tools())
def test_tools_validate_as_mcp_tools(tool: mcp_types.Tool) -> None:
    """tools() draws mcp_types.Tool values that survive a JSON round trip through Tool.model_validate."""
    assert isinstance(tool, mcp_types.Tool)
    assert TOOL_NAME.match(tool.name)
    data = _roundtrip_json(tool.model_dump(by_alias=True, exclude_none=True, mode="json"))
    assert mcp_types.Tool.model_validate(data) == tool
    assert tool.input_schema["type"] == "object"


@given(tool=mst.tools(annotations=False, schemas=False))
def test_tools_without_annotations_or_schemas(tool: mcp_types.Tool) -> None:
    """tools(annotations=False, schemas=False) draws bare tools: no annotations, an empty object schema."""
    assert tool.annotations is None
    assert tool.input_schema == {"type": "object"}
    assert tool.output_schema is None


@given(tool=mst.tools(names=st.sampled_from(["alpha", "beta"])))
def test_tools_take_their_names_from_the_given_strategy(tool: mcp_types.Tool) -> None:
    """tools(names=...) names every tool from the strategy it is given."""
    assert tool.name in ("alpha", "beta")


def test_tools_cover_annotations_and_schemas() -> None:
    """tools() draws tools with annotations, with an output schema and with schema properties."""
    assert find(mst.tools(), lambda t: t.annotations is not None, settings=FIND).annotations is not None
    assert find(mst.tools(), lambda t: t.output_schema is not None, settings=FIND).output_schema is not None
    assert find(mst.tools(), lambda t: bool(t.input_schema.get("required")), settings=FIND).input_schema["properties"]


@given(catalogue=mst.catalogues(min_size=2, max_size=6))
def test_catalogues_have_unique_names_within_bounds(catalogue: list[mcp_types.Tool]) -> None:
    """catalogues() draws between min_size and max_size tools with unique names."""
    names = [tool.name for tool in catalogue]
    assert 2 <= len(catalogue) <= 6
    assert len(set(names)) == len(names)
    assert all(isinstance(tool, mcp_types.Tool) for tool in catalogue)


def test_catalogues_reach_their_bounds() -> None:
    """catalogues() draws empty catalogues and ones of exactly max_size."""
    small = mst.catalogues(max_size=3, annotations=False, schemas=False)
    assert find(small, lambda c: len(c) == 0, settings=FIND) == []
    assert len(find(small, lambda c: len(c) == 3, settings=FIND)) == 3


# -- results ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", BLOCK_KINDS)
def test_content_blocks_cover_every_kind(kind: str) -> None:
    """content_blocks() draws blocks of every kind."""
    block = find(mst.content_blocks(), lambda b: b.type == kind, settings=FIND)
    assert block.type == kind


@pytest.mark.parametrize("contents", [mcp_types.TextResourceContents, mcp_types.BlobResourceContents])
def test_content_blocks_embed_text_and_blob_resources(contents: type) -> None:
    """content_blocks() embeds both text and blob resources."""
    block = find(
        mst.content_blocks(), lambda b: b.type == "resource" and isinstance(b.resource, contents), settings=FIND
    )
    assert isinstance(block.resource, contents)


@given(block=mst.content_blocks(kinds=["image", "audio"]))
def test_content_blocks_keep_to_the_kinds_asked_for(block: Any) -> None:
    """content_blocks(kinds=...) draws only the kinds named."""
    assert block.type in ("image", "audio")


@given(result=mst.call_results())
def test_call_results_round_trip(result: mcp_types.CallToolResult) -> None:
    """call_results() draws CallToolResult values that round-trip through CallToolResult.model_validate."""
    data = _roundtrip_json(result.model_dump(by_alias=True, exclude_none=True, mode="json"))
    assert mcp_types.CallToolResult.model_validate(data) == result
    assert len(result.content) <= 4


def test_call_results_cover_structured_content_and_errors() -> None:
    """call_results() draws results with structuredContent, with isError, and with no content blocks."""
    assert find(mst.call_results(), lambda r: r.structured_content, settings=FIND).structured_content
    assert find(mst.call_results(), lambda r: r.is_error, settings=FIND).is_error
    assert find(mst.call_results(), lambda r: not r.content, settings=FIND).content == []


@given(result=mst.call_results(errors=False, max_blocks=1))
def test_call_results_options(result: mcp_types.CallToolResult) -> None:
    """call_results(errors=False, max_blocks=1) never draws an error and at most one block."""
    assert not result.is_error
    assert len(result.content) <= 1


# -- paging -----------------------------------------------------------------------------------------


@given(layout=mst.paging_layouts(max_tools=30, max_page_size=7))
def test_paging_layout_pages_arithmetic(layout: mst.PagingLayout) -> None:
    """A layout's page count is the fewest pages of page_size that hold every tool (one page when empty)."""
    assert 0 <= layout.tool_count <= 30
    assert 1 <= layout.page_size <= 7
    assert layout.pages * layout.page_size >= layout.tool_count
    if layout.tool_count == 0:
        assert layout.pages == 1
    else:
        assert (layout.pages - 1) * layout.page_size < layout.tool_count
    assert layout.tool_names() == [f"t{i}" for i in range(layout.tool_count)]


def test_paging_layout_examples() -> None:
    """Worked examples of PagingLayout.pages: 0/3 -> 1, 3/3 -> 1, 4/3 -> 2, 7/1 -> 7."""
    assert [mst.PagingLayout(n, size).pages for n, size in [(0, 3), (3, 3), (4, 3), (7, 1)]] == [1, 1, 2, 7]


# -- faults -----------------------------------------------------------------------------------------


@given(fault=mst.listing_faults(max_page=3))
def test_listing_faults_round_trip(fault: faults.Fault) -> None:
    """listing_faults() draws listing faults on pages 1..max_page that round-trip through JSON."""
    assert fault.listing
    assert fault.default_method == "tools/list"
    assert faults.from_json(_roundtrip_json(fault.to_json())) == fault
    page = getattr(fault, "page", None)
    assert page is None or 1 <= page <= 3


@given(fault=mst.listing_faults(detectable_only=True))
def test_listing_faults_detectable_only(fault: faults.Fault) -> None:
    """listing_faults(detectable_only=True) leaves out catalogue changes, list_changed and slow pages."""
    assert not isinstance(fault, (faults.CatalogueChange, faults.ListChanged, faults.SlowPage))


@pytest.mark.parametrize(
    "kind",
    [faults.RepeatCursor, faults.StuckCursor, faults.DuplicateTool, faults.EndlessPages, faults.CatalogueChange],
)
def test_listing_faults_cover_kinds(kind: type) -> None:
    """listing_faults() draws each kind of listing fault."""
    assert isinstance(find(mst.listing_faults(), lambda f: isinstance(f, kind), settings=FIND), kind)


@given(fault=mst.call_faults())
def test_call_faults_round_trip(fault: faults.Fault) -> None:
    """call_faults() draws faults that round-trip through JSON and are no listing faults."""
    assert isinstance(fault, faults.Fault)
    assert not fault.listing
    assert not fault.stdio_only
    assert faults.from_json(_roundtrip_json(fault.to_json())) == fault


@given(fault=mst.call_faults(transient_only=True))
def test_call_faults_transient_only(fault: faults.Fault) -> None:
    """call_faults(transient_only=True) draws only lost connections (dropped, reset, cut) and sessions."""
    assert isinstance(
        fault, (faults.Drop, faults.EndStream, faults.LoseSession, faults.Restart, faults.ResetPeer, faults.LimitData)
    )


@given(fault=mst.call_faults(auth=False))
def test_call_faults_without_auth(fault: faults.Fault) -> None:
    """call_faults(auth=False) never draws a 401 or 403."""
    assert not (isinstance(fault, faults.HttpStatus) and fault.status in (401, 403))


@given(fault=mst.call_faults(era="stateless"))
def test_stateless_call_faults_have_no_sessions(fault: faults.Fault) -> None:
    """call_faults(era="stateless") never draws a session fault (there are no sessions), and round-trips."""
    assert "stateless" in fault.eras
    assert not isinstance(fault, (faults.LoseSession, faults.Restart, faults.ExpireSession))
    assert faults.from_json(_roundtrip_json(fault.to_json())) == fault


@given(fault=mst.call_faults(transient_only=True, era="stateless"))
def test_stateless_transient_faults_are_lost_connections(fault: faults.Fault) -> None:
    """call_faults(transient_only=True, era="stateless") draws only dropped, reset or cut connections and ended
    streams."""
    assert isinstance(fault, (faults.Drop, faults.EndStream, faults.ResetPeer, faults.LimitData))


BYTE_KINDS = [faults.Latency, faults.Bandwidth, faults.Slice, faults.LimitData, faults.ResetPeer, faults.SlowClose]


@pytest.mark.parametrize("kind", BYTE_KINDS, ids=[kind.__name__ for kind in BYTE_KINDS])
@pytest.mark.parametrize("era", ["handshake", "stateless"])
def test_call_faults_draw_each_byte_fault(kind: type, era: str) -> None:
    """call_faults() draws each fault at the level of bytes, in either era; byte_faults=False none of them."""
    assert isinstance(find(mst.call_faults(era=era), lambda f: isinstance(f, kind), settings=FIND), kind)
    with pytest.raises(NoSuchExample):
        find(mst.call_faults(era=era, byte_faults=False), lambda f: isinstance(f, kind), settings=FIND)


@pytest.mark.parametrize("kind", [faults.ResetPeer, faults.LimitData])
def test_transient_call_faults_draw_the_cuts(kind: type) -> None:
    """call_faults(transient_only=True) draws a reset and a cut connection, which a resilient client may retry."""
    assert isinstance(find(mst.call_faults(transient_only=True), lambda f: isinstance(f, kind), settings=FIND), kind)


@given(fault=mst.call_faults())
def test_drawn_byte_faults_stay_fast(fault: faults.Fault) -> None:
    """A drawn byte fault costs an example a few milliseconds at most, and a cut always falls inside the answer."""
    if isinstance(fault, faults.Latency):
        assert fault.mean_s + fault.jitter_s <= 0.006
    if isinstance(fault, faults.Slice):
        assert fault.pieces <= 4
        assert fault.gap_s <= 0.001
    if isinstance(fault, faults.Bandwidth):
        assert fault.bytes_per_s >= 16_000
    if isinstance(fault, faults.SlowClose):
        assert fault.delay_s <= 0.01
    if isinstance(fault, faults.LimitData):
        assert fault.bytes <= 32


@pytest.mark.parametrize("kind", [faults.HeaderMismatch, faults.UnsupportedVersion, faults.MissingCapability])
def test_stateless_call_faults_cover_the_eras_refusals(kind: type) -> None:
    """call_faults(era="stateless") draws each of the era's own refusals; call_faults() none of them."""
    assert isinstance(find(mst.call_faults(era="stateless"), lambda f: isinstance(f, kind), settings=FIND), kind)
    with pytest.raises(NoSuchExample):
        find(mst.call_faults(), lambda f: isinstance(f, kind), settings=FIND)


def test_call_faults_refuses_an_unknown_era() -> None:
    """call_faults(era=...) takes 'handshake' or 'stateless' and names them otherwise."""
    with pytest.raises(ValueError, match="call_faults: era must be 'handshake' or 'stateless', not '2026'"):
        mst.call_faults(era="2026")


@pytest.mark.parametrize("status", [401, 403, 404])
def test_call_faults_cover_statuses(status: int) -> None:
    """call_faults() draws the auth statuses and the lost-session 404."""
    fault = find(mst.call_faults(), lambda f: isinstance(f, faults.HttpStatus) and f.status == status, settings=FIND)
    assert fault == faults.HttpStatus(status)


@given(schedule=mst.fault_schedules(tools=["read", "write"], max_size=4))
def test_fault_schedules_aim_at_the_given_tools(schedule: list[faults.Rule]) -> None:
    """fault_schedules(tools=...) draws at most max_size rules, each on tools/call of a given tool or on any
    message, which round-trip through JSON."""
    assert len(schedule) <= 4
    for rule in schedule:
        assert isinstance(rule, faults.Rule)
        assert 1 <= rule.nth <= 3
        if rule.tool is None:
            assert rule.method == rule.fault.default_method == "*"
        else:
            assert rule.tool in ("read", "write")
            assert rule.method == "tools/call"
        assert faults.Rule.from_json(_roundtrip_json(rule.to_json())) == rule


@given(schedule=mst.fault_schedules(faults=mst.listing_faults(), max_size=2))
def test_fault_schedules_without_tools_use_the_fault_method(schedule: list[faults.Rule]) -> None:
    """fault_schedules() with listing faults and no tools aims every rule at tools/list."""
    assert all(rule.method == "tools/list" and rule.tool is None for rule in schedule)


def test_fault_schedules_reach_max_size() -> None:
    """fault_schedules() draws empty schedules and ones of max_size rules."""
    assert find(mst.fault_schedules(max_size=3), lambda s: not s, settings=FIND) == []
    assert len(find(mst.fault_schedules(max_size=3), lambda s: len(s) == 3, settings=FIND)) == 3


# -- eager option checks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: mst.tool_names(min_size=0),
        lambda: mst.tool_names(max_size=129),
        lambda: mst.tool_names(min_size=5, max_size=4),
        lambda: mst.catalogues(min_size=-1),
        lambda: mst.catalogues(min_size=3, max_size=2),
        lambda: mst.catalogues(max_size="many"),
        lambda: mst.content_blocks(kinds=[]),
        lambda: mst.content_blocks(kinds=["text", "video"]),
        lambda: mst.call_results(max_blocks=-1),
        lambda: mst.paging_layouts(max_tools=-1),
        lambda: mst.paging_layouts(max_page_size=0),
        lambda: mst.listing_faults(max_page=1),
        lambda: mst.fault_schedules(max_size=-1),
    ],
    ids=[
        "tool_names-min0",
        "tool_names-max129",
        "tool_names-min>max",
        "catalogues-min<0",
        "catalogues-min>max",
        "catalogues-max-str",
        "content_blocks-empty",
        "content_blocks-video",
        "call_results-max<0",
        "paging_layouts-tools<0",
        "paging_layouts-page0",
        "listing_faults-page1",
        "fault_schedules-max<0",
    ],
)
def test_bad_options_raise_when_called(make: Any) -> None:
    """A bad option raises ValueError when the strategy is made, not later when it is drawn from."""
    with pytest.raises(ValueError, match=r"\w+: "):
        make()


# -- st.from_type ----------------------------------------------------------------------------------


@given(tool=st.from_type(mcp_types.Tool), result=st.from_type(mcp_types.CallToolResult))
def test_from_type_uses_the_registered_strategies(tool: mcp_types.Tool, result: mcp_types.CallToolResult) -> None:
    """st.from_type(mcp_types.Tool / CallToolResult) draws valid values through the registered strategies."""
    assert isinstance(tool, mcp_types.Tool)
    assert TOOL_NAME.match(tool.name)
    assert isinstance(result, mcp_types.CallToolResult)


_FROM_TYPE = """
import re
{imports}
from hypothesis import given, settings, strategies as st

@settings(max_examples=20, database=None)
@given(tool=st.from_type(mcp_types.Tool), result=st.from_type(mcp_types.CallToolResult))
def check(tool, result):
    assert isinstance(tool, mcp_types.Tool) and re.match(r"^[A-Za-z0-9_.-]{{1,128}}$", tool.name), tool
    assert isinstance(result, mcp_types.CallToolResult), result

check()
print("from_type ok")
"""


@pytest.mark.parametrize(
    "imports", ["import hypothesis\nimport mcp_types", "import mcp_types\nimport hypothesis"], ids=["first", "after"]
)
def test_from_type_whichever_is_imported_first(imports: str) -> None:
    """st.from_type works in a fresh interpreter whether hypothesis is imported before mcp_types or after."""
    done = subprocess.run(
        [sys.executable, "-c", _FROM_TYPE.format(imports=imports)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "from_type ok"


def test_import_stays_light() -> None:
    """Importing mcp_testkit and hypothesis (as every pytest run does) imports neither uvicorn nor mcp_types."""
    code = textwrap.dedent(
        """
        import sys
        import mcp_testkit, hypothesis
        heavy = sorted(name for name in ("uvicorn", "mcp_types", "mcp", "starlette") if name in sys.modules)
        print(heavy)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_all_is_sorted_and_complete() -> None:
    """strategies.__all__ is sorted and names every public strategy."""
    assert mst.__all__ == sorted(mst.__all__)
    public = {
        name
        for name, value in vars(mst).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == mst.__name__
    }
    assert public == set(mst.__all__)
