"""Shared test set-up: tests run on anyio's asyncio backend unless they ask for more."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
