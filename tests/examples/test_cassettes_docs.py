"""The examples of docs/cassettes.md, kept as tests so that the page never lies."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp import Client

from mcp_testkit import TestMcpServer
from mcp_testkit.cassettes import Cassette, cassette_schema, record

PAGE = Path(__file__).resolve().parents[2] / "docs" / "cassettes.md"
TEXT = PAGE.read_text()
BLOCKS = re.compile(r"^```python\n(.*?)^```", re.S | re.M).findall(TEXT)
LIMIT_S = 60.0


def _after(marker: str, language: str) -> str:
    """The code block that follows `<!-- marker -->` on the page."""
    found = re.search(rf"<!-- {marker} -->\n```{language}\n(.*?)```", TEXT, re.S)
    assert found is not None, f"no block after <!-- {marker} --> in {PAGE}"
    return found.group(1)


def test_the_page_has_its_blocks() -> None:
    """The page holds the tour, the recording and replay examples and the pytest example this file expects."""
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block-{n}" for n in range(1, len(BLOCKS) + 1)])
def test_docs_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each python block runs as printed, in a fresh namespace, and its assertions hold."""
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(PAGE), "exec"), {"__name__": "docs_cassettes"})


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


def test_pytest_example_replays_a_recording(pytester: pytest.Pytester) -> None:
    """The pytest example passes on a cassette recorded from the weather server of the tour."""
    live = TestMcpServer("weather")
    live.tool("forecast", read_only=True, returns=lambda arguments: f"sunny in {arguments['city']}")
    out = pytester.path / "tapes" / "weather.json"

    async def go() -> None:
        with anyio.fail_after(LIMIT_S):
            async with live, record(live.url, out=out) as proxy_url, Client(proxy_url, mode="legacy") as client:
                await client.call_tool("forecast", {"city": "Oslo"})

    anyio.run(go)
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider -p no:unraisableexception -p no:benchmark
        asyncio_default_fixture_loop_scope = function
        """
    )
    pytester.makeconftest('import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return "asyncio"\n')
    pytester.makepyfile(test_weather=_after("pytester: cassette", "python"))
    pytester.runpytest().assert_outcomes(passed=1)
