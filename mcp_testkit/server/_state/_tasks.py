"""The tasks of the tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, 2026-07-28): each task's status, what
it produced and the input it waits for, and a server's table of them by id.

Running a tool as a task and the `tasks/*` methods are dispatch's (`server/_dispatch/_tasks.py`).
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

__all__ = ["NOTIFICATION", "POLL_INTERVAL_MS", "TERMINAL", "TTL_MS", "Task", "TaskTable"]

TTL_MS = 300_000
"""How long a task stays readable after it was created (the server keeps it until `reset()`, never less)."""
POLL_INTERVAL_MS = 100
TERMINAL = frozenset({"completed", "failed", "cancelled"})
NOTIFICATION = "notifications/tasks"
"""The status notification of SEP-2663, sent on `subscriptions/listen` streams that asked for the task's id."""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z"


@dataclass(eq=False)
class Task:
    """One task: its status, what it produced, the input it waits for."""

    task_id: str
    tool: str
    status: str = "working"
    created_at: str = field(default_factory=_now)
    updated_at: str = ""
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)
    answered: anyio.Event | None = None
    scope: anyio.CancelScope | None = None
    publish: Callable[[dict[str, Any]], Any] | None = None
    """Where its status notifications go (the server's `Listeners.publish`); None: nowhere."""
    answered_by: dict[str, int] = field(default_factory=dict)
    """The journal seq of the `tasks/update` that answered each key."""
    asked: set[str] = field(default_factory=set)
    """Every `inputRequests` key it used: a key is never reused within a task (SEP-2663)."""

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at

    def move(self, status: str) -> None:
        """Change its status (none after a terminal one) and notify the listeners of its id."""
        if self.status in TERMINAL or self.status == status:
            return
        self.status, self.updated_at = status, _now()
        self.notify()

    def notify(self) -> None:
        if self.publish is not None:
            self.publish({"jsonrpc": "2.0", "method": NOTIFICATION, "params": self.detailed()})

    def settle(self, status: str) -> None:
        self.move(status)

    def envelope(self) -> dict[str, Any]:
        """What `CreateTaskResult` and `tasks/get` share (the Task of SEP-2663)."""
        return {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }

    def detailed(self) -> dict[str, Any]:
        """The `tasks/get` answer: the envelope, and the result, error or pending input of the status."""
        detailed = self.envelope()
        if self.status == "completed" and self.result is not None:
            detailed["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            detailed["error"] = self.error
        elif self.status == "input_required":
            detailed["inputRequests"] = dict(self.input_requests)
        return detailed


class TaskTable:
    """The tasks of a server, by id; `reset()` makes a fresh table (and cancels nothing: running tasks end alone)."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}
        self._ids = itertools.count(1)

    def __len__(self) -> int:
        return len(self.tasks)

    def create(self, tool: str, *, publish: Callable[[dict[str, Any]], Any] | None = None) -> Task:
        task = self.draft(tool, publish=publish)
        self.tasks[task.task_id] = task
        return task

    def draft(self, tool: str, *, publish: Callable[[dict[str, Any]], Any] | None = None) -> Task:
        """A task not in the table yet: an `@asks_first` handler's, until it starts (or ends its round asking)."""
        return Task(f"task-{next(self._ids)}-{secrets.token_hex(6)}", tool, publish=publish)
