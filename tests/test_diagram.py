"""The journal as a sequence diagram: Mermaid text checked by structure against the journal, and the HTML page
rendered in a real headless Chromium (Debian's `chromium`), with one arrow per record, the fault markers where
the journal has faults, no console error, nothing loaded from the network, and a screenshot that is not blank."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from node_trees import on_ci

from mcp_testkit import TestMcpServer, faults
from mcp_testkit.journal import Journal
from mcp_testkit.journal.diagram import svg

LIMIT_S = 30.0
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,900",
)


def _chromium() -> str:
    """Debian's chromium; without it the test skips saying how to install it, or fails under CI=true."""
    found = shutil.which("chromium")
    if found is None:
        reason = "Debian's chromium is not installed (apt-get install chromium), and the HTML journal test needs it"
        if on_ci():
            pytest.fail(f"{reason}; under CI=true it must not skip (.ci/run installs it)", pytrace=False)
        pytest.skip(reason)
    return found


async def _busy_journal() -> Journal:
    """A journal with faults, two sessions, a cancel and a 2026-07-28 exchange, made by real clients."""
    server = TestMcpServer(name="tickets")
    server.tool("create", returns="opened")
    with anyio.fail_after(LIMIT_S):
        async with server:
            server.inject(faults.ErrorResult("store unavailable"), tool="create")
            for _ in range(2):  # two sessions
                async with Client(server.url, mode="legacy") as client:
                    await client.call_tool("create", {"title": "printer on fire"})
            server.inject(faults.Drop(), tool="create")
            async with httpx2.AsyncClient() as http:
                headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28"}
                meta = {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
                call = {"name": "create", "arguments": {}, "_meta": meta}
                dropped = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}
                route = {"mcp-method": "tools/call", "mcp-name": "create"}
                with pytest.raises(httpx2.TransportError):
                    await http.post(server.url, json=dropped, headers={**headers, **route})
                params = {"requestId": 7, "_meta": meta}
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}
                await http.post(server.url, json=cancel, headers={**headers, "mcp-method": "notifications/cancelled"})
            async with Client(server.url) as client:  # the 2026-07-28 era
                await client.call_tool("create", {"title": "x"})
    return server.journal


@pytest.fixture(scope="module")
def journal() -> Journal:
    """One busy journal for the module's tests (made once: it takes real clients and a server)."""
    return anyio.run(_busy_journal)


def test_mermaid_has_one_arrow_per_request_and_per_answer(journal: Journal) -> None:
    """Every record is one request arrow and one answer arrow, in order; faults and sessions are notes."""
    text = journal.to_mermaid(title="tickets")
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert "    participant C as client" in lines
    assert "    participant S as server" in lines
    requests = [line for line in lines if re.match(r"    C(->>|-\))S: ", line)]
    answers = [line for line in lines if re.match(r"    S(-->>|--x)C: ", line)]
    records = list(journal)
    assert len(requests) == len(answers) == len(records)
    assert [int(re.findall(r"#35;(\d+) ", line)[0]) for line in requests] == [r.seq for r in records]
    faulted = [r for r in records if r.fault is not None]
    assert len([line for line in lines if line.startswith("    Note right of S: fault ")]) == len(faulted) == 2
    assert len([line for line in lines if "--xC: no answer" in line]) == len([r for r in records if r.status is None])
    sessions = {r.session_id for r in records if r.session_id}
    assert len([line for line in lines if line.startswith("    Note over C,S: session ")]) == len(sessions) == 2
    assert any("cancel request 7" in line for line in requests)
    assert len([line for line in lines if line.startswith("    Note over C,S: ") and " era " in line]) == 2
    assert ";" not in text.replace("#35;", "").replace("#59;", "").replace("#60;", "").replace("#62;", "")


