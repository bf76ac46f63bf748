"""The two protocol eras, and the wire facts of the stateless one that the server and the bridge share.

The handshake era (2025-03-26 to 2025-11-25) opens a session with `initialize`. The stateless era
(2026-07-28) has no handshake and no session: every request carries its protocol version and the
client's capabilities in `params._meta`, and the headers `MCP-Protocol-Version`, `Mcp-Method` and
`Mcp-Name` mirror the body so that intermediaries can route on them.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Collection, Mapping
from typing import Any

__all__ = [
    "CAPABILITIES_KEY",
    "CLIENT_INFO_KEY",
    "ERAS",
    "HANDSHAKE",
    "HANDSHAKE_VERSIONS",
    "HEADER_MISMATCH",
    "LOG_LEVEL_KEY",
    "METHOD_HEADER",
    "MISSING_CAPABILITY",
    "NAME_HEADER",
    "NAME_PARAMS",
    "SERVER_INFO_KEY",
    "STATELESS",
    "STATELESS_VERSION",
    "STATELESS_VERSIONS",
    "UNSUPPORTED_VERSION",
    "VERSION_HEADER",
    "VERSION_KEY",
    "decode_header_value",
    "encode_header_value",
    "error_status",
    "named_eras",
    "spoken_versions",
    "stateless_headers",
    "stateless_params",
]

HANDSHAKE = "handshake"
STATELESS = "stateless"
ERAS = (HANDSHAKE, STATELESS)

HANDSHAKE_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
"""Handshake-era protocol versions this toolkit speaks, oldest first."""
STATELESS_VERSIONS = ("2026-07-28",)
"""Stateless-era protocol versions this toolkit speaks, oldest first."""
STATELESS_VERSION = STATELESS_VERSIONS[-1]

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
NAME_PARAMS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",  # the tasks extension (SEP-2663) names its task in Mcp-Name too
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
"""The methods whose `Mcp-Name` header mirrors a param, and which one."""

HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022

def named_eras(eras: Any) -> tuple[str, ...]:
    """`eras` as a tuple in the order given, each named once; ValueError naming what is wrong."""
    if isinstance(eras, str):
        raise ValueError(f"eras takes a list of era names, such as ('handshake', 'stateless'), not the string {eras!r}")
    chosen = tuple(dict.fromkeys(eras))
    if not chosen or any(era not in ERAS for era in chosen):
        raise ValueError(f"eras must name one or both of 'handshake' and 'stateless', not {tuple(eras)!r}")
    return chosen


_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")
_PLAIN = re.compile(r"[\x20-\x7e]*")


def encode_header_value(value: str) -> str:
    """`value` as a header carries it: as is when it is plain visible ASCII, else `=?base64?...?=`."""
    if _PLAIN.fullmatch(value) and value == value.strip() and not _SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode('ascii')}?="


def decode_header_value(value: str | None) -> str | None:
    """The value a header stands for (`=?base64?...?=` decoded); None when absent or badly encoded."""
    if value is None:
        return None
    if not value.startswith("=?base64?"):  # the common case, without the pattern
        return value
    match = _SENTINEL.fullmatch(value)
    if match is None:
        return value
    try:
        decoded = base64.b64decode(match.group(1), validate=True)
        return decoded.decode() if base64.b64encode(decoded).decode("ascii") == match.group(1) else None
    except (binascii.Error, UnicodeDecodeError):
        return None


def stateless_params(
    params: Mapping[str, Any] | None,
    *,
    version: str = STATELESS_VERSION,
    client_info: Mapping[str, Any] | None = None,
    capabilities: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`params` with the `_meta` a stateless request carries: its version, the client's capabilities and info."""
    given = dict(params or {})
    meta = dict(given.get("_meta") or {})
    meta[VERSION_KEY] = version
    meta[CAPABILITIES_KEY] = dict(capabilities or {})
    if client_info is not None:
        meta[CLIENT_INFO_KEY] = dict(client_info)
    given["_meta"] = meta
    return given


def stateless_headers(
    method: str, params: Mapping[str, Any] | None, version: str = STATELESS_VERSION
) -> dict[str, str]:
    """The headers mirroring a stateless request's body: its version, its method and, where it has one, its name."""
    headers = {VERSION_HEADER: version, METHOD_HEADER: method}
    name = (params or {}).get(NAME_PARAMS.get(method, ""))
    if isinstance(name, str):
        headers[NAME_HEADER] = encode_header_value(name)
    return headers


_ERROR_STATUS = {
    -32700: 400,  # parse error
    -32600: 400,  # invalid request
    -32602: 400,  # invalid params
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    -32601: 404,  # method not found
}
"""The HTTP status of a stateless answer carrying a JSON-RPC error, by code (200 for the others)."""


def error_status(response: Any) -> int:
    """The HTTP status of a stateless JSON answer: from the error code, 200 for a result."""
    error = response.get("error") if isinstance(response, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return _ERROR_STATUS.get(code, 200) if isinstance(code, int) else 200


def spoken_versions(eras: Collection[str]) -> list[str]:
    """Every protocol version a server speaking `eras` speaks, newest first."""
    spoken = [*STATELESS_VERSIONS] if STATELESS in eras else []
    if HANDSHAKE in eras:
        spoken += HANDSHAKE_VERSIONS
    return sorted(spoken, reverse=True)
