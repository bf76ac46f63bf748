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
    assert any("(2026-07-28)" in line for line in requests)
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
