"""`CurrentState`: the state a server answers from now and the lock its scripting takes, which the server and its
parts (`_offering_scripting`, `_fault_scripting`) share; `reset()` swaps in a fresh state here, for all of them."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_testkit.server._state import ServerState

__all__ = ["CurrentState"]


class CurrentState:
    """The state of now (`state`) and the lock (`lock`, re-entrant: a verb may call another) that scripting takes."""

    __slots__ = ("lock", "state")

    def __init__(self, state: ServerState) -> None:
        self.lock = threading.RLock()
        self.state = state
