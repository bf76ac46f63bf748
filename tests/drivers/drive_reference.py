"""A driver (docs/driver.md) that runs the reference bridge: the driver protocol end to end, in the toolkit's venv.

usage: python drive_reference.py [--per-call]
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "drivers"))

from driver_protocol import outcome, serve

from mcp_testkit.adapters import PerCallReferenceAdapter, ReferenceBridgeAdapter


class ReferenceDriven:
    """The reference bridge's adapter, its outcomes written as protocol answers."""

    def __init__(self, per_call: bool) -> None:
        self._kind = PerCallReferenceAdapter if per_call else ReferenceBridgeAdapter
        self._adapter: Any = self._kind()

    async def connect(self, url: str, headers: Mapping[str, str]) -> dict[str, Any]:
        self._adapter = self._kind()
        result = await self._adapter.connect(url, headers)
        return outcome(result.kind, result.text, result.error)

    async def list(self) -> list[str]:
        names: list[str] = await self._adapter.list_tools()
        return names

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        result = await self._adapter.call(name, arguments)
        return outcome(result.kind, result.text, result.error)

    def set_headers(self, headers: Mapping[str, str]) -> None:
        self._adapter.set_headers(headers)

    async def close(self) -> None:
        await self._adapter.close()


if __name__ == "__main__":
    per_call = "--per-call" in sys.argv
    adapter = PerCallReferenceAdapter if per_call else ReferenceBridgeAdapter
    probe = adapter()
    serve(
        ReferenceDriven(per_call),
        {
            "bridge": adapter.name,
            "bridge_version": "0.1.0",
            "page_limit": probe.page_limit,
            "retry": probe.retry,
            "timeout_s": probe.timeout_s,
            "connect_timeout_s": probe.connect_timeout_s,
            "sessions": probe.sessions,
        },
    )
