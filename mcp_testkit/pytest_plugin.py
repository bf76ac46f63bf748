"""pytest plugin: the `mcp_server` fixture. Heavy imports wait until a fixture is used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer


@pytest.fixture
def mcp_server() -> Iterator[TestMcpServer]:
    """A started `TestMcpServer` on 127.0.0.1; its handler errors fail the test at teardown."""
    from mcp_testkit.server import TestMcpServer

    with TestMcpServer() as server:
        yield server
        server.check()
