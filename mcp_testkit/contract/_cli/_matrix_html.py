"""The guarantee matrix as one self-contained HTML page: a row per property, a column per bridge and era, each
cell coloured by its verdict and opening its details: the shrunk counterexample drawn as a sequence diagram,
its text, the coverage and the notes.

The page is built from the verdicts as `mcp-testkit check --json` writes them (a bridge label -> its spec and
`{"P1@handshake": {"status": ..., "journal": [...], ...}}`), so `check --html` and `scripts/matrix.py`, which
gathers the JSON of bridges run in other environments, publish the same page. Like the journal's page it
loads nothing: CSS, SVG and script are inline and its content security policy forbids anything else.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp_testkit._wire.eras import HANDSHAKE, HANDSHAKE_VERSIONS, STATELESS, STATELESS_VERSIONS
from mcp_testkit.contract._verdict import MARKS
from mcp_testkit.journal.diagram import POLICY, SCRIPT, STYLE, fragment, records_of_json, title_html

__all__ = ["matrix_page", "write_matrix_page"]

_MARKS = MARKS
"""Each status's mark, as `check` prints it (blocked and hung among them)."""
_HEADINGS = {"failed": "counterexample", "fell_back": "counterexample", "hung": "where it hung"}
_HEADINGS["blocked"] = "P0's counterexample (what blocks it)"
"""What a cell's text is, by status; what raised, for an error."""
_REVISIONS = {HANDSHAKE: HANDSHAKE_VERSIONS, STATELESS: STATELESS_VERSIONS}
"""An era's revisions, shown as its column's tooltip: the column says `handshake` or `stateless`, as the CLI does."""

_MATRIX_STYLE = """
body{max-width:none}.scroll{overflow-x:auto;margin:12px 0}
table.matrix{border-collapse:collapse;font-size:13px}
table.matrix th,table.matrix td{border:1px solid #d5dbe3;padding:4px 8px;text-align:center;white-space:nowrap}
table.matrix th.prop{text-align:left;white-space:normal;min-width:22em;max-width:34em;font-weight:normal}
table.matrix .pid{font-weight:600;margin-right:.4em}
td.cell a{display:block;color:inherit;text-decoration:none;font-weight:600}td.cell a:hover{text-decoration:underline}
.passed{background:#dcefd6}.failed{background:#f6d3d0}.error{background:#fbe3b8}
.not_applicable{background:#eceff3;color:#5b6472}.hung{background:#f2c2bd}
.blocked{background:repeating-linear-gradient(45deg,#f3e3e1,#f3e3e1 4px,#e7d3d0 4px,#e7d3d0 8px);color:#6b3a35}
.fell_back{background:#e6dcf3}.missing{background:#fff;color:#8893a4}
.legend span{display:inline-block;padding:2px 8px;margin-right:6px;border-radius:3px}
details.verdict>summary{font-weight:600;cursor:pointer}
details.verdict{margin:8px 0}dl{display:grid;grid-template-columns:max-content auto;gap:2px 12px}dt{color:#5b6472}
"""


def _order(ids: set[str]) -> list[str]:
    """The contract's order (P1 ... P9, P5s after P5), then ids it does not know."""
    from mcp_testkit.contract import PROPERTIES

    known = [pid for pid in PROPERTIES if pid in ids]
    return known + sorted(ids - set(known))


def _title(pid: str) -> str:
    """The property's title as HTML, its `code` shown as code."""
    from mcp_testkit.contract import PROPERTIES

    prop = PROPERTIES.get(pid)
    return title_html(prop.title) if prop is not None else ""


def _era_head(era: str) -> str:
    """An era's column head: its name, and its revisions as a tooltip."""
    revisions = _REVISIONS.get(era)
    tip = f' title="revision{"s" * (len(revisions) > 1)} {", ".join(revisions)}"' if revisions else ""
    return f"<th{tip}>{html.escape(era)}</th>"


def _split(key: str) -> tuple[str, str]:
    """`P1@stateless` -> (P1, stateless); a key without an era (scripts/matrix.py's) is the handshake era's."""
    pid, _, era = key.partition("@")
    return pid, era or HANDSHAKE


def _cell_mark(cell: Mapping[str, Any]) -> str:
    """A JSON cell's mark as `PropertyResult.mark` says it: its status's, with the declaration a pass rests on."""
    status = str(cell.get("status", ""))
    mark = _MARKS.get(status, status)
    return f"{mark} ({cell['held_as']})" if status == "passed" and cell.get("held_as") else mark


