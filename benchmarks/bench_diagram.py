"""How long drawing a large journal takes: `journal.to_html(path)` and `journal.to_mermaid()` of 10,000 records.

The journal is a real one: `tools/call` requests sent to `TestMcpServer`'s ASGI app in-process over two sessions,
one call in fifty hit by a scripted fault. Issue 26 asks for the HTML of 10,000 records in under 2 s.

    python benchmarks/bench_diagram.py [--records 10000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import anyio
import httpx2

from mcp_testkit import TestMcpServer, faults

_ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


async def _fill(server: TestMcpServer, records: int) -> None:
    """Send requests until the journal holds `records`: two sessions, a fault on one call in fifty."""
    transport = httpx2.ASGITransport(app=server.asgi_app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        sessions = []
        for name in ("first", "second"):
            init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                    "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}}  # fmt: skip
            answer = await http.post("/mcp", json=init, headers=_ACCEPT)
            sessions.append({**_ACCEPT, "mcp-session-id": answer.headers["mcp-session-id"],
                             "mcp-protocol-version": "2025-11-25"})  # fmt: skip
        number = 0
        while len(server.journal) < records:
            number += 1
            if number % 50 == 0:
                server.fail_next_call(faults.ErrorResult("scripted failure"), tool="echo")
            call = {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                    "params": {"name": "echo", "arguments": {"n": number}}}  # fmt: skip
            await http.post("/mcp", json=call, headers=sessions[number % 2])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="draw this many times and keep the best")
    args = parser.parse_args()
    server = TestMcpServer(journal_limit=args.records)
    server.tool("echo", returns=lambda arguments: f"echo {arguments['n']}")
    started = time.perf_counter()
    anyio.run(_fill, server, args.records)
    print(f"journal of {len(server.journal):,} records built in {time.perf_counter() - started:.1f} s")
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "journal.html"
        html = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            server.journal.to_html(page)
            html.append(time.perf_counter() - started)
        size = page.stat().st_size
    mermaid = []
    for _ in range(args.rounds):
        started = time.perf_counter()
        server.journal.to_mermaid()
        mermaid.append(time.perf_counter() - started)
    print(f"to_html:    best {min(html):.2f} s of {args.rounds} ({size / 1e6:.1f} MB page); target under 2 s")
    print(f"to_mermaid: best {min(mermaid):.2f} s of {args.rounds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
