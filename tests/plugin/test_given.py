"""`@given` with the plugin's `mcp_server`: refused by Hypothesis' function-scoped-fixture health check as it is,
and the documented pattern (reset per example, that one check suppressed) isolates every example."""

from __future__ import annotations

import pytest

WITHOUT = """
from hypothesis import given, strategies as st

@given(name=st.sampled_from(["a", "b"]))
def test_given(mcp_server, name):
    mcp_server.tool(name, returns="ok")
"""

PATTERN = """
import httpx2
from hypothesis import HealthCheck, given, settings, strategies as st

SEEN = []

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3, unique=True))
def test_given(mcp_server, names):
    mcp_server.reset()
    for name in names:
        mcp_server.tool(name, returns="ok")
    httpx2.get(mcp_server.url)
    SEEN.append(mcp_server.url)
    assert sorted(mcp_server.tools) == sorted(names)
    assert len(mcp_server.journal) == 1

def test_one_server_for_every_example():
    assert len(SEEN) > 1 and len(set(SEEN)) == 1
"""


def test_given_with_mcp_server_fails_the_health_check(pytester: pytest.Pytester) -> None:
    """As it is, a @given test taking mcp_server fails Hypothesis' function_scoped_fixture health check."""
    pytester.makepyfile(WITHOUT)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*FailedHealthCheck*", "*function_scoped_fixture*"])


def test_reset_per_example_isolates_every_example(pytester: pytest.Pytester) -> None:
    """Reset at the start of each example, the one server holds only that example's tools and requests."""
    pytester.makepyfile(PATTERN)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(passed=2)
