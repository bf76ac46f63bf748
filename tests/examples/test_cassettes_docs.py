"""What docs/cassettes.md shows besides runnable code (which tests/examples/test_docs.py runs): the tour's
printed report, the exchange shown, and the record line, each checked against what the code writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from mcp_testkit.cassettes import Cassette, cassette_schema

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cassettes.md"
TEXT = PAGE.read_text()
BLOCKS = re.compile(r"^```python\n(.*?)^```", re.S | re.M).findall(TEXT)
LIMIT_S = 60.0


def _after(marker: str, language: str) -> str:
    """The code block that follows `<!-- marker -->` on the page."""
    found = re.search(rf"<!-- {marker} -->\n```{language}\n(.*?)```", TEXT, re.S)
    assert found is not None, f"no block after <!-- {marker} --> in {PAGE}"
    return found.group(1)


def test_tour_prints_the_report_shown(capsys: pytest.CaptureFixture[str]) -> None:
    """The tour's verify report is the one the page shows, but for the temporary path and the port."""
    exec(compile(BLOCKS[0], str(PAGE), "exec"), {"__name__": "docs_cassettes"})
    printed = capsys.readouterr().out.splitlines()
    shown = _after("output: tour", "text").splitlines()
    where = re.compile(r"cassette \S+ against http://127\.0\.0\.1:\d+/mcp")
    assert [where.sub("WHERE", line) for line in printed] == [where.sub("WHERE", line) for line in shown]


def test_exchange_example_is_a_valid_exchange_in_the_written_order() -> None:
    """The exchange shown satisfies the schema and reads back into the very text the writer produces."""
    shown = json.loads(_after("example: exchange", "json"))
    schema = cassette_schema()
    exchange = {"$defs": schema["$defs"], "$ref": "#/$defs/exchange"}
    assert list(Draft202012Validator(exchange).iter_errors(shown)) == []
    document = {"format": "mcp-testkit cassette", "version": 1, "upstream": {"transport": "http", "url": "u"}}
    written = Cassette.from_json({**document, "exchanges": [shown]}).dumps()
    block = written.split('"exchanges": [\n')[1].rsplit("\n  ]", 1)[0]
    assert [line[4:] for line in block.splitlines()] == _after("example: exchange", "json").splitlines()


def test_the_record_line_is_read_as_the_page_says() -> None:
    """The regular expression the page gives takes the proxy URL out of the line shown."""
    line = re.search(r"```text\n(recording .*)\n```", TEXT)
    assert line is not None
    found = re.search(r" at (http://\S+)$", line.group(1))
    assert found is not None
    assert found.group(1) == "http://127.0.0.1:41457/mcp"
