"""The cassette file: versioned, checked against the schema shipped in the package, written for readable diffs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from mcp_testkit.cassettes import FORMAT, VERSION, Cassette, CassetteError, cassette_schema

from ._support import minimal_cassette


def test_a_recorded_cassette_is_valid_against_the_shipped_schema(http_tape: tuple[Path, Any]) -> None:
    """The schema in the package is a valid JSON Schema and a real recording satisfies it."""
    schema = cassette_schema()
    Draft202012Validator.check_schema(schema)
    data = json.loads(http_tape[0].read_text())
    assert list(Draft202012Validator(schema).iter_errors(data)) == []
    assert (data["format"], data["version"]) == (FORMAT, VERSION)
    assert data["$schema"] == schema["$id"]


def test_reading_and_writing_again_changes_nothing(http_tape: tuple[Path, Any], tmp_path: Path) -> None:
    """A loaded cassette dumps to the very text it was read from: key order and layout are stable."""
    text = http_tape[0].read_text()
    assert Cassette.loads(text).dumps() == text


def test_each_exchange_is_one_block_one_key_a_line(http_tape: tuple[Path, Any]) -> None:
    """Every exchange opens with `{`, has one key a line in a fixed order, and closes with `}`: diffs read well."""
    lines = http_tape[0].read_text().splitlines()
    start = lines.index('  "exchanges": [')
    blocks: list[list[str]] = []
    for line in lines[start + 1 : -2]:
        if line == "    {":
            blocks.append([])
        elif line.strip() not in ("}", "},"):
            blocks[-1].append(line)
    assert len(blocks) == len(Cassette.load(http_tape[0]))
    order = ["seq", "at_ms", "elapsed_ms", "transport", "era", "protocol_version", "session", "http", "request",
             "response", "events", "body", "error"]  # fmt: skip
    for block in blocks:
        keys = [json.loads(line.strip().split(": ", 1)[0]) for line in block]
        assert keys == [key for key in order if key in keys]
        assert keys[:6] == order[:6]
        assert all(line.startswith('      "') for line in block)




def test_a_bad_field_is_named_by_its_path() -> None:
    """A cassette that breaks the schema is a CassetteError naming the source and the field's path."""
    data = minimal_cassette()
    data["exchanges"][0]["era"] = "bronze"
    with pytest.raises(CassetteError, match=r"cassette tape\.json: exchanges/0/era: 'bronze' is not one of"):
        Cassette.from_json(data, source="tape.json")


def test_a_newer_format_version_is_refused_naming_both_versions() -> None:
    """A cassette from a newer mcp-testkit says which version it is and which this one reads."""
    with pytest.raises(CassetteError, match=rf"format version {VERSION + 1} .* reads version {VERSION}: upgrade"):
        Cassette.from_json(minimal_cassette(version=VERSION + 1), source="new.json")


def test_not_json_is_named(tmp_path: Path) -> None:
    """A file that is not JSON is a CassetteError naming the file."""
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(CassetteError, match=r"broken\.json: not valid JSON"):
        Cassette.load(path)


def test_calls_are_the_answered_tool_calls_in_order(http_tape: tuple[Path, Any]) -> None:
    """`Cassette.calls()` lists every answered tools/call with its tool, arguments and result, in recorded order."""
    cassette = Cassette.load(http_tape[0])
    calls = cassette.calls()
    assert [(c.tool, dict(c.arguments)) for c in calls[:2]] == [("add", {"a": 1, "b": 2}), ("add", {"a": 40, "b": 2})]
    assert [c.seq for c in calls] == sorted(c.seq for c in calls)
    assert [c.tool for c in cassette.calls("search")] == ["search", "search"]
    assert calls[0].describe() == f'#{calls[0].seq} add({{"a": 1, "b": 2}})'
