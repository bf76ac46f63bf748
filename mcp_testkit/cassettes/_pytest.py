"""The pytest record modes, as vcrpy has them: which server a test marked with `cassette=` gets.

- `none` (the default): replay only; a missing cassette is an error.
- `once`: replay an existing cassette; record one when the file is missing.
- `new`: replay, and send the calls the cassette does not have to the live server, adding them.
- `all`: record anew, the live server answering everything.

The live server is the marker's `upstream=` (a URL, or a stdio command as a list), else the
`MCP_TESTKIT_UPSTREAM` environment variable. It is spoken to in the era `upstream_era=` names:
'auto' (the default) opens a stateless (2026-07-28) session where the server offers that era, as
the SDK client and the reference bridge do, else the handshake.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_testkit.cassettes._format import Cassette, CassetteError
from mcp_testkit.cassettes._forwarding import Forwarding
from mcp_testkit.cassettes._matching import check_match
from mcp_testkit.cassettes._redact import Redactor, placeholder_count
from mcp_testkit.cassettes._replay import CassetteServer, replay
from mcp_testkit.upstream import UPSTREAM_ERAS, UpstreamError, UpstreamSession, from_env, open_upstream

__all__ = ["UPSTREAM_ENV", "cassette_server"]

UPSTREAM_ENV = "MCP_TESTKIT_UPSTREAM"


def cassette_server(
    path: Path,
    mode: str,
    options: Mapping[str, Any],
    settings: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> CassetteServer:
    """The server for a test marked `cassette=path` under record mode `mode`; CassetteError saying what to do."""
    environ = os.environ if environ is None else environ
    match = check_match(options.get("match", "exact"))
    exists = path.is_file()
    if mode == "none" or (mode == "once" and exists):
        if not exists:
            raise CassetteError(
                f"cassette {path} does not exist, and --mcp-record=none only replays: record it once with "
                f"--mcp-record=once and the live server as the marker's upstream= or ${UPSTREAM_ENV}"
            )
        return replay(path, match=match, **settings)
    upstream = options.get("upstream") or environ.get(UPSTREAM_ENV)
    if not upstream:
        raise CassetteError(
            f"cassette {path}: --mcp-record={mode} records, so it needs the live server: give the marker "
            f"upstream= (a URL, or a stdio command as a list) or set ${UPSTREAM_ENV}"
        )
    era = options.get("upstream_era", "auto")
    if era not in UPSTREAM_ERAS:
        raise CassetteError(f"cassette {path}: upstream_era must be one of {', '.join(UPSTREAM_ERAS)}, not {era!r}")
    try:
        headers = {
            name: from_env(value, f"upstream_headers {name}", environ)
            for name, value in (options.get("upstream_headers") or {}).items()
        }
    except ValueError as exc:
        raise CassetteError(str(exc)) from None
    base = Cassette.load(path) if mode == "new" and exists else None
    redactor = Redactor(
        options.get("redact") or (), first_placeholder=placeholder_count(base) + 1 if base is not None else 1
    )
    for name, value in headers.items():
        redactor.header(name, value)
    link = open_upstream(upstream, headers=headers)
    session = UpstreamSession(link, era=era)
    try:
        forward = Forwarding(session, redactor, path, base)
        if base is not None:
            return CassetteServer(base, match=match, forward=forward, **settings)
        session.open()
        session.list_tools()
        where: dict[str, Any] = {"transport": "http", "url": upstream}
        if link.transport == "stdio":
            where = {"transport": "stdio", "command": list(getattr(link, "command", []))}
        fresh = Cassette.from_tape(link.tape, where)
        fresh.source = str(path)
        return CassetteServer(fresh, match=match, forward=forward, **settings)
    except UpstreamError as exc:
        session.close()
        raise CassetteError(f"cassette {path}: recording failed: {exc}") from None
    except BaseException:
        session.close()
        raise
