"""A journal drawn as a sequence diagram: Mermaid text for GitHub and the docs, and one self-contained HTML page.

When a resilience test fails, the answer is in the order of requests, faults and answers; a dozen
records across two sessions read faster as arrows than as lines. Both drawings come from the same
steps (`_steps.py`): one arrow per request and one per answer, a listing's page and count on its arrows, the
fault that hit a request marked on it, a note where the session or the era changes, cancels drawn as the
notifications they are. The HTML page
needs nothing from the network when opened: its SVG, CSS and script are inline, and its content
security policy forbids loading anything else.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcp_testkit.journal._steps import Step, cut, steps

if TYPE_CHECKING:
    from mcp_testkit.journal._record import Record

__all__ = ["POLICY", "SCRIPT", "STYLE", "fragment", "html_page", "mermaid", "records_of_json", "svg", "title_html"]


# -- Mermaid -----------------------------------------------------------------------------------------

_MERMAID_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "<": "#60;", ">": "#62;", "\n": " ", "\r": " "})


_CODE = re.compile(r"`([^`]+)`")


def _text(value: str, limit: int = 120) -> str:
    return cut(value, limit).translate(_MERMAID_ESCAPES)


def _plain(title: str) -> str:
    """A title for where no markup renders (Mermaid's title, the page's `<title>`): `code` without its backticks."""
    return _CODE.sub(r"\1", title)


def title_html(title: str) -> str:
    """A title as HTML: its text escaped, and `code` in backticks as `<code>`."""
    return _CODE.sub(r"<code>\1</code>", html.escape(title))


def mermaid(records: Iterable[Record], *, title: str | None = None) -> str:
    """The records as a Mermaid sequence diagram, client on the left, server on the right; the era (and version)
    the requests speak, and the session, are notes where they change; `code` in the title loses its backticks,
    which Mermaid would show as they are."""
    lines = ["sequenceDiagram"]
    if title:
        lines.append(f"    title {_text(_plain(title))}")
    lines += ["    participant C as client", "    participant S as server"]
    for step in steps(records):
        if step.era:
            lines.append(f"    Note over C,S: {_text(step.era)}")
        if step.session:
            lines.append(f"    Note over C,S: session {_text(step.session[:8])}")
        arrow = "-)" if step.notification else "->>"
        lines.append(f"    C{arrow}S: {_text(step.request)}")
        if step.fault:
            lines.append(f"    Note right of S: fault {_text(step.fault)}")
        if step.answer is None:
            lines.append("    S--xC: no answer (connection cut)")
        else:
            lines.append(f"    S-->>C: {_text(step.answer)}")
    return "\n".join(lines) + "\n"


# -- HTML --------------------------------------------------------------------------------------------

_TOP, _ROW = 70, 64
_ERA_ROW = 24
"""The room an era's band takes above the step where the era changes."""


@dataclass(frozen=True)
class _Lanes:
    """Where the two lifelines stand, and how wide the drawing is."""

    left: int
    right: int
    width: int


