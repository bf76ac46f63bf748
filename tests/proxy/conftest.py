"""Fixtures of the chaos proxy's tests: a real upstream (the SDK's `MCPServer` over HTTP) shared by the package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .upstream import RUNS, serving


@pytest.fixture(scope="package")
def sdk_url() -> Iterator[str]:
    """The SDK upstream over Streamable HTTP on 127.0.0.1."""
    with serving() as url:
        yield url


@pytest.fixture
def runs() -> dict[str, int]:
    """The SDK upstream's own count of `bump` runs, from zero for this test."""
    RUNS["bump"] = 0
    return RUNS
