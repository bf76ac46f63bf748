"""The built site's pictures in headless Chromium at 1280 px: each page with a diagram shows it (an <svg> with an
arrow per journal record each way and its two lifelines, or the architecture picture loaded), not blank, with no
console error and nothing requested from the network, fonts included."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from test_diagram import CHROMIUM_FLAGS, LIMIT_S, _chromium, _png_is_not_blank
from test_docs_site import site

__all__ = ["site"]  # the built site, a fixture shared with tests/test_docs_site.py

ROOT = Path(__file__).resolve().parent.parent
PAGES = {"journal": 1, "faults": 1, "server": 3, "architecture": 0}
"""The pages with a diagram drawn from a journal, and how many each has."""

# First in <head>: a policy that lets the page load only files of the site, and a record of what it refused.
POLICY = "default-src file: 'unsafe-inline' 'unsafe-eval' data: blob:"
GUARD = f"""<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<script>window.refused = []; document.addEventListener('securitypolicyviolation', function (e) {{
  window.refused.push(e.blockedURI + ' (' + e.violatedDirective + ')'); }});</script>"""
# Last in <body>: what the page shows, once it has loaded and its scripts have run.
MEASURE = """<script>window.addEventListener('load', function () { setTimeout(function () {
  var found = {refused: window.refused, fetched: [], diagrams: [], pictures: []};
  performance.getEntriesByType('resource').forEach(function (entry) {
    if (entry.name.indexOf('file:') !== 0 && entry.name.indexOf('data:') !== 0) found.fetched.push(entry.name);
  });
  document.querySelectorAll('figure.mcp-diagram').forEach(function (figure) {
    var svg = figure.querySelector('svg'), box = svg.getBoundingClientRect();
    found.diagrams.push({name: figure.dataset.diagram, width: box.width, height: box.height,
      requests: svg.querySelectorAll('.arrow.request').length, answers: svg.querySelectorAll('.arrow.answer').length,
      lanes: svg.querySelectorAll('line.lane').length, faults: svg.querySelectorAll('.fault').length,
      stroke: getComputedStyle(svg.querySelector('.arrow line')).stroke});
  });
  document.querySelectorAll('article img[src$=".svg"]').forEach(function (img) {
    var box = img.getBoundingClientRect();
    found.pictures.push({src: img.getAttribute('src'), loaded: img.complete && img.naturalWidth > 0,
                         width: box.width, height: box.height});
  });
  var out = document.createElement('pre'); out.id = 'measured'; out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
}, 500); });</script>"""


@pytest.fixture(scope="module")
def hook() -> ModuleType:
    """mkdocs_diagrams.py, to run each exchange again and know how many records its diagram draws."""
    spec = importlib.util.spec_from_file_location("mkdocs_diagrams_counts", ROOT / "mkdocs_diagrams.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _open(page: Path, tmp_path: Path) -> tuple[dict[str, list[object]], list[str]]:
    """The page as Chromium shows it at 1280 px: the measurements, and the console lines it logged."""
    html = page.read_text(encoding="utf-8")
    html = re.sub(r"<head>", "<head>" + GUARD, html, count=1).replace("</body>", MEASURE + "</body>")
    page.write_text(html, encoding="utf-8")
    run = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000"]
    logged = [*run, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()]
    dom = subprocess.run(logged, capture_output=True, text=True, timeout=LIMIT_S, check=True)
    found = re.search(r'<pre id="measured">(.*?)</pre>', dom.stdout, re.DOTALL)
    assert found, f"the measuring script did not run in {page}"
    data = json.loads(found[1].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    return data, console


@pytest.mark.parametrize("name", list(PAGES))
def test_page_shows_its_diagrams_offline(site: Path, tmp_path: Path, hook: ModuleType, name: str) -> None:
    """At 1280 px the page's diagrams are drawn (an arrow each way per record of the exchange's journal, two
    lifelines, styled, at a readable size), its pictures load, nothing is fetched from the network and the
    console stays quiet; its screenshot is not blank."""
    page = site / name / "index.html"
    data, console = _open(page, tmp_path)
    assert data["refused"] == []
    assert data["fetched"] == []
    assert console == []
    diagrams = data["diagrams"]
    assert len(diagrams) == PAGES[name]
    for diagram in diagrams:
        assert isinstance(diagram, dict)
        records = list(hook.journal_of(diagram["name"]))
        assert diagram["requests"] == diagram["answers"] == len(records)
        assert diagram["faults"] == sum(record.fault is not None for record in records)
        assert diagram["lanes"] == 2
        assert diagram["stroke"] == "rgb(43, 92, 171)"  # its own style applies inside the docs' theme
        assert diagram["width"] >= 600  # shown near its own size (780), not shrunk to a thumbnail
        assert diagram["height"] > 100
    if name == "architecture":
        (picture,) = data["pictures"]
        assert isinstance(picture, dict)
        assert picture["loaded"]
        assert picture["width"] >= 600
    shot = tmp_path / f"{name}.png"
    run = [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'shot-profile'}", f"--screenshot={shot}"]
    subprocess.run([*run, page.as_uri()], capture_output=True, timeout=LIMIT_S, check=True)
    assert _png_is_not_blank(shot)


def test_no_page_links_a_stylesheet_script_or_font_elsewhere(site: Path) -> None:
    """No page of the site names a stylesheet, script, image or font to load from another host (no CDN)."""
    remote = []
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for tag in re.findall(r"<(?:script|img|link|source|iframe)\b[^>]*>", text):
            if re.search(r"""(?:src|href)=["']?(?:https?:)?//""", tag) and 'rel="canonical"' not in tag:
                remote.append(f"{page.relative_to(site)}: {tag}")
    assert remote == []
