"""The built docs site: `mkdocs build --strict` is clean and fails on a dead link or anchor, links to tests and
scripts point to the repository URL set once in mkdocs.yml, and in headless Chromium at 1280 px no code block or
table is clipped (wider content scrolls) and the guarantee matrix table is whole."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from node_trees import on_ci
from test_diagram import CHROMIUM_FLAGS, LIMIT_S, _chromium, _png_is_not_blank

ROOT = Path(__file__).resolve().parent.parent
BUILD_S = 300.0
SLACK_PX = 4
"""Prose may spill this much: the padding of an inline code span that ends a line; code blocks and tables none."""

# Run in each page after load: the elements wider than their box that do not scroll, and the matrix table's shape.
MEASURE = """
<script>window.addEventListener('load', function () {
  var found = {clipped: [], tables: []};
  var article = document.querySelector('article') || document.body;
  [article].concat(Array.from(article.querySelectorAll('*'))).forEach(function (el) {
    var over = el.scrollWidth - el.clientWidth;
    if (el.clientWidth === 0 || over <= 1) return;
    var scrolls = ['auto', 'scroll'].indexOf(getComputedStyle(el).overflowX) >= 0;
    var boxed = el.matches('pre, pre *, table, table *, .md-typeset__scrollwrap, .md-typeset__table');
    if (!scrolls && (boxed || over > SLACK_PX)) {
      found.clipped.push(el.tagName + ' ' + over + 'px: ' + (el.textContent || '').slice(0, 80));
    }
  });
  article.querySelectorAll('table').forEach(function (table) {
    var row = table.rows[0];
    var last = row.cells[row.cells.length - 1].getBoundingClientRect();
    var box = table.getBoundingClientRect();
    found.tables.push({columns: row.cells.length, lastRight: last.right - box.left + table.scrollLeft,
                       scrollWidth: table.scrollWidth, overflowX: getComputedStyle(table).overflowX});
  });
  var out = document.createElement('pre'); out.id = 'measured'; out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});</script>
""".replace("SLACK_PX", str(SLACK_PX))


def _mkdocs() -> None:
    """mkdocs, from the [dev] extras; without it the test skips saying so, or fails under CI=true."""
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        reason = "mkdocs and mkdocs-material are not installed (pip install -e '.[dev]'), and the site test needs them"
        if on_ci():
            pytest.fail(f"{reason}; under CI=true it must not skip", pytrace=False)
        pytest.skip(reason)


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml"), "-d", str(site)]
    env = {"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run(command, capture_output=True, text=True, timeout=BUILD_S, check=False, cwd=root, env=env)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once with --strict from the repository's mkdocs.yml."""
    _mkdocs()
    target = tmp_path_factory.mktemp("site")
    built = _build(ROOT, target)
    assert built.returncode == 0, built.stdout + built.stderr
    return target


def _repo_url() -> str:
    found = re.search(r"^repo_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    assert found, "mkdocs.yml sets repo_url once"
    return found[1].rstrip("/")


def test_links_to_tests_and_scripts_go_to_the_repository(site: Path) -> None:
    """Every relative link of a page lands on a file of the built site (none leaves it for the repository's
    folders); a test or script is linked on the repository's site, at the URL mkdocs.yml sets once, as a file
    (blob) or a folder (tree) that exists."""
    repo = _repo_url()
    linked, outside = [], []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for href in re.findall(r'href="([^"#?]+)', text):
            if re.match(r"[a-z]+:", href) or href.startswith("/"):
                continue
            target = (page.parent / href).resolve()
            if not target.is_relative_to(site) or not (target.is_file() or (target / "index.html").is_file()):
                outside.append(f"{page.relative_to(site)}: {href}")
        linked += re.findall(rf'href="{re.escape(repo)}/(blob|tree)/main/([^"#]+)', text)
    assert outside == []
    assert len(linked) > 50
    for kind, path in linked:
        assert (ROOT / path).exists(), path
        assert (ROOT / path).is_dir() == (kind == "tree"), path


def test_strict_build_fails_on_a_dead_link_and_a_dead_anchor(tmp_path: Path) -> None:
    """A link to a missing file and one to a missing heading each fail `mkdocs build --strict`, by name."""
    _mkdocs()
    copy = tmp_path / "repo"
    copy.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in ("docs", "site", ".git"):
            (copy / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "docs", copy / "docs")
    with (copy / "docs" / "index.md").open("a", encoding="utf-8") as page:
        page.write("\n[gone](../tests/test_no_such_file.py) and [lost](server.md#no-such-heading)\n")
    built = _build(copy, tmp_path / "site")
    assert built.returncode != 0
    assert "../tests/test_no_such_file.py" in built.stderr
    assert "#no-such-heading" in built.stderr
    assert "Aborted with 2 warnings in strict mode" in built.stdout + built.stderr


def _measured(page: Path, tmp_path: Path) -> dict[str, list[object]]:
    """The page as Chromium lays it out at 1280 px: the measuring script's findings."""
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    run = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000"]
    dump = [*run, "--dump-dom", page.as_uri()]
    dom = subprocess.run(dump, capture_output=True, text=True, timeout=LIMIT_S, check=True)
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.DOTALL)
    assert found, f"the measuring script did not run in {page}"
    data: dict[str, list[object]] = json.loads(found[1].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    return data


def test_no_code_block_or_table_is_clipped_at_1280_px(site: Path, tmp_path: Path) -> None:
    """On every page, an element wider than its box scrolls (overflow auto or scroll): no code block, table or
    paragraph is cut off or spills over the sidebars."""
    pages = [*sorted(site.glob("*/index.html")), site / "index.html"]
    assert len(pages) > 10
    clipped = {str(page.relative_to(site)): _measured(page, tmp_path)["clipped"] for page in pages}
    assert {page: found for page, found in clipped.items() if found} == {}


def test_matrix_table_is_whole(site: Path, tmp_path: Path) -> None:
    """The guarantee matrix has a column per bridge of docs/matrix.md, each reachable: the table scrolls to its
    last column; and the page's screenshot is not blank."""
    header = next(line for line in (ROOT / "docs" / "matrix.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("| property"))
    columns = header.count("|") - 1
    page = site / "matrix" / "index.html"
    tables = _measured(page, tmp_path)["tables"]
    matrix = tables[0]
    assert isinstance(matrix, dict)
    assert matrix["columns"] == columns
    assert matrix["lastRight"] <= matrix["scrollWidth"] + 2  # sub-pixel widths: a fraction over is not a cut
    assert matrix["overflowX"] in ("auto", "scroll") or matrix["scrollWidth"] <= matrix["lastRight"] + 1
    shot = tmp_path / "matrix.png"
    run = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'shot-profile'}", f"--screenshot={shot}"]
    subprocess.run([*run, page.as_uri()], capture_output=True, timeout=LIMIT_S, check=True)
    assert _png_is_not_blank(shot)
