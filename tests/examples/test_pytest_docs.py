"""The examples of docs/pytest.md, each run as a test file with pytester, so that the page never lies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).parents[2] / "docs" / "pytest.md"
EXAMPLE = re.compile(r"<!-- pytester: (?P<expect>[^>]*?) -->\n```python\n(?P<code>.*?)```", re.S)
EXAMPLES = [(m.group("expect"), m.group("code")) for m in EXAMPLE.finditer(PAGE.read_text())]


pytest_plugins = ["pytester"]


def test_every_example_is_collected() -> None:
    """The page has the examples this file expects, so a renamed marker cannot silently skip them."""
    assert len(EXAMPLES) == 6


@pytest.mark.parametrize(("expect", "code"), EXAMPLES, ids=[f"example-{i + 1}" for i in range(len(EXAMPLES))])
def test_example(pytester: pytest.Pytester, expect: str, code: str) -> None:
    """The example runs with the outcome its comment states (and a failing one shows its journal)."""
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider -p no:unraisableexception -p no:benchmark
        asyncio_default_fixture_loop_scope = function
        """
    )
    pytester.makeconftest('import pytest\n\n@pytest.fixture\ndef anyio_backend():\n    return "asyncio"\n')
    pytester.makepyfile(code)
    result = pytester.runpytest()
    outcomes = dict(word.split("=") for word in expect.split() if "=" in word)
    result.assert_outcomes(**{name: int(count) for name, count in outcomes.items()})  # type: ignore[arg-type]
    if "journal" in expect.split():
        result.stdout.fnmatch_lines(
            ["*- mcp journal -*", "server 'test' http://127.0.0.1:*/mcp: * requests", "*tools/call a -> 200*"]
        )
