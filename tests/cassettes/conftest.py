"""Fixtures of the cassette tests: the real upstream (the SDK's MCPServer) and cassettes recorded from it once.

Recording and answering cost whole round trips through real servers, so each is done once for the
package and shared; the tests only read them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_testkit.cassettes import record

from ._support import REDACT, bridge_answers, sdk_http_answers, sdk_stdio_answers
from .upstream import serving, stdio_command


@pytest.fixture(scope="package")
def upstream_url() -> Iterator[str]:
    """The upstream served over Streamable HTTP on 127.0.0.1."""
    with serving() as url:
        yield url


@pytest.fixture(scope="package")
def changed_upstream_url() -> Iterator[str]:
    """The upstream's next release (write_note removed, add given a required property c)."""
    with serving(changed=True) as url:
        yield url


@pytest.fixture(scope="package")
def live_sdk(upstream_url: str) -> dict[str, Any]:
    """What the SDK client gets from the live upstream."""
    return anyio.run(sdk_http_answers, upstream_url)


@pytest.fixture(scope="package")
def live_bridge(upstream_url: str) -> dict[str, Any]:
    """What the reference bridge gets from the live upstream."""
    return anyio.run(bridge_answers, upstream_url)


@pytest.fixture(scope="package")
def http_tape(upstream_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cassette of the SDK client walking the HTTP upstream through the proxy, and what it got through it."""
    out = tmp_path_factory.mktemp("tapes") / "http.json"

    async def go() -> dict[str, Any]:
        async with record(upstream_url, out=out, redact=REDACT) as proxy:
            return await sdk_http_answers(proxy)

    return out, anyio.run(go)


@pytest.fixture(scope="package")
def stdio_tape(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cassette of the SDK client using the stdio upstream through the proxy, and its live stdio answers."""
    out = tmp_path_factory.mktemp("tapes") / "stdio.json"

    async def go() -> dict[str, Any]:
        async with record(command=stdio_command(), out=out, redact=REDACT) as proxy:
            await sdk_http_answers(proxy)
        return await sdk_stdio_answers(stdio_command())

    return out, anyio.run(go)


@pytest.fixture(params=["http_tape", "stdio_tape"])
def tape(request: pytest.FixtureRequest) -> tuple[Path, dict[str, Any]]:
    """Each recording in turn: of the HTTP upstream, and of the stdio upstream."""
    recorded: tuple[Path, dict[str, Any]] = request.getfixturevalue(request.param)
    return recorded


@pytest.fixture(scope="package")
def live_sdk_auto(upstream_url: str) -> dict[str, Any]:
    """What the SDK client in auto mode (the stateless era, which the upstream offers) gets from the live upstream."""
    return anyio.run(lambda: sdk_http_answers(upstream_url, mode="auto"))


@pytest.fixture(scope="package")
def live_bridge_stateless(upstream_url: str) -> dict[str, Any]:
    """What the reference bridge with era='stateless' gets from the live upstream."""
    return anyio.run(lambda: bridge_answers(upstream_url, era="stateless"))


@pytest.fixture(scope="package")
def stateless_tape(upstream_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A cassette of the SDK client in auto mode (so in the stateless era) walking the upstream through the proxy."""
    out = tmp_path_factory.mktemp("tapes") / "stateless.json"

    async def go() -> dict[str, Any]:
        async with record(upstream_url, out=out, redact=REDACT) as proxy:
            return await sdk_http_answers(proxy, mode="auto")

    return out, anyio.run(go)