def _detail(anchor: str, label: str, pid: str, era: str, spec: str, cell: Mapping[str, Any]) -> str:
    """One cell's details: verdict, counts, coverage, notes, counterexample and its diagram."""
    status = str(cell.get("status", ""))
    rows = [("bridge", f"{label} ({spec})"), ("examples", str(cell.get("examples", "?")))]
    if "seconds" in cell:
        rows.append(("seconds", str(cell["seconds"])))
    coverage = cell.get("coverage") or {}
    if coverage:
        rows.append(("coverage", ", ".join(f"{name} {count}" for name, count in sorted(coverage.items()))))
    if "violations" in cell:  # what the referee found in the cell's traffic (docs/referee.md), beside the verdict
        broken = cell["violations"] or {}
        rows.append(("referee", ", ".join(f"{rule} {count}" for rule, count in sorted(broken.items())) or "none"))
    rows += [("note", str(note)) for note in cell.get("notes") or ()]
    facts = "".join(f"<dt>{html.escape(name)}</dt><dd>{html.escape(value)}</dd>" for name, value in rows)
    parts = [
        f'<details class="verdict" id="{anchor}"><summary class="{html.escape(status)}">'
        f"{html.escape(pid)} {_title(pid)} · {html.escape(label)} · {html.escape(era)}: "
        f"{html.escape(_cell_mark(cell))}</summary><dl>{facts}</dl>"
    ]
    if cell.get("counterexample"):
        heading = _HEADINGS.get(status, "what raised")
        parts.append(f"<h3>{heading}</h3><pre>{html.escape(str(cell['counterexample']))}</pre>")
    journal = cell.get("journal") or []
    if journal:
        parts.append(f"<h3>its requests ({len(journal)})</h3>")
        parts.append(fragment(records_of_json(journal), prefix=f"{anchor}-"))
    parts.append("</details>")
    return "".join(parts)


def matrix_page(report: Mapping[str, Mapping[str, Any]], *, title: str = "mcp-testkit guarantee matrix") -> str:
    """The page for `report` (the JSON of `check --json`): the table, then every cell's details."""
    columns: list[tuple[str, str]] = []
    cells: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    for label, bridge in report.items():
        eras: list[str] = []
        for key, cell in (bridge.get("properties") or {}).items():
            pid, era = _split(key)
            cells[label, pid, era] = cell
            if era not in eras:
                eras.append(era)
        columns += [(label, era) for era in sorted(eras, key=lambda era: (era != HANDSHAKE, era))]
    pids = _order({pid for _, pid, _ in cells})
    head = ['<tr><th rowspan="2">property</th>']
    labels = list(dict.fromkeys(label for label, _ in columns))
    for label in labels:
        span = sum(1 for one, _ in columns if one == label)
        head.append(f'<th colspan="{span}" title="{html.escape(str(report[label].get("spec", "")))}">')
        head.append(f"{html.escape(label)}</th>")
    head.append("</tr><tr>" + "".join(_era_head(era) for _, era in columns) + "</tr>")
    body: list[str] = []
    details: list[str] = []
    for pid in pids:
        row = [f'<tr><th class="prop"><span class="pid">{html.escape(pid)}</span>{_title(pid)}</th>']
        for label, era in columns:
            cell = cells.get((label, pid, era))
            if cell is None:
                row.append('<td class="cell missing">-</td>')
                continue
            anchor = f"c{len(details) + 1}"
            status = str(cell.get("status", ""))
            mark = html.escape(_cell_mark(cell))
            row.append(f'<td class="cell {html.escape(status)}" data-cell="{html.escape(f"{label}|{pid}|{era}")}">')
            row.append(f'<a href="#{anchor}">{mark}</a></td>')
            spec = str(report[label].get("spec", ""))
            details.append(_detail(anchor, label, pid, era, spec, cell))
        body.append("".join(row) + "</tr>")
    legend = "".join(f'<span class="{status}">{mark}</span>' for status, mark in _MARKS.items())
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{html.escape(title)}</title><style>{STYLE}{_MATRIX_STYLE}</style><script>{SCRIPT}</script></head>"
        f"<body><h1>{title_html(title)}</h1>"
        f"<p>{len(pids)} properties, {len(labels)} bridge{'s' * (len(labels) != 1)}, a column per bridge and "
        "protocol era. Each cell opens its details below: the counterexample of a failure drawn as a sequence "
        "diagram, what its examples covered, and the notes.</p>"
        f'<p class="legend">{legend}</p>'
        f'<div class="scroll"><table class="matrix"><thead>{"".join(head)}</thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
        f"<section>{''.join(details)}</section></body></html>\n"
    )


def write_matrix_page(path: str | Path, report: Mapping[str, Mapping[str, Any]]) -> Path:
    """Write `matrix_page(report)` to `path`, making its folder."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(matrix_page(report), encoding="utf-8")
    return target
