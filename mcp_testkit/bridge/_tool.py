"""A server's tool as the reference bridge exposes it: a leaf that the catalogue, the pool and approvals share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["BridgeTool", "Kind", "Source"]

Kind = Literal["read", "write"]
Source = Literal["hint", "override", "default", "pool"]


@dataclass(frozen=True)
class BridgeTool:
    """A server's tool as the pool exposes it: ``server.tool`` name, schema and read/write class."""

    name: str
    server: str
    bare_name: str
    description: str
    input_schema: Mapping[str, Any] = field(hash=False, compare=True)
    kind: Kind = "write"
    idempotent: bool = False
    classified_by: Source = "default"

    @property
    def resendable(self) -> bool:
        """Whether the call may be sent again after its answer was lost: a read, or idempotent."""
        return self.kind == "read" or self.idempotent