def _png_is_not_blank(path: Path) -> bool:
    """Whether the PNG's pixels take more than a handful of values (decoded with zlib, no imaging library)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    pixels = zlib.decompress(b"".join(chunks))
    return len(set(pixels[: 1 << 20])) > 16


def test_html_renders_in_chromium_with_an_arrow_per_record(journal: Journal, tmp_path: Path) -> None:
    """In headless Chromium the page shows one request arrow per record and a fault marker per faulted record,
    logs no console error, names nothing to fetch, and its screenshot is not blank."""
    chromium = _chromium()
    page = journal.to_html(tmp_path / "journal.html", title="tickets")
    source = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["'](?!#)""", source), "the page loads nothing: every link is in-page"
    profile = tmp_path / "profile"
    run = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(
        [*run, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=LIMIT_S, check=True
    )
    records = list(journal)
    assert len(re.findall(r'class="arrow request', dom.stdout)) == len(records)
    assert len(re.findall(r'class="arrow answer', dom.stdout)) == len(records)
    assert len(re.findall(r'<g class="era">', dom.stdout)) == 2
    fault_seqs = [int(seq) for seq in re.findall(r'class="fault" data-seq="(\d+)"', dom.stdout)]
    assert fault_seqs == [r.seq for r in records if r.fault is not None]
    assert len(re.findall(r'<details id="r\d+"', dom.stdout)) == len(records)
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    shot = tmp_path / "journal.png"
    subprocess.run([*run, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=LIMIT_S, check=True)
    assert _png_is_not_blank(shot)


def test_html_redacts_credentials(tmp_path: Path) -> None:
    """A credential a request carried reads '***' in the page, as in the journal's other exports."""
    server = TestMcpServer(name="t")
    server.tool("create", returns="ok")

    async def main() -> None:
        with anyio.fail_after(LIMIT_S):
            async with server, httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as http:
                initialize = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                }
                headers = {"accept": "application/json, text/event-stream"}
                assert (await http.post(server.url, json=initialize, headers=headers)).status_code == 200

    anyio.run(main)
    source = server.journal.to_html(tmp_path / "j.html").read_text(encoding="utf-8")
    assert "s3cret-token" not in source
    assert "***" in source


PAGED_TOOLS = 5


async def _paged_listing() -> tuple[Journal, list[str]]:
    """Five tools listed two a page by the SDK client, following each `nextCursor`; then a listing sent with
    a cursor of 40 characters (which the server refuses). Returns the journal and the cursors the server sent."""
    server = TestMcpServer(name="catalogue", page_size=2)
    for index in range(PAGED_TOOLS):
        server.tool(f"tool{index}", returns="ok")
    cursors: list[str] = []
    with anyio.fail_after(LIMIT_S):
        async with server:
            async with Client(server.url, mode="legacy") as client:
                page = await client.list_tools()
                while page.next_cursor:
                    cursors.append(page.next_cursor)
                    page = await client.list_tools(cursor=page.next_cursor)
            async with httpx2.AsyncClient() as http:
                headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28"}
                meta = {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
                params = {"cursor": "c" * 36 + "tail", "_meta": meta}
                listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
                await http.post(server.url, json=listing, headers={**headers, "mcp-method": "tools/list"})
    return server.journal, cursors


def test_a_paged_listing_names_its_pages_counts_and_next() -> None:
    """Each `tools/list` arrow names the page it asks for (`first page`, or the cursor the server sent, a long
    one cut to its head and tail) and its answer the number of tools and `next` when a page follows: a
    paging bug reads off the arrows, in the Mermaid text and the SVG alike."""
    journal, cursors = anyio.run(_paged_listing)
    assert len(cursors) == 2
    lines = [re.sub(r"#35;\d+ ", "", line) for line in journal.to_mermaid().splitlines()]
    listings = [(line, lines[index + 1]) for index, line in enumerate(lines) if "tools/list" in line]
    assert listings[:3] == [
        ("    C->>S: tools/list first page", "    S-->>C: 200, 2 tools, next"),
        (f"    C->>S: tools/list cursor={cursors[0]}", "    S-->>C: 200, 2 tools, next"),
        (f"    C->>S: tools/list cursor={cursors[1]}", "    S-->>C: 200, 1 tool"),
    ]
    assert listings[3][0] == "    C->>S: tools/list cursor=cccccccc…tail"
    assert re.match(r"    S-->>C: \d+ error -32602", listings[3][1])
    assert len(listings) == 4
    drawn = svg(list(journal))
    first = next(record.seq for record in journal if record.rpc_method == "tools/list")
    assert f">#{first} tools/list first page<" in drawn
    assert ">200, 2 tools, next<" in drawn
    assert ">200, 1 tool<" in drawn


def test_an_empty_next_cursor_is_shown_as_such() -> None:
    """A page that answers `nextCursor: ""` (the EmptyCursor fault) reads `next=""` on its arrow, and the
    listing that sends it back reads `cursor=""`, so the bug is on the picture."""
    server = TestMcpServer(name="catalogue", page_size=2)
    for index in range(PAGED_TOOLS):
        server.tool(f"tool{index}", returns="ok")

    async def main() -> None:
        with anyio.fail_after(LIMIT_S):
            async with server, Client(server.url, mode="legacy") as client:
                server.inject(faults.EmptyCursor(page=1))
                page = await client.list_tools()
                assert page.next_cursor == ""
                with pytest.raises(Exception, match="ursor"):
                    await client.list_tools(cursor="")

    anyio.run(main)
    text = server.journal.to_mermaid()
    assert '    S-->>C: 200, 2 tools, next=""' in text
    assert re.search(r'    C->>S: #35;\d+ tools/list cursor=""\n    S-->>C: 200 error -32602', text)


def test_both_eras_are_named_alike_on_no_arrow(journal: Journal) -> None:
    """No arrow names a version; a note names the era and its version at the top and where it changes, the
    handshake era as the stateless one, in Mermaid and in the SVG."""
    text = journal.to_mermaid()
    arrows = [line for line in text.splitlines() if re.match(r"    (C(->>|-\))S|S(-->>|--x)C): ", line)]
    assert arrows
    assert not [line for line in arrows if "2025-" in line or "2026-" in line]
    notes = [line for line in text.splitlines() if line.startswith("    Note over C,S: ") and " era" in line]
    assert notes == [
        "    Note over C,S: handshake era (2025-11-25)",
        "    Note over C,S: stateless era (2026-07-28)",
    ]
    lines = text.splitlines()
    first_stateless = next(r.seq for r in journal if r.protocol_version == "2026-07-28")
    assert lines.index(notes[1]) == lines.index(f"    C->>S: #35;{first_stateless} tools/call create") - 1
    drawn = svg(list(journal))
    assert re.findall(r'<g class="era">.*?<text[^>]*>([^<]+)</text>', drawn) == [
        "handshake era (2025-11-25)",
        "stateless era (2026-07-28)",
    ]
    labels = re.findall(r'<g class="arrow [^"]*"[^>]*>.*?<text[^>]*>([^<]+)</text>', drawn)
    assert len(labels) == 2 * len(list(journal))
    assert not [label for label in labels if "2025-" in label or "2026-" in label]


def test_a_title_with_code_renders_code(journal: Journal, tmp_path: Path) -> None:
    """`code` in backticks in a title is `<code>` in the HTML page's heading, and no raw backtick is left in
    the page's `<title>` or in the Mermaid title."""
    title = "P3 `tools/call` survives `retry` faults"
    source = journal.to_html(tmp_path / "j.html", title=title).read_text(encoding="utf-8")
    assert "<h1>P3 <code>tools/call</code> survives <code>retry</code> faults</h1>" in source
    assert "<title>P3 tools/call survives retry faults</title>" in source
    assert "`" not in source.split("<section>")[0]
    assert journal.to_mermaid(title=title).splitlines()[1] == "    title P3 tools/call survives retry faults"
