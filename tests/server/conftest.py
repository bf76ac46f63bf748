"""Fixtures of the server tests: each runs over a real socket and, where cheap, in-process."""

from __future__ import annotations

import pytest

from ._support import VIAS


@pytest.fixture(params=VIAS)
def via(request: pytest.FixtureRequest) -> str:
    """How the test reaches the server: 'socket' (uvicorn on 127.0.0.1:0) or 'asgi' (in-process)."""
    return str(request.param)
