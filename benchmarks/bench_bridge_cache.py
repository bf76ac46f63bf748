"""What the reference bridge's tool-list cache saves: a pool's entry with a cache hit against a full listing.

Run it from the repository root::

    python benchmarks/bench_bridge_cache.py                 # 300 entries a set, 3 interleaved rounds
    python benchmarks/bench_bridge_cache.py --entries 100 --rounds 1

One ``TestMcpServer`` with ``--tools`` tools in pages of ``--page-size`` runs in a uvicorn thread
on 127.0.0.1, and one event loop in the main thread enters ``ToolPool`` over it again and again:

- ``listed``: ``ToolPool(cache=False)``: the handshake, every ``tools/list`` page, and a DELETE at exit;
- ``cached``: a cache hit: no request at all;
- ``listed + call`` and ``cached + call``: the same, with one ``tools/call`` before the exit (a hit
  then pays the handshake at the call, and the DELETE).

Sets are interleaved round by round and the best round of each is kept, since other load only ever
slows a round down. Figures compare with each other within one run only (DESIGN.md section 8); the
server shares the process (and its GIL) with the pool, so absolute times are pessimistic for both.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable

import anyio

from mcp_testkit import TestMcpServer
from mcp_testkit.bridge import ServerConfig, ToolCache, ToolPool

Entry = Callable[[], Awaitable[None]]


def _sets(config: ServerConfig) -> dict[str, Entry]:
    async def listed() -> None:
        async with ToolPool([config], cache=False):
            pass

    async def cached() -> None:
        async with ToolPool([config]):
            pass

    async def listed_call() -> None:
        async with ToolPool([config], cache=False) as pool:
            await pool.call("b.tool_0")

    async def cached_call() -> None:
        async with ToolPool([config]) as pool:
            await pool.call("b.tool_0")

    return {"listed": listed, "cached": cached, "listed + call": listed_call, "cached + call": cached_call}


async def _time(entry: Entry, count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        await entry()
    return (time.perf_counter() - start) / count


async def _measure(config: ServerConfig, server: TestMcpServer, args: argparse.Namespace) -> dict[str, float]:
    sets = _sets(config)
    ToolCache.clear()
    await sets["cached"]()  # fill the cache once; every later "cached" entry is a hit
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, entry in sets.items():
            await _time(entry, 10)  # warm-up
            server.journal.clear()
            seconds = await _time(entry, args.entries)
            listed = len(server.journal.requests("tools/list"))
            if name.startswith("cached") and listed:
                raise SystemExit(f"set {name!r} listed the server {listed} times: the cache missed")
            best[name] = min(best.get(name, seconds), seconds)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=300, help="pool entries per set and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best is kept")
    parser.add_argument("--tools", type=int, default=50, help="tools the server offers")
    parser.add_argument("--page-size", type=int, default=10, help="tools per tools/list page")
    args = parser.parse_args(argv)
    # The cache must outlive the run: no entry may expire half-way.
    ToolCache.configure(ttl_s=24 * 3600)
    server = TestMcpServer("bench", page_size=args.page_size)
    for index in range(args.tools):
        server.tool(f"tool_{index}", description=f"Tool number {index}.", read_only=True, returns="ok")
    with server:
        config = ServerConfig(name="b", url=server.url)
        best = anyio.run(_measure, config, server, args)
    pages = -(-args.tools // args.page_size)
    print(f"{args.tools} tools in {pages} pages, {args.entries} entries a set, best of {args.rounds} rounds")
    print(f"{'set':<16}{'µs/entry':>12}{'ratio':>12}")
    for name, seconds in best.items():
        base = best["listed + call"] if name.endswith("call") else best["listed"]
        print(f"{name:<16}{seconds * 1e6:>12,.0f}{seconds / base:>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
