"""The plugin is tested by running pytest on generated test files (`pytester`)."""

from __future__ import annotations

import pytest

ANYIO_BACKENDS = """
import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request):
    return request.param
"""


@pytest.fixture(autouse=True)
def inner_ini(pytester: pytest.Pytester) -> None:
    """Inner runs get their own ini: strict markers, and pytest-asyncio's loop scope set (it warns if unset)."""
    pytester.makeini(
        """
        [pytest]
        addopts = --strict-markers -p no:cacheprovider -p no:unraisableexception -p no:benchmark
        asyncio_default_fixture_loop_scope = function
        """
    )


@pytest.fixture
def two_backends(pytester: pytest.Pytester) -> None:
    """Inner runs get an `anyio_backend` fixture for asyncio and trio."""
    pytester.makeconftest(ANYIO_BACKENDS)
