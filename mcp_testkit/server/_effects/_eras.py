"""Faults answered with an era's refusal before the request runs: the probe's error and the 2026-07-28 refusals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_testkit import faults
from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.server._dispatch._messages import INVALID_REQUEST
from mcp_testkit.server._effects._base import Effect, HttpTurn, handles
from mcp_testkit.server._framing._refusals import LEGACY_REFUSAL, Refusal, mismatch, missing_capability, unsupported

if TYPE_CHECKING:
    from mcp_testkit.journal import Record
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session


class _Refusing(Effect[Any]):
    """A fault answered with a refusal before the request runs."""

    def refusal(self, state: ServerState, record: Record) -> Refusal:
        raise NotImplementedError

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        await turn.refuse(self.refusal(state, turn.record))
        return True


@handles(faults.DiscoverError)
class _DiscoverError(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        fault = self.fault
        return Refusal(fault.status, fault.code, fault.message, fault.data)

    async def before(self, turn: HttpTurn, state: ServerState, session: Session | None) -> bool:
        record = turn.record
        if record.era == HANDSHAKE and record.rpc_method != "server/discover":
            return False  # a handshake-era server has only the probe to refuse
        return await super().before(turn, state, session)


@handles(faults.HeaderMismatch)
class _HeaderMismatch(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return mismatch(f"{self.fault.header} header does not match the request body")


@handles(faults.UnsupportedVersion)
class _UnsupportedVersion(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        supported = self.fault.supported
        return unsupported(state, record.protocol_version, list(supported) if supported is not None else None)


@handles(faults.MissingCapability)
class _MissingCapability(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return missing_capability(self.fault.capabilities)


@handles(faults.EraDowngrade)
class _EraDowngrade(_Refusing):
    def refusal(self, state: ServerState, record: Record) -> Refusal:
        return Refusal(400, INVALID_REQUEST, LEGACY_REFUSAL, request_id=False)
