"""Fail closed: a scripted fault that never fired fails the test at teardown, unless the marker relaxes it."""

from __future__ import annotations

import pytest

SERVER_CALL = """
import httpx2
import pytest
from mcp_testkit import faults

HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}}


def call_once(server):
    with httpx2.Client(headers=HEADERS) as client:
        session = client.post(server.url, json=INIT).headers["mcp-session-id"]
        headers = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
        return client.post(server.url, json=CALL, headers=headers)
"""


def test_a_fault_that_never_fired_fails_the_test_naming_it_and_the_way_out(pytester: pytest.Pytester) -> None:
    """A passing body whose scripted fault never fired fails, naming the fault and `assert_all_fired=False`."""
    pytester.makepyfile(
        SERVER_CALL
        + """
def test_unfired(mcp_server):
    mcp_server.tool("t", returns="ok")
    mcp_server.fail_next_call(faults.ProtocolError(-32000, "down"), tool="t")
    mcp_server.inject(faults.PageError(3))  # no page 3: never fires
    assert call_once(mcp_server).status_code == 200
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*server 'test': 1 scripted fault(s) never fired:*",
            "*PageError(page=3*",
            "*@pytest.mark.mcp_server(assert_all_fired=False)*",
        ]
    )
    result.stdout.no_fnmatch_line("*ProtocolError(*(method=*")  # the fault that fired is not listed


def test_every_fault_fired_passes(pytester: pytest.Pytester) -> None:
    """A test whose scripted faults all fired passes, as a test without faults does."""
    pytester.makepyfile(
        SERVER_CALL
        + """
def test_fired(mcp_server):
    mcp_server.tool("t", returns="ok")
    mcp_server.fail_next_call(faults.ProtocolError(-32000, "down"), tool="t")
    assert "down" in call_once(mcp_server).text


def test_no_fault(mcp_server):
    mcp_server.tool("t", returns="ok")
"""
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_the_marker_relaxes_the_check_for_a_test_or_a_module(pytester: pytest.Pytester) -> None:
    """`assert_all_fired=False` on a test, or on a module with `pytestmark`, lets a fault stay unfired."""
    pytester.makepyfile(
        test_one="""
import pytest
from mcp_testkit import faults


@pytest.mark.mcp_server(assert_all_fired=False)
def test_relaxed(mcp_server):
    mcp_server.inject(faults.PageError(3))


@pytest.mark.mcp_server(assert_all_fired=False, name="gh")
def test_relaxed_with_settings(mcp_server):
    assert mcp_server.name == "gh"
    mcp_server.inject(faults.PageError(3))


def test_strict(mcp_server):
    mcp_server.inject(faults.PageError(3))
""",
        test_module="""
import pytest
from mcp_testkit import faults

pytestmark = pytest.mark.mcp_server(assert_all_fired=False)


def test_relaxed_by_the_module(mcp_server):
    mcp_server.inject(faults.PageError(3))


@pytest.mark.mcp_server(assert_all_fired=True)
def test_strict_again(mcp_server):
    mcp_server.inject(faults.PageError(3))
""",
    )
    result = pytester.runpytest("-rf")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(["FAILED test_module.py::test_strict_again*", "FAILED test_one.py::test_strict*"])


def test_factory_servers_fail_closed_too(pytester: pytest.Pytester) -> None:
    """A factory server's unfired fault fails the test; the marker relaxes it there as well."""
    pytester.makepyfile(
        """
import pytest
from mcp_testkit import faults


def test_strict(mcp_server_factory):
    mcp_server_factory(name="gh").inject(faults.PageError(3))


@pytest.mark.mcp_server(assert_all_fired=False)
def test_relaxed(mcp_server_factory):
    mcp_server_factory(name="gh").inject(faults.PageError(3))
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*server 'gh': 1 scripted fault(s) never fired:*"])


def test_a_failing_test_reports_its_own_failure_only(pytester: pytest.Pytester) -> None:
    """A test that fails for its own reason is not also reported for the faults it never reached."""
    pytester.makepyfile(
        """
from mcp_testkit import faults


def test_fails(mcp_server):
    mcp_server.inject(faults.PageError(3))
    assert 1 == 2, "its own reason"
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*its own reason*"])
    result.stdout.no_fnmatch_line("*never fired*")


def test_a_wrong_value_of_the_marker_keyword_is_named(pytester: pytest.Pytester) -> None:
    """`assert_all_fired` takes a bool: anything else fails the test saying so."""
    pytester.makepyfile(
        """
import pytest


@pytest.mark.mcp_server(assert_all_fired="no")
def test_wrong(mcp_server):
    pass
"""
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*assert_all_fired takes True or False, not 'no'*"])
