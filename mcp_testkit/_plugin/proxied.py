"""`@pytest.mark.mcp_server(upstream=...)` without a cassette: the chaos proxy in front of a live server."""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from mcp_testkit._plugin import served
from mcp_testkit._plugin.options import PROXY_KEYS

__all__ = ["chaos_proxy", "proxied_server"]


def chaos_proxy(settings: Mapping[str, Any], headers: Mapping[str, str]) -> tuple[Any, dict[str, str]]:
    """A `ChaosProxy` for the marker's `upstream` (a URL, or a stdio command as a list or a command line), and the
    headers whose values reports must hide; `pytest.fail` naming what a proxy cannot take."""
    from mcp_testkit.proxy import ChaosProxy

    scripted = sorted(set(settings) - set(PROXY_KEYS))
    if scripted or headers:
        named = ", ".join([*scripted, *(["required_headers"] if headers else [])])
        pytest.fail(
            f"@pytest.mark.mcp_server: upstream= without cassette= puts the chaos proxy in front of a live server, "
            f"whose tools and settings are its own; {named} script a TestMcpServer: drop them, or add "
            "cassette='path.json' to replay that server instead",
            pytrace=False,
        )
    upstream = settings["upstream"]
    upstream_headers = dict(settings.get("upstream_headers") or {})
    problem = ""
    try:
        if isinstance(upstream, str) and upstream.startswith(("http://", "https://")):
            return ChaosProxy(upstream, headers=upstream_headers), upstream_headers
        command = shlex.split(upstream) if isinstance(upstream, str) else list(upstream)
        return ChaosProxy(upstream_command=command, headers=upstream_headers), upstream_headers
    except Exception as exc:  # the proxy names the problem (a command that cannot start, a bad URL)
        problem = str(exc)
    pytest.fail(f"@pytest.mark.mcp_server(upstream=...): {problem}", pytrace=False)  # once, not chained


def proxied_server(request: pytest.FixtureRequest, settings: dict[str, Any], headers: dict[str, str]) -> Iterator[Any]:
    """`mcp_server` for a test marked `upstream=` (no cassette): a chaos proxy in front of that live server."""
    proxy, secrets = chaos_proxy(settings, headers)
    with proxy:
        one = served.serve(request.node, proxy, "mcp journal (chaos proxy)", "/mcp", secrets)
        yield proxy
    if not one.checked:
        served.check(request.node, [one])
