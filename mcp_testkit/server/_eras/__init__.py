"""The two protocol eras over the one HTTP transport: the handshake (`initialize`, sessions, GET streams,
resumption) and the stateless 2026-07-28 (`server/discover`, `_meta` per request, `Mcp-*` headers, the listen
stream); what both do with a request they take (`_run.py`); and `era_of`, which says which era a request is of.

Each era's module builds its `ServedEra`: what the transport routes to and what dispatch asks of the era, so that
the era's behaviour stays in its module and the layers above and below it test no era.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import HANDSHAKE, HANDSHAKE_VERSIONS, STATELESS, VERSION_KEY
from mcp_testkit.server._eras import _handshake, _stateless
from mcp_testkit.server._framing._response import header

if TYPE_CHECKING:
    from mcp_testkit._wire.headers import Headers
    from mcp_testkit.server._eras._served import ServedEra
    from mcp_testkit.server._state import ServerState

__all__ = ["era_of"]


def era_of(state: ServerState, headers: Headers, message: Any) -> ServedEra:
    """The era a request is of: the stateless one for a 2026-07-28 version in its header or `_meta`, or the probe.

    `message` is None for a GET or DELETE, which only the header (or a server of one era only) can place.
    """
    eras = state.eras
    if STATELESS not in eras:
        return _handshake.ERA
    if HANDSHAKE not in eras:
        return _stateless.ERA
    version = header(headers, "mcp-protocol-version")
    # Stripped: the optional whitespace around a header's value is no part of it (RFC 9110).
    if version is not None and version.strip(" \t") not in HANDSHAKE_VERSIONS:
        return _stateless.ERA
    if not isinstance(message, dict):
        return _handshake.ERA
    if message.get("method") == "server/discover":
        return _stateless.ERA
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return _stateless.ERA if isinstance(meta, dict) and VERSION_KEY in meta else _handshake.ERA