_PAGE = _Lanes(140, 700, 1120)
"""The report page's drawing: room for long labels and fault names beside the server."""
_COMPACT = _Lanes(90, 450, 780)
"""A drawing to sit in a column of prose (the docs), which shows it near its own size at 1280 px."""

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:16px;color:#1d2430}
h1{font-size:18px}svg{display:block;max-width:100%;height:auto}
.lane{stroke:#b8c0cc;stroke-dasharray:4 4}.actor rect{fill:#eef2f7;stroke:#8893a4}
.arrow line{stroke:#2b5cab;stroke-width:1.6}.arrow text{font-size:12px;fill:#1d2430}
.arrow.answer line{stroke:#4b8b3b;stroke-dasharray:6 3}.arrow.failed line{stroke:#b3261e}
.arrow.lost line{stroke:#b3261e;stroke-dasharray:2 3}.arrow:hover text{text-decoration:underline}
.fault circle{fill:#b3261e}.fault text{fill:#b3261e;font-size:11px;font-weight:600}
.session text{fill:#6b4fa0;font-size:11px}.session line{stroke:#6b4fa0}
.era rect{fill:#eef2f7;stroke:#b8c0cc}.era text{fill:#3d4a5c;font-size:11px;font-style:italic}code{font-size:90%}
details{border:1px solid #d5dbe3;border-radius:4px;margin:4px 0;padding:4px 8px}
details:target,details[open]{background:#f7f9fc}.violations li{color:#b3261e}
pre{overflow:auto;font-size:12px;background:#fff;padding:6px}
.arrow.marked line{stroke-width:3.2}.arrow.marked text{font-weight:700}details.marked{border:2px solid #b3261e}
"""

SCRIPT = """
function openTarget(){var id=location.hash.slice(1);var el=id&&document.getElementById(id);if(!el)return;
for(var p=el;p;p=p.parentElement){if(p.tagName==='DETAILS')p.open=true;}el.scrollIntoView();}
window.addEventListener('hashchange',openTarget);window.addEventListener('DOMContentLoaded',openTarget);
"""

_SVG_CLASS = ' class="mcp-journal"'
SVG_STYLE = (
    ".mcp-journal{font:14px system-ui,sans-serif;max-width:100%;height:auto}"
    ".mcp-journal text{fill:#1d2430}.mcp-journal .lane{stroke:#b8c0cc;stroke-dasharray:4 4}"
    ".mcp-journal .actor rect{fill:#eef2f7;stroke:#8893a4}"
    ".mcp-journal .arrow line{stroke:#2b5cab;stroke-width:1.6}.mcp-journal .arrow text{font-size:12px}"
    ".mcp-journal .arrow.answer line{stroke:#4b8b3b;stroke-dasharray:6 3}"
    ".mcp-journal .arrow.failed line{stroke:#b3261e}.mcp-journal .arrow.lost line{stroke-dasharray:2 3}"
    ".mcp-journal .fault circle{fill:#b3261e}.mcp-journal .fault text{fill:#b3261e;font-size:11px;font-weight:600}"
    ".mcp-journal .session text{fill:#6b4fa0;font-size:11px}.mcp-journal .session line{stroke:#6b4fa0}"
    ".mcp-journal .era rect{fill:#eef2f7;stroke:#b8c0cc}"
    ".mcp-journal .era text{fill:#3d4a5c;font-size:11px;font-style:italic}"
)
"""The drawing's look inside the SVG itself, every rule under `.mcp-journal`: the same in a docs page (whose own
classes it leaves alone), in a saved .svg file and in the report page."""

POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _arrow(
    seq: int, y: int, label: str, classes: str, *, leftward: bool, prefix: str, lanes: _Lanes, link: bool
) -> str:
    x1, x2 = (lanes.right, lanes.left) if leftward else (lanes.left, lanes.right)
    head = f"url(#{prefix}head-back)" if leftward else f"url(#{prefix}head)"
    shown = cut(label, (lanes.right - lanes.left) // 7)  # what 12 px text fits between the lifelines
    whole = f"<title>{html.escape(label)}</title>" if shown != label else ""
    arrow = (
        f'<g class="arrow {classes}" data-seq="{seq}">{whole}'
        f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" marker-end="{head}"/>'
        f'<text x="{(lanes.left + lanes.right) // 2}" y="{y - 5}" text-anchor="middle">{html.escape(shown)}</text></g>'
    )
    return f'<a href="#{prefix}r{seq}">{arrow}</a>' if link else arrow


def _rows(steps: Sequence[Step]) -> list[int]:
    """The height of each step's request arrow: a row each, and a band above a step where the era changes."""
    rows, y = [], _TOP
    for step in steps:
        y += _ERA_ROW if step.era else 0
        rows.append(y)
        y += _ROW
    return rows


def _notes(step: Step, y: int, lanes: _Lanes) -> str:
    """The notes above a step: a band across both lifelines naming a new era, a line where a new session starts."""
    left, right = lanes.left, lanes.right
    parts = []
    if step.era:
        parts.append(
            f'<g class="era"><rect x="{left - 70}" y="{y - 46}" width="{right - left + 140}" height="18" rx="3"/>'
            f'<text x="{(left + right) // 2}" y="{y - 33}" text-anchor="middle">{html.escape(step.era)}</text></g>'
        )
    if step.session:
        parts.append(
            f'<g class="session"><line x1="{left - 70}" y1="{y - 24}" x2="{right + 70}" y2="{y - 24}"/>'
            f'<text x="{right + 74}" y="{y - 20}">session {html.escape(step.session[:8])}</text></g>'
        )
    return "".join(parts)


def _svg(
    steps: Sequence[Step],
    prefix: str = "",
    *,
    lanes: _Lanes = _PAGE,
    link: bool = True,
    styled: bool = False,
    marked: int | None = None,
) -> str:
    rows = _rows(steps)
    height = (rows[-1] + _ROW if rows else _TOP) + 30
    left, right, width = lanes.left, lanes.right, lanes.width
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg"{_SVG_CLASS if styled else ""} width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="sequence diagram of the journal">',
        f"<style>{SVG_STYLE}</style>" if styled else "",
        f'<defs><marker id="{prefix}head" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#2b5cab"/></marker>'
        f'<marker id="{prefix}head-back" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
        '<path d="M0,0 L8,4 L0,8 z" fill="#4b8b3b"/></marker></defs>',
    ]
    for x, name in ((left, "client"), (right, "server")):
        parts.append(
            f'<g class="actor"><rect x="{x - 60}" y="10" width="120" height="30" rx="4"/>'
            f'<text x="{x}" y="30" text-anchor="middle">{name}</text></g>'
            f'<line class="lane" x1="{x}" y1="40" x2="{x}" y2="{height - 10}"/>'
        )
    for step, y in zip(steps, rows, strict=True):
        parts.append(_notes(step, y, lanes))
        kind = "request notification" if step.notification else "request"
        kind += " marked" if step.seq == marked else ""
        parts.append(_arrow(step.seq, y, step.request, kind, leftward=False, prefix=prefix, lanes=lanes, link=link))
        if step.fault:
            room = max(8, (width - right - 14) // 7)  # characters of 11 px text that fit right of the lifeline
            parts.append(
                f'<g class="fault" data-seq="{step.seq}"><circle cx="{right}" cy="{y}" r="6"/>'
                f'<text x="{right + 10}" y="{y + 4}">{html.escape(cut(step.fault, min(80, room)))}</text></g>'
            )
        if step.answer is None:
            lost = "no answer (connection cut)"
            classes = "answer lost failed"
            parts.append(_arrow(step.seq, y + 26, lost, classes, leftward=True, prefix=prefix, lanes=lanes, link=link))
        else:
            classes = "answer failed" if step.failed else "answer"
            back = step.answer
            parts.append(_arrow(step.seq, y + 26, back, classes, leftward=True, prefix=prefix, lanes=lanes, link=link))
    parts.append("</svg>")
    return "".join(parts)


def _pretty(value: Any) -> str:
    return html.escape(json.dumps(value, indent=2, ensure_ascii=False, default=repr))


_MARKED = ' class="marked" open'
"""A marked record's details: classed `marked`, and open."""


def _details(record: Record, hidden: Collection[str], start: float, prefix: str = "", marked: bool = False) -> str:
    data = record.to_json(hidden)
    request = {"headers": data["headers"], "message": data["message"] if data["message"] is not None else data["body"]}
    broken = data["violations"]
    count = f" · {len(broken)} violation{'s' * (len(broken) != 1)}" if broken else ""
    listed = "".join(
        f"<li><code>{html.escape(v['rule'])}</code> at <code>{html.escape(v['path'])}</code>: "
        f"{html.escape(v['message'])}</li>"
        for v in broken
    )
    section = f'<h3>violations</h3><ul class="violations">{listed}</ul>' if broken else ""
    return (
        f'<details id="{prefix}r{record.seq}"{_MARKED if marked else ""}>'
        f"<summary>{html.escape(record.summary())}{count}</summary>"
        f"<p>received at +{(record.at - start) * 1000:.1f} ms"
        f"{'' if record.fault is None else ' · fault ' + html.escape(repr(record.fault))}</p>"
        f"{section}"
        f"<h3>request</h3><pre>{_pretty(request)}</pre>"
        f"<h3>answer</h3><pre>{_pretty({'status': data['status'], 'response': data['response']})}</pre></details>"
    )


def html_page(records: Sequence[Record], *, title: str, hidden: Collection[str] = ()) -> str:
    """One self-contained HTML page: the diagram, and under it each record's request and answer (redacted);
    `code` in backticks in the title is shown as code."""
    faults = sum(record.fault is not None for record in records)
    broken = sum(bool(record.violations) for record in records)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{html.escape(_plain(title))}</title><style>{STYLE}</style><script>{SCRIPT}</script></head><body>"
        f"<h1>{title_html(title)}</h1>"
        f"<p>{len(records)} request{'' if len(records) == 1 else 's'}, {faults} with a fault, "
        f"{broken} with a violation of MCP's rules. "
        "Each arrow opens its request and answer below.</p>"
        f"{fragment(records, hidden=hidden)}</body></html>\n"
    )


def fragment(
    records: Sequence[Record], *, hidden: Collection[str] = (), prefix: str = "", marked: int | None = None
) -> str:
    """The diagram and each record's request and answer, to place in a page that has `STYLE` and `SCRIPT`;
    `prefix` keeps the ids of several diagrams in one page apart; the record numbered `marked` (its `seq`) has
    its arrow and its details classed `marked`, and its details open."""
    start = records[0].at if records else 0.0
    details = "".join(_details(record, hidden, start, prefix, record.seq == marked) for record in records)
    return f"{_svg(list(steps(records)), prefix, marked=marked)}<section>{details}</section>"


def svg(records: Sequence[Record], *, prefix: str = "", compact: bool = False) -> str:
    """The diagram alone, one `<svg>` element carrying its own style: to inline in a page of prose (the docs draw
    their sequence diagrams with it at build time) or to save as a .svg file. Its arrows link nowhere; `prefix`
    keeps the ids of several diagrams in one page apart; `compact` draws it narrower, for a column of text."""
    return _svg(list(steps(records)), prefix, lanes=_COMPACT if compact else _PAGE, link=False, styled=True)


def records_of_json(items: Iterable[Mapping[str, Any]]) -> list[Record]:
    """Records back from their `Record.to_json()` form (as `check --json` keeps a counterexample's requests),
    enough to draw them; a fault that no longer parses is kept as its JSON."""
    from mcp_testkit.faults import from_json
    from mcp_testkit.journal._record import Record

    records = []
    for item in items:
        fault = item.get("fault")
        if isinstance(fault, dict):
            try:
                fault = from_json(fault)
            except (TypeError, ValueError, KeyError):
                pass
        body = item.get("body")
        records.append(
            Record(
                int(item.get("seq", 0)),
                float(item.get("at", 0.0)),
                str(item.get("http_method", "POST")),
                str(item.get("path", "")),
                dict(item.get("headers") or {}),
                body.encode() if isinstance(body, str) else b"",
                rpc_method=item.get("rpc_method"),
                rpc_id=item.get("rpc_id"),
                tool=item.get("tool"),
                session_id=item.get("session_id"),
                protocol_version=item.get("protocol_version"),
                status=item.get("status"),
                fault=fault,
                executed=item.get("executed"),
                error=item.get("error"),
                era=item.get("era"),
                _message=item.get("message"),
                _response=item.get("response"),
            )
        )
    return records
