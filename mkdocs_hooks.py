"""mkdocs hook: a link from a page to a file of the repository outside docs/ (`../tests/test_x.py`,
`../scripts/matrix.py`, `../tests/faults/`) becomes a link to that file on the repository's site, built from
the one `repo_url` of mkdocs.yml. On GitHub the pages' relative links work as written; in the built site
they would leave it, so they are rewritten; a link to a file that does not exist stays, and the strict
build's link validation reports it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
BRANCH = "main"

# An inline link `](../x)` or a reference definition `[id]: ../x`; the target up to `#`, `)`, space or end.
_LINK = re.compile(r"(?P<head>\]\(|^\[[^\]]+\]:\s*)(?P<target>(?:\.\./)+[^)#\s]*)(?P<anchor>#[^)\s]*)?", re.MULTILINE)


def repo_link(repo_url: str, page: Path, target: str) -> str | None:
    """The repository URL of `target` as linked from `page` (a path under docs/), or None when it is inside
    docs/ or names nothing in the repository."""
    docs = ROOT / "docs"
    path = (docs / page).parent.joinpath(target).resolve()
    if path.is_relative_to(docs) or not path.is_relative_to(ROOT) or not path.exists():
        return None
    kind = "tree" if path.is_dir() else "blob"
    return f"{repo_url.rstrip('/')}/{kind}/{BRANCH}/{path.relative_to(ROOT).as_posix()}"


def on_page_markdown(markdown: str, *, page: Any, config: Any, files: Any) -> str:
    repo_url = config["repo_url"]
    if not repo_url:
        return markdown

    def replace(match: re.Match[str]) -> str:
        url = repo_link(repo_url, Path(page.file.src_path), match["target"])
        if url is None:
            return match[0]
        anchor = match["anchor"] or ""
        return f"{match['head']}{url}{anchor}"

    return _LINK.sub(replace, markdown)
