"""The open `subscriptions/listen` streams of a server (2026-07-28): what each agreed to carry, and its queue.

The scripting API publishes every change to `Listeners`, from any thread, and each stream's `Outbox` wakes its own
task; serving a listen request is the stateless era's (`server/_eras/_listen.py`).
"""

from __future__ import annotations

import threading
from typing import Any

from mcp_testkit.server._state._sessions import Outbox
from mcp_testkit.server._state._tasks import NOTIFICATION as TASK_NOTIFICATION

__all__ = ["FILTER_KEYS", "SUBSCRIPTION_ID_KEY", "Listener", "Listeners"]

SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

FILTER_KEYS = {
    "toolsListChanged": "notifications/tools/list_changed",
    "resourcesListChanged": "notifications/resources/list_changed",
    "promptsListChanged": "notifications/prompts/list_changed",
}
"""The boolean opt-ins of a listen request's filter, and the notification each lets through."""


class Listener:
    """One open `subscriptions/listen` stream: its id, what it agreed to carry, and its queue."""

    __slots__ = ("honoured", "outbox", "subscription_id")

    def __init__(self, subscription_id: Any, honoured: dict[str, Any]) -> None:
        self.subscription_id = subscription_id
        self.honoured = honoured
        """The filter the acknowledgement sent: only these types go on the stream."""
        self.outbox = Outbox()

    def wants(self, message: dict[str, Any]) -> bool:
        """Whether the client opted in to this notification (strictly: anything not asked for is kept back)."""
        method = message.get("method")
        for key, carried in FILTER_KEYS.items():
            if method == carried:
                return self.honoured.get(key) is True
        if method == "notifications/resources/updated":
            uri = (message.get("params") or {}).get("uri")
            return uri in self.honoured.get("resourceSubscriptions", ())
        if method == TASK_NOTIFICATION:
            return (message.get("params") or {}).get("taskId") in self.honoured.get("taskIds", ())
        return False

    def tagged(self, message: dict[str, Any]) -> dict[str, Any]:
        """The notification as this stream sends it: its `_meta` names the subscription."""
        params = dict(message.get("params") or {})
        params["_meta"] = {**(params.get("_meta") or {}), SUBSCRIPTION_ID_KEY: self.subscription_id}
        return {**message, "params": params}


class Listeners:
    """The open listen streams of a server; `publish` and `close_all` may be called from any thread."""

    def __init__(self) -> None:
        self._open: list[Listener] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._open)

    def open(self, listener: Listener) -> None:
        with self._lock:
            self._open.append(listener)

    def close(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._open:
                self._open.remove(listener)

    def publish(self, message: dict[str, Any]) -> int:
        """Queue `message` on every open stream that opted in to it; how many did."""
        with self._lock:
            chosen = [listener for listener in self._open if listener.wants(message)]
        for listener in chosen:
            listener.outbox.put(listener.tagged(message))
        return len(chosen)

    def close_all(self) -> None:
        """End every open stream gracefully: each sends its result and closes."""
        with self._lock:
            chosen = list(self._open)
        for listener in chosen:
            listener.outbox.put(None)
