"""`mcp-testkit diff`: one example of a property through several bridges, each one's outcome, and the first request
where their journals part, side by side; for a declared case, a seeded draw or a kept failure's file."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.cli import main
from mcp_testkit.contract import run_contract

REFERENCE = "mcp_testkit.adapters:ReferenceBridgeAdapter"
SDK = "mcp_testkit.adapters:SdkClientAdapter"
SDK_LEGACY = "mcp_testkit.adapters:SdkClientAdapter.legacy"


class Resending(ReferenceBridgeAdapter):
    """The reference bridge behind an application that sends a failed call once more, while `resends`."""

    name = "resending"
    resends = False

    async def call(self, tool: str, arguments: Any) -> Any:
        outcome = await super().call(tool, arguments)
        if Resending.resends and outcome.kind != "ok":
            outcome = await super().call(tool, arguments)
        return outcome


def _diff(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["diff", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def _marked(out: str) -> list[tuple[str, str]]:
    """The rows marked as differing: (left, right), each as shown."""
    rows = [line[4:].split(" |", 1) for line in out.splitlines() if line.startswith("  > ")]
    return [(left.strip(), right.strip()) for left, right in rows]


def test_diff_of_the_reference_bridge_and_the_sdk_client_on_p5(capsys: pytest.CaptureFixture[str]) -> None:
    """On P5's first declared case (a 404 on the call) the reference bridge holds and the SDK client fails; the
    diff shows the first request that differs (the SDK probes with server/discover) and where, after the 404, the
    reference bridge opens a new session while the SDK client gives up."""
    status, out, _ = _diff(capsys, REFERENCE, SDK, "--property", "P5")
    assert status == 1
    assert "P5 (After a 404 the bridge starts a new session and sends the call once more) in the handshake era, " in out
    assert "declared case 1 of 12:" in out
    assert re.search(r"^  reference\s+holds \(8 requests\)$", out, re.M), out
    assert re.search(
        r"^  sdk-client \(auto\)\s+FAILED: after the 404 \(#\d\) the bridge did not start a new", out, re.M
    )
    assert "reference and sdk-client (auto): the same first 0 requests; the first that differs is #1:" in out
    marked = _marked(out)
    assert marked[0] == ("", "#1 POST server/discover -> 200")
    assert ("#5 POST s2 initialize -> 200", "#7 DELETE s1 /mcp -> 404") in marked, out


def test_diff_names_the_first_request_that_differs_past_an_equal_start(capsys: pytest.CaptureFixture[str]) -> None:
    """The SDK client in legacy mode starts as the reference bridge does: the diff counts the equal requests and
    shows the one before the first that differs as context."""
    status, out, _ = _diff(capsys, REFERENCE, SDK_LEGACY, "--property", "P5")
    assert status == 1
    assert "the same first 2 requests; the first that differs is #3:" in out
    assert "    #2 POST s1 notifications/initialized -> 202" in out
    assert _marked(out)[0] == ("", "#3 GET s1 /mcp -> 405")


def test_the_same_bridge_twice_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    """A bridge against itself sends the same requests (sessions named by order, not id) and ends alike: exit 0."""
    status, out, _ = _diff(capsys, REFERENCE, REFERENCE, "--property", "P2", "--case", "5")
    assert status == 0, out
    assert "declared case 5 of " in out
    assert re.search(r"reference and reference: the same \d+ requests, and outcomes", out)


def test_a_seed_draws_the_same_example_each_time(capsys: pytest.CaptureFixture[str]) -> None:
    """`--seed N` runs one drawn example, the same for the same seed."""
    first = _diff(capsys, REFERENCE, REFERENCE, "--property", "P2", "--seed", "3")[1]
    second = _diff(capsys, REFERENCE, REFERENCE, "--property", "P2", "--seed", "3")[1]
    assert "drawn with seed 3:" in first
    assert first.splitlines()[1] == second.splitlines()[1]
    assert first.splitlines()[1].startswith("  write_runs_at_most_once(schedule=")


def test_diff_of_a_kept_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--kept FILE` replays a kept failure's example: the buggy bridge sends the write again where the reference
    bridge does not."""
    monkey = pytest.MonkeyPatch()
    monkey.setattr(Resending, "resends", True)
    try:
        run_contract(Resending, properties=["P2"], eras=["handshake"], keep_failures=tmp_path)
        (kept,) = tmp_path.glob("test_kept_*.py")
        status, out, _ = _diff(capsys, REFERENCE, f"{__name__}:Resending", "--kept", str(kept))
    finally:
        monkey.undo()
    assert status == 1
    assert "P2 (A write runs at most once, exactly once when reported ok) in the handshake era, declared case " in out
    assert re.search(r"^  resending\s+FAILED: a write ran 2 times for one call", out, re.M), out
    assert any("tools/call write -> 200" in right for _, right in _marked(out)), out


