"""What each era's column of the contract runs on, in one table: the server a harness makes for it, which server of
yours fits it, what to do when one does not; and the probe that finds, once per harness, which era a bridge speaks
to that healthy server and whether it connects at all."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_testkit._wire.eras import HANDSHAKE, STATELESS

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = ["Probed", "column_server_eras", "server_fits_era", "unfit_server"]


@dataclass(frozen=True)
class _Column:
    """One era's column: the eras of the server made for it, whether a server speaking `eras` fits it, and what to
    do when it does not (formatted with the server's `name` and the eras it `spoke`)."""

    server_eras: tuple[str, ...]
    fits: Callable[[Collection[str]], bool]
    unfit: str


_COLUMNS = {
    # A server from before 2026-07-28: a bridge that probes must meet one and fall back.
    HANDSHAKE: _Column(
        (HANDSHAKE,),
        lambda eras: tuple(eras) == (HANDSHAKE,),
        "server {name!r} speaks the {spoken} eras: the handshake era's properties need a server of the handshake "
        "era only (a bridge that probes would speak 2026-07-28 to it), so give one with eras=('handshake',), e.g. "
        "TestMcpServer.from_cassette(path, eras=('handshake',)), or check the stateless era only",
    ),
    # A server of both eras, the shape of the SDK's own server, where a bridge's fallback to the handshake is
    # legitimate (and leaves it no verdict in the column).
    STATELESS: _Column(
        (HANDSHAKE, STATELESS),
        lambda eras: STATELESS in eras,
        "server {name!r} speaks the {spoken} era only: the stateless era's properties need a server that speaks "
        "2026-07-28, so check the handshake era only (eras=('handshake',))",
    ),
}


def column_server_eras(era: str) -> tuple[str, ...]:
    """The eras of the server a harness makes for `era`'s column."""
    return _COLUMNS[era].server_eras


def server_fits_era(server: TestMcpServer, era: str) -> bool:
    """Whether the contract can run `era`'s properties on `server`: a server of the handshake era only for the
    handshake era (a bridge that probes must meet a server from before 2026-07-28), one that speaks the stateless
    era for the stateless era."""
    return _COLUMNS[era].fits(server.eras)


def unfit_server(server: TestMcpServer, era: str) -> str:
    """What to do when `server` cannot host `era`'s properties (see `server_fits_era`)."""
    return _COLUMNS[era].unfit.format(name=server.name, spoken=" and ".join(server.eras))


@dataclass(frozen=True)
class Probed:
    """What the probe found: the era the bridge `spoke`, and the trace of its fallback when that is not the harness's
    era (whether it connects at all is P0's)."""

    spoke: str
    fell_back: str | None = None
