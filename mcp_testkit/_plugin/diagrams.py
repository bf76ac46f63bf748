"""`--mcp-report DIR`: a failing test's journals written as HTML sequence diagrams, one file a test (a file a
server when the test used several), named after the test's node id, credentials hidden; and attached to
pytest-html's report when that plugin runs."""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mcp_testkit._plugin.served import Served, Used, secrets_of

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["attach", "file_name", "write"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LONGEST = 120
"""Characters of the node id kept in a file name; longer ones are cut and end in a hash of the whole id."""
_NAMES = pytest.StashKey[dict[str, str]]()


def file_name(nodeid: str, server: str | None = None) -> str:
    """A file name for the test `nodeid` (and `server`, when the test used several), safe on every system:
    `tests/test_x.py::test_y[a/b]` becomes `tests_test_x.py_test_y_a_b.html`."""
    stem = _UNSAFE.sub("_", nodeid).strip("._") or "test"
    if len(stem) > _LONGEST:
        stem = f"{stem[:_LONGEST]}-{hashlib.sha256(nodeid.encode()).hexdigest()[:10]}"
    if server is not None:
        stem += "--" + (_UNSAFE.sub("_", server).strip("._") or "server")
    return stem + ".html"


def _unique(config: pytest.Config, name: str, nodeid: str) -> str:
    """`name`, or `name` with a hash of `nodeid` when another test of this run wrote a file of that name."""
    names = config.stash.setdefault(_NAMES, {})
    owner = names.setdefault(name, nodeid)
    if owner == nodeid:
        return name
    return f"{name[: -len('.html')]}-{hashlib.sha256(nodeid.encode()).hexdigest()[:10]}.html"


def _redact(text: str, secrets: set[str]) -> str:
    """Hide each secret as the page may spell it: raw, HTML-escaped, and inside a JSON string."""
    for secret in sorted(secrets, key=len, reverse=True):
        for spelling in {secret, html.escape(secret), html.escape(json.dumps(secret, ensure_ascii=False)[1:-1])}:
            text = text.replace(spelling, "***")
    return text


def _code(text: str) -> str:
    """`text` marked as code for the page's title (shown as `<code>`), unless a backtick in it would break the mark."""
    return text if "`" in text else f"`{text}`"


def write(item: pytest.Item, used: Used, directory: Path) -> dict[Served, Path]:
    """Write the diagram of each server `item` used into `directory`; the path of each, by server."""
    directory.mkdir(parents=True, exist_ok=True)
    several = len(used.served) > 1
    paths: dict[Served, Path] = {}
    for one in used.served:
        name = _unique(item.config, file_name(item.nodeid, one.server.name if several else None), item.nodeid)
        path = directory / name
        title = f"{_code(item.nodeid)}: server {one.server.name!r}"
        one.server.journal.to_html(path, title=title)
        path.write_text(_redact(path.read_text(encoding="utf-8"), secrets_of(one, used)), encoding="utf-8")
        paths[one] = path
    return paths


def attach(config: pytest.Config, report: pytest.TestReport, paths: Mapping[Served, Path]) -> None:
    """Link each diagram from pytest-html's report (relative to it, so the two can move together)."""
    if not config.pluginmanager.hasplugin("html"):
        return
    from pytest_html import extras  # type: ignore[import-not-found,import-untyped,unused-ignore]

    report_path = getattr(config.option, "htmlpath", None)
    base = (config.invocation_params.dir / report_path).resolve().parent if report_path else None
    found: list[Any] = list(getattr(report, "extras", []))
    for one, path in paths.items():
        target = path.resolve()
        link = Path(os.path.relpath(target, base)).as_posix() if base is not None else target.as_uri()
        found.append(extras.url(link, name=f"mcp diagram: {one.server.name}"))
    report.extras = found  # type: ignore[attr-defined]