class _Page(HTMLParser):
    """What the test reads of the diff page: every tag's attributes, the bridges' column names, the open tags."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))
        if tag not in {"meta", "br"}:  # HTML's void elements on the page
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        assert self.open, f"</{tag}> closes nothing"
        assert self.open[-1] == tag, f"</{tag}> closes <{self.open[-1]}>"
        self.open.pop()


def test_diff_writes_an_html_page_of_both_journals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--html out/diff.html` makes the folder and writes one page: a column per bridge, named, with its outcome and
    its journal's diagram and details, the first request that differs marked in each, and the same text as printed;
    the page is well-formed (every tag closed in order) and loads nothing."""
    monkeypatch.chdir(tmp_path)
    status, out, _ = _diff(capsys, SDK, REFERENCE, "--property", "P5", "--html", "out/diff.html")
    assert status == 1
    source = (tmp_path / "out" / "diff.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(source)
    page.close()
    assert page.open == []
    columns = [attrs["data-bridge"] for tag, attrs in page.tags if "data-bridge" in attrs]
    assert columns == ["sdk-client (auto)", "reference"]
    marked = [
        (tag, attrs.get("id", attrs.get("data-seq")))
        for tag, attrs in page.tags
        if "marked" in attrs.get("class", "").split()
    ]
    # The SDK client's first request (server/discover) is where the two part; each column marks its own #1.
    assert marked == [("g", "1"), ("details", "b1-r1"), ("g", "1"), ("details", "b2-r1")]
    assert 'the first request that differs: <a href="#b1-r1">#1</a>' in source
    assert '<p class="differs">FAILED: after the 404 (#6) the bridge did not start a new session</p>' in source
    assert '<p class="holds">holds</p>' in source
    assert len(re.findall(r'class="arrow request', source)) == 7 + 8
    assert "#1 POST server/discover -&gt; 200" in source, "the printed text is on the page too"
    assert out.splitlines()[0] in source
    assert not re.search(r"""(src|href)=["'](?!#)""", source), "the page loads nothing: every link is in-page"


def test_diff_marks_the_first_difference_past_an_equal_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Against the SDK client in legacy mode the first two requests are alike: each column marks its #3."""
    page = tmp_path / "diff.html"
    assert _diff(capsys, REFERENCE, SDK_LEGACY, "--property", "P5", "--html", str(page))[0] == 1
    source = page.read_text(encoding="utf-8")
    assert re.findall(r'<details id="(b\d-r\d+)" class="marked" open>', source) == ["b1-r3", "b2-r3"]
    assert "<summary>#3 GET" in source.split('id="b2-r3"', 1)[1][:80]


def test_diff_html_of_bridges_that_agree_marks_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Where the journals are the same no request is marked, and each column says so."""
    page = tmp_path / "deep" / "er" / "diff.html"
    assert _diff(capsys, REFERENCE, REFERENCE, "--property", "P2", "--case", "5", "--html", str(page))[0] == 0
    source = page.read_text(encoding="utf-8")
    assert "marked" not in re.sub(r"<style>.*?</style>", "", source, flags=re.S)
    assert "<p>no other differs</p>" in source
    assert re.search(r"<p>\d+ requests, the same as reference's</p>", source)


def test_diff_html_of_a_folder_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--html` naming a folder is refused before anything runs."""
    status, out, err = _diff(capsys, REFERENCE, REFERENCE, "--property", "P5", "--html", str(tmp_path))
    assert status == 2
    assert f"--html {tmp_path} is a folder: give a file name" in err
    assert out == ""


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([REFERENCE], "give two bridges or more to compare"),
        ([REFERENCE, REFERENCE], "name the property whose example runs (--property P5), or give a kept failure"),
        ([REFERENCE, REFERENCE, "--property", "P99"], "unknown property 'P99'"),
        ([REFERENCE, REFERENCE, "--property", "P5", "--era", "stateless"], "P5 has no meaning in the stateless era"),
        ([REFERENCE, REFERENCE, "--property", "P5", "--case", "99"], "--case is 1 to 12"),
        ([REFERENCE, REFERENCE, "--kept", "no_such_file.py"], "no kept failure file 'no_such_file.py'"),
        (["nomodule:X", REFERENCE], "cannot import 'nomodule'"),
    ],
)
def test_usage_errors_exit_2_saying_what_to_give(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    """A mistake on the command line is exit 2 and one line naming it."""
    status, out, err = _diff(capsys, *argv)
    assert status == 2
    assert said in err
    assert out == ""
