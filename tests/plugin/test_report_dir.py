"""`--mcp-report DIR`: one HTML diagram per failing test that used our servers, its path in the failure report,
none for passing tests, credentials hidden, and a link in pytest-html's report where that plugin is installed."""

from __future__ import annotations

import importlib.util

import pytest
from node_trees import on_ci

from mcp_testkit._plugin.diagrams import file_name

TESTS = """
import httpx2
import pytest

HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}

def initialize(url, **headers):
    return httpx2.post(url, json=INIT, headers={**HEADERS, **headers})

@pytest.mark.mcp_server(required_headers={"Authorization": "Bearer marker-secret-1"})
def test_fails(mcp_server):
    initialize(mcp_server.url, authorization="Bearer marker-secret-1")
    assert False, "the bridge did something wrong"

@pytest.mark.parametrize("case", ["a/b", "c d"])
def test_fails_too(mcp_server, case):
    initialize(mcp_server.url)
    assert case == "never"

def test_passes(mcp_server):
    initialize(mcp_server.url)

def test_two_servers(mcp_server, mcp_server_factory):
    other = mcp_server_factory(name="upstream")
    initialize(mcp_server.url)
    initialize(other.url)
    assert False

def test_without_servers():
    assert False
"""


def test_one_diagram_per_failing_test_and_none_for_passing_ones(pytester: pytest.Pytester) -> None:
    """Each failing test that used a server gets one file (a file a server when it used two), named after its node
    id and titled with it as code; the failure report prints the path under the journal; passing tests and tests
    without servers get none."""
    pytester.makepyfile(test_bridge=TESTS)
    result = pytester.runpytest("--mcp-report", "diagrams")
    result.assert_outcomes(passed=1, failed=5)
    written = sorted(path.name for path in (pytester.path / "diagrams").iterdir())
    assert written == sorted(
        [
            "test_bridge.py_test_fails.html",
            "test_bridge.py_test_fails_too_a_b.html",
            "test_bridge.py_test_fails_too_c_d.html",
            "test_bridge.py_test_two_servers--test.html",
            "test_bridge.py_test_two_servers--upstream.html",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_fails _*",
            "*- mcp journal -*",
            "#1 POST session=* initialize -> 200",
            "diagram: */diagrams/test_bridge.py_test_fails.html",
        ]
    )
    assert result.stdout.str().count("\ndiagram: ") == 5
    page = (pytester.path / "diagrams" / "test_bridge.py_test_fails.html").read_text(encoding="utf-8")
    assert 'class="arrow request' in page
    assert "<h1><code>test_bridge.py::test_fails</code>: server &#x27;test&#x27;</h1>" in page
    assert "marker-secret-1" not in page


def test_ini_key_and_journal_never(pytester: pytest.Pytester) -> None:
    """The ini key `mcp_report` works like the option (relative to the ini file); with --mcp-journal=never the
    path still shows, in its own "mcp report" section."""
    pytester.makepyfile(test_bridge=TESTS)
    ini = pytester.path / "tox.ini"  # pytester.makeini writes tox.ini
    ini.write_text(ini.read_text().rstrip() + "\nmcp_report = out/mcp\n")
    result = pytester.runpytest("--mcp-journal=never", "-k", "test_fails and not too")
    result.assert_outcomes(failed=1)
    assert (pytester.path / "out" / "mcp" / "test_bridge.py_test_fails.html").is_file()
    result.stdout.fnmatch_lines(["*- mcp report -*", "diagram: *out/mcp/test_bridge.py_test_fails.html"])
    assert "mcp journal" not in result.stdout.str()


def test_without_the_option_no_file_is_written(pytester: pytest.Pytester) -> None:
    """Without --mcp-report (or its ini key) a failing test writes nothing and its report names no diagram."""
    pytester.makepyfile(test_bridge=TESTS)
    result = pytester.runpytest("-k", "test_fails and not too")
    result.assert_outcomes(failed=1)
    assert "diagram:" not in result.stdout.str()
    assert not list(pytester.path.rglob("*.html"))


def test_file_names_are_safe_and_distinct() -> None:
    """A node id becomes a file name with no separator or space; a very long one is cut and keeps a hash."""
    assert file_name("tests/test_x.py::TestA::test_y[a/b c]") == "tests_test_x.py_TestA_test_y_a_b_c.html"
    assert file_name("t.py::test", "up stream") == "t.py_test--up_stream.html"
    long_a, long_b = file_name("t.py::test[" + "x" * 300 + "a]"), file_name("t.py::test[" + "x" * 300 + "b]")
    assert long_a != long_b
    assert len(long_a) < 150


def _pytest_html() -> None:
    """pytest-html, from the [dev] extras; without it the test skips saying so, or fails under CI=true."""
    if importlib.util.find_spec("pytest_html") is None:
        reason = "pytest-html is not installed (pip install -e '.[dev]'), and the report-attachment test needs it"
        if on_ci():
            pytest.fail(f"{reason}; under CI=true it must not skip", pytrace=False)
        pytest.skip(reason)


def test_diagram_is_linked_from_the_pytest_html_report(pytester: pytest.Pytester) -> None:
    """With pytest-html, the failing test's row in its report links the diagram, relative to the report."""
    _pytest_html()
    pytester.makepyfile(test_bridge=TESTS)
    result = pytester.runpytest("-p", "pytest_html", "--mcp-report", "diagrams", "--html", "report/index.html",
                                "-k", "test_fails and not too or test_passes")
    result.assert_outcomes(passed=1, failed=1)
    report = (pytester.path / "report" / "index.html").read_text(encoding="utf-8")
    assert "../diagrams/test_bridge.py_test_fails.html" in report
    assert "mcp diagram: test" in report
