"""`mcp-testkit check --html`: the guarantee matrix as one self-contained page, rendered in a real headless Chromium
(Debian's `chromium`): a cell per property, bridge and era coloured by verdict, each opening its details (a failure's
counterexample drawn as a sequence diagram), no console error, nothing loaded from the network."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_diagram import CHROMIUM_FLAGS, LIMIT_S, _chromium

from mcp_testkit.contract._cli._matrix_html import matrix_page

CHECK_S = 300.0


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """One `check --html --json` run of the default bridges on P1, P2 and P5s in both eras (made once)."""
    where = tmp_path_factory.mktemp("check")
    page, report = where / "matrix.html", where / "matrix.json"
    command = [sys.executable, "-m", "mcp_testkit", "check", "--examples", "3", "--budget", "30", "-q"]
    command += ["--property", "P1", "--property", "P2", "--property", "P5s", "--html", str(page), "--json", str(report)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=CHECK_S, check=False, cwd=where)
    assert done.returncode == 0, done.stdout + done.stderr
    return page, json.loads(report.read_text(encoding="utf-8"))


def _dom(page: Path, tmp_path: Path, fragment: str = "") -> subprocess.CompletedProcess[str]:
    run = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    return subprocess.run(
        [*run, "--dump-dom", page.as_uri() + fragment], capture_output=True, text=True, timeout=LIMIT_S, check=True
    )


def test_page_has_a_cell_per_property_bridge_and_era(checked: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    """In Chromium the table has one cell per property x bridge x era, each classed by the verdict the JSON holds,
    each failure's details hold its diagram; no console error, and the page names nothing to fetch."""
    page, report = checked
    source = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["'](?!#)""", source), "the page loads nothing: every link is in-page"
    assert "default-src 'none'" in source
    dom = _dom(page, tmp_path)
    cells = re.findall(r'<td class="cell (\w+)" data-cell="([^"]+)"><a href="#(c\d+)">', dom.stdout)
    expected = {
        f"{label}|{key.replace('@', '|')}": cell["status"]
        for label, bridge in report.items()
        for key, cell in bridge["properties"].items()  # type: ignore[attr-defined]
    }
    assert len(expected) == 3 * 3 * 2
    assert {where: status for status, where, _ in cells} == expected
    failed = [anchor for status, _, anchor in cells if status == "failed"]
    assert failed, "the SDK client fails P1: the page shows it"
    for anchor in failed:
        details = dom.stdout.split(f'id="{anchor}"')[1].split('<details class="verdict"')[0]
        assert "counterexample" in details
        assert 'class="arrow request' in details
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console


def test_a_cell_opens_its_details(checked: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    """Following a failing cell's link (what a click does) opens that cell's details and no other."""
    page, _ = checked
    source = page.read_text(encoding="utf-8")
    anchor = re.findall(r'<td class="cell failed" data-cell="[^"]+"><a href="#(c\d+)">', source)[0]
    closed = _dom(page, tmp_path).stdout
    assert not re.search(r'<details class="verdict" id="c\d+" open', closed)
    opened = _dom(page, tmp_path, f"#{anchor}").stdout
    assert re.findall(r'<details class="verdict" id="(c\d+)" open', opened) == [anchor]


def test_page_of_published_verdicts_without_eras() -> None:
    """The page of scripts/matrix.py's JSON (keys without an era are the handshake era's) has a column per
    bridge, '-' where a bridge has no verdict, and a fault's counterexample drawn from its JSON records."""
    record = {
        "seq": 1, "at": 0.0, "http_method": "POST", "path": "/mcp", "headers": {}, "body": None,
        "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "rpc_method": "tools/list",
        "status": 200, "fault": {"type": "DuplicateTool", "page": 1}, "era": "handshake",
    }
    report = {
        "a": {"spec": "x:A", "properties": {"P1": {"status": "failed", "examples": 3, "journal": [record]}}},
        "b": {"spec": "x:B", "properties": {"P2": {"status": "passed", "examples": 3}}},
    }
    page = matrix_page(report)
    assert re.findall(r'<td class="cell (\w+)"', page) == ["failed", "missing", "missing", "passed"]
    assert page.count('class="arrow request') == 1
    assert 'class="fault" data-seq="1"' in page


def test_era_columns_use_the_clis_names_and_titles_show_code() -> None:
    """The era columns say `handshake` and `stateless`, as `check` prints them, with each era's revisions as the
    column's tooltip; a property title's `code` (P3's `retry`) is `<code>` in its row and its details."""
    cell = {"status": "passed", "examples": 3}
    report = {"a": {"spec": "x:A", "properties": {"P3@handshake": cell, "P3@stateless": cell}}}
    page = matrix_page(report)
    heads = re.findall(r"<th( title=\"[^\"]*\")?>(handshake|stateless|2026-07-28)</th>", page)
    assert heads == [
        (' title="revisions 2025-03-26, 2025-06-18, 2025-11-25"', "handshake"),
        (' title="revision 2026-07-28"', "stateless"),
    ]
    assert "<code>retry</code>" in page
    assert page.count("<code>retry</code>") == 3  # the row's head and the two cells' details
    assert "`" not in page.split("<style>")[0] + page.split("</script>")[1]


def test_a_blocked_cell_says_blocked_with_its_own_colour_and_p0_s_counterexample() -> None:
    """A bridge that fails P0: its P0 cell FAILS, the others are `blocked` (their own class and mark, in the legend
    too, never a pass's), and a blocked cell's details head P0's counterexample as what blocks it."""
    said = "P0 counterexample (declared case 1 of 23): ...\nthe bridge could not connect: KeyError: 'properties'"
    note = "blocked: the bridge fails P0 (connects to any valid server) in the handshake era"
    report = {
        "a": {
            "spec": "x:A",
            "properties": {
                "P0@handshake": {"status": "failed", "examples": 1, "counterexample": said},
                "P1@handshake": {"status": "blocked", "examples": 0, "counterexample": said, "notes": [note]},
                "P7@handshake": {"status": "hung", "examples": 1, "counterexample": "hung in call('tool') after 3 s"},
            },
        }
    }
    page = matrix_page(report)
    assert re.findall(r'<td class="cell (\w+)"[^>]*><a href="#c\d+">([^<]+)</a>', page) == [
        ("failed", "FAILS"),
        ("blocked", "blocked"),
        ("hung", "HUNG"),
    ]
    assert '<span class="blocked">blocked</span>' in page
    assert ".blocked{" in page
    assert ".hung{" in page
    assert "<h3>P0's counterexample (what blocks it)</h3>" in page
    assert "<h3>where it hung</h3>" in page


def test_a_pass_that_rests_on_a_declaration_says_so() -> None:
    """A cell held as the adapter declares (P19 with per-call sessions) reads `holds (per-call sessions declared)`,
    in the table and in its details, classed as a pass; a plain pass reads `holds`."""
    report = {
        "a": {
            "spec": "x:A",
            "properties": {
                "P5@handshake": {"status": "passed", "examples": 3},
                "P19@handshake": {"status": "passed", "examples": 3, "held_as": "per-call sessions declared"},
            },
        }
    }
    page = matrix_page(report)
    assert re.findall(r'<td class="cell (\w+)"[^>]*><a href="#c\d+">([^<]+)</a>', page) == [
        ("passed", "holds"),
        ("passed", "holds (per-call sessions declared)"),
    ]
    assert "· handshake: holds (per-call sessions declared)</summary>" in page
