"""The `mcp_server` marker: settings for one test, on a server kept for tests that ask the same."""

from __future__ import annotations

import pytest


def test_marker_configures_the_server_for_one_test(pytester: pytest.Pytester) -> None:
    """name, page_size, response_mode, required_headers and preset reach the server; unmarked tests get defaults."""
    pytester.makepyfile(
        """
        import httpx2
        import pytest

        HEADERS = {"accept": "application/json, text/event-stream", "Authorization": "Bearer tok-1234"}
        INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "c", "version": "1"}}}

        @pytest.mark.mcp_server(
            name="gh", page_size=2, response_mode="sse", preset="demo",
            required_headers={"Authorization": "Bearer tok-1234"},
        )
        def test_marked(mcp_server):
            assert mcp_server.name == "gh"
            assert "create_ticket" in mcp_server.tools
            assert httpx2.post(mcp_server.url, json=INIT, headers={"accept": HEADERS["accept"]}).status_code == 401
            with httpx2.Client(headers=HEADERS) as client:
                answer = client.post(mcp_server.url, json=INIT)
                assert answer.headers["content-type"].startswith("text/event-stream")
                assert '"name":"gh"' in answer.text
                session = {"mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
                listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
                page = client.post(mcp_server.url, json=listing, headers=session)
                assert page.text.count('"inputSchema"') == 2 and "nextCursor" in page.text

        def test_unmarked(mcp_server):
            assert mcp_server.name == "test" and mcp_server.tools == {}
            answer = httpx2.post(mcp_server.url, json=INIT, headers={"accept": HEADERS["accept"]})
            assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_same_settings_share_a_server_and_defaults_are_the_shared_one(pytester: pytest.Pytester) -> None:
    """Tests asking the same settings reuse one server; asking for a default value is no new server."""
    pytester.makepyfile(
        """
        import pytest

        servers = {}

        @pytest.mark.mcp_server(page_size=3)
        def test_a(mcp_server):
            servers["a"] = mcp_server

        @pytest.mark.mcp_server(page_size=3, required_headers={"X-Key": "k"})
        def test_b(mcp_server):
            servers["b"] = mcp_server

        @pytest.mark.mcp_server(name="test", response_mode="json")
        def test_c(mcp_server):
            servers["c"] = mcp_server

        def test_d(mcp_server):
            servers["d"] = mcp_server
            assert servers["a"] is servers["b"]
            assert servers["c"] is servers["d"] is not servers["a"]
        """
    )
    pytester.runpytest().assert_outcomes(passed=4)


def test_marker_on_module_and_function_merge_closest_wins(pytester: pytest.Pytester) -> None:
    """A module's marker applies to its tests; a test's own marker overrides keywords it repeats."""
    pytester.makepyfile(
        """
        import pytest

        pytestmark = pytest.mark.mcp_server(name="mod", page_size=5)

        def test_module(mcp_server):
            assert mcp_server.name == "mod"

        @pytest.mark.mcp_server(name="own")
        def test_own(mcp_server):
            assert mcp_server.name == "own"
        """
    )
    pytester.runpytest().assert_outcomes(passed=2)


def test_marker_mistakes_name_the_keywords(pytester: pytest.Pytester) -> None:
    """An unknown keyword or a positional argument errors with what the marker takes."""
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.mcp_server(pagesize=2)
        def test_typo(mcp_server):
            pass

        @pytest.mark.mcp_server("gh")
        def test_positional(mcp_server):
            pass
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*unknown keyword pagesize; it takes *page_size*preset*required_headers*",
            "*takes keywords only, not ('gh',)*",
        ]
    )


def test_marker_is_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    """`pytest --markers` lists mcp_server, so --strict-markers accepts it."""
    result = pytester.runpytest("--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mcp_server(name=..., page_size=*configure the mcp_server fixture*"])
