"""`Recording`: what a replay hands a `TestMcpServer` to serve in place of its own scripted answers, so that the
server never needs to know where a recording comes from (`mcp_testkit.cassettes` makes one from a cassette)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_testkit.resources import Offerings
    from mcp_testkit.tools import ScriptedTool

__all__ = ["Recording"]


class Recording:
    """What a replay serves in place of the scripted server's own, made again for every fresh state (so that
    `reset()` brings the recording back): `mcp_testkit.cassettes.replay` hands one to `TestMcpServer(replaying=...)`.

    A subclass answers each method; this base serves nothing recorded.
    """

    def initialize_result(self) -> dict[str, Any] | None:
        """What `initialize` answers besides protocolVersion (capabilities, serverInfo...); None: the server's own."""
        return None

    def discover_result(self, eras: Sequence[str]) -> dict[str, Any] | None:
        """What `server/discover` answers for a server speaking `eras`; None: the server's own."""
        return None

    def offerings(self) -> Offerings | None:
        """What it offers besides tools (resources, prompts...); None: what the test scripts."""
        return None

    def tools(self) -> Sequence[ScriptedTool]:
        """Its tools, in listing order, each answering as recorded."""
        return ()
