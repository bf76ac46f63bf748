"""Fixtures that start `mcp-testkit serve` as a subprocess and always stop it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ._support import Served, start


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """A factory: `serve("--preset", "demo")` starts a server and returns it once it printed its URL."""
    started: list[Served] = []

    def factory(*args: str) -> Served:
        served = start(tmp_path, *args)
        started.append(served)
        return served

    yield factory
    for served in started:
        served.stop()
