"""Differential runs: one example of a property through several bridges, and where their journals and outcomes part.

The example is a declared case, a seeded draw or a kept failure's; each bridge runs it through `replayed` (the path
every example takes). Journals are compared request by request on what a bridge decides (the HTTP method, the
JSON-RPC method and tool, the session as the order it was opened in, what the server answered and the fault that
hit it), never on what differs run to run (session ids, times)."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit.contract._properties import PROPERTIES
from mcp_testkit.contract._property_run import show

if TYPE_CHECKING:
    from mcp_testkit.contract._replay import Replayed
    from mcp_testkit.journal import Record

__all__ = [
    "Chosen",
    "chosen_example",
    "diff_page",
    "drawn_example",
    "kept_example",
    "request_lines",
    "side_by_side",
]

_DRAWS = 8
"""Examples drawn for `--seed`, of which the last is the one run."""
_STRETCHES = 4
"""Stretches of differing requests shown per pair of bridges."""


@dataclass(frozen=True)
class Chosen:
    """The example a differential run replays: its property, era, inputs and which example it is."""

    property_id: str
    era: str
    inputs: Mapping[str, Any]
    found_as: str


def kept_example(path: str | Path) -> Chosen:
    """The example of a kept failure's test file (its `PROPERTY`, `ERA`, `INPUTS` and `FOUND_AS`)."""
    file = Path(path)
    if not file.is_file():
        raise ValueError(f"no kept failure file {str(path)!r}: give a test file that --keep-failures wrote")
    found = importlib.util.spec_from_file_location(f"_kept_{file.stem}", file)
    if found is None or found.loader is None:
        raise ValueError(f"{str(path)!r} is not a Python file")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    missing = [name for name in ("PROPERTY", "ERA", "INPUTS") if not hasattr(module, name)]
    if missing:
        raise ValueError(f"{str(path)!r} has no {', '.join(missing)}: it is not a file --keep-failures wrote")
    return Chosen(module.PROPERTY, module.ERA, module.INPUTS, getattr(module, "FOUND_AS", "drawn"))


def chosen_example(property_id: str, era: str, facts: Any, *, case: int | None, seed: int | None) -> Chosen:
    """Declared case `case` (1 for the first) of the property, or with `seed` one example drawn from its
    strategies; the facts are those of the first bridge (a declared case or a draw may depend on its timeout)."""
    prop = PROPERTIES[property_id]
    if seed is not None:
        return Chosen(property_id, era, drawn_example(prop.strategies(facts), seed), f"drawn with seed {seed}")
    cases = prop.cases(facts)
    number = case or 1
    if not 1 <= number <= len(cases):
        raise ValueError(f"{property_id} has {len(cases)} declared cases in the {era} era: --case is 1 to {len(cases)}")
    return Chosen(property_id, era, cases[number - 1], f"declared case {number} of {len(cases)}")


def drawn_example(strategies: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """One example drawn from the keyword `strategies`, the same for the same seed."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from mcp_testkit.contract._draws import _context_free_draws

    drawn: list[dict[str, Any]] = []

    # Hypothesis' first example is its simplest, whatever the seed: the seed picks among the next ones.
    @seeded(seed)
    @settings(
        max_examples=_DRAWS,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.fixed_dictionaries(dict(strategies)))
    def draw(inputs: dict[str, Any]) -> None:
        drawn.append({name: inputs[name] for name in strategies})

    with _context_free_draws():
        draw()
    return drawn[-1]


def request_lines(journal: Sequence[Record]) -> list[str]:
    """Each request as the comparison sees it: `POST s1 tools/call write -> 200 fault=Drop()`, the session named
    by the order it first appeared in."""
    sessions: dict[str, str] = {}
    lines = []
    for record in journal:
        session = ""
        if record.session_id:
            session = sessions.setdefault(record.session_id, f"s{len(sessions) + 1}")
        what = record.rpc_method or record.path or ""
        if record.tool:
            what += f" {record.tool}"
        answer = str(record.status) if record.status is not None else "no answer"
        line = " ".join(part for part in (record.http_method, session, what) if part) + f" -> {answer}"
        if record.fault is not None:
            line += f" fault={record.fault!r}"
        lines.append(line)
    return lines


def _outcome(ended: Replayed) -> str:
    if ended.status == "held":
        return "holds"
    lines = ended.message.splitlines()
    what = lines[lines.index(")") + 1] if ")" in lines[:-1] else (lines[0] if lines else "")
    return f"{ended.status.upper()}: {what}"


def side_by_side(chosen: Chosen, runs: Sequence[tuple[str, Replayed]], width: int = 58) -> tuple[str, bool]:
    """The text of a differential run, and whether any bridge differs from the first: the example, each bridge's
    outcome and number of requests, then for each bridge after the first where its journal parts from the first's:
    the first request that differs, and each stretch of requests that differ after it, side by side."""
    prop = PROPERTIES[chosen.property_id]
    args = ", ".join(f"{name}={show(value)}" for name, value in chosen.inputs.items())
    out = [f"{chosen.property_id} ({prop.title}) in the {chosen.era} era, {chosen.found_as}:", f"  {prop.name}({args})"]
    named = max(len(name) for name, _ in runs)
    out.append("")
    out += [f"  {name.ljust(named)}  {_outcome(ended)} ({len(ended.journal)} requests)" for name, ended in runs]
    first_name, first = runs[0]
    base = request_lines(first.journal)
    differs = False
    for name, ended in runs[1:]:
        other = request_lines(ended.journal)
        out.append("")
        if base == other:
            same = _outcome(ended) == _outcome(first)
            out.append(
                f"{first_name} and {name}: the same {len(base)} requests, {'and' if same else 'but not'} outcomes"
            )
            differs = differs or not same
            continue
        differs = True
        out += _stretches(first_name, base, name, other, width)
    return "\n".join(out), differs


def _stretches(first_name: str, base: list[str], name: str, other: list[str], width: int) -> list[str]:
    """Where two journals part: the first request that differs, then each stretch that differs, side by side with
    the request before it (at most `_STRETCHES` stretches)."""
    import difflib

    at = _parted_at(base, other)
    same = f"the same first {at} request{'s' * (at != 1)}"
    out = [
        f"{first_name} and {name}: {same}; the first that differs is #{at + 1}:",
        f"    {_cut(first_name, width).ljust(width)} | {name}",
    ]
    hunks = [op for op in difflib.SequenceMatcher(None, base, other, autojunk=False).get_opcodes() if op[0] != "equal"]
    for number, (_, a_from, a_to, b_from, b_to) in enumerate(hunks[:_STRETCHES]):
        if number:
            out.append(f"    {'...'.ljust(width)} | ...")
        if a_from and b_from:
            out.append(_row(" ", a_from - 1, base, b_from - 1, other, width))
        for step in range(max(a_to - a_from, b_to - b_from)):
            out.append(
                _row(
                    ">",
                    a_from + step if a_from + step < a_to else None,
                    base,
                    b_from + step if b_from + step < b_to else None,
                    other,
                    width,
                )
            )
    if len(hunks) > _STRETCHES:
        out.append(f"    ({len(hunks) - _STRETCHES} more stretches differ)")
    return out


def _parted_at(base: Sequence[str], other: Sequence[str]) -> int:
    """The index of the first request where two journals' lines differ (the shorter's length if one is the other's
    start; the length of both if they are equal)."""
    return next((i for i, (a, b) in enumerate(zip(base, other, strict=False)) if a != b), min(len(base), len(other)))


_DIFF_STYLE = """
body{max-width:none}.columns{display:grid;grid-auto-flow:column;grid-auto-columns:minmax(0,1fr);gap:16px}
.column{border:1px solid #d5dbe3;border-radius:4px;padding:0 8px;min-width:0}.column h2{font-size:16px}
.holds{color:#2f6b22}.differs{color:#b3261e}
"""


def diff_page(chosen: Chosen, runs: Sequence[tuple[str, Replayed]]) -> str:
    """The differential run as one self-contained HTML page: the text of `side_by_side`, then a column per bridge
    with its outcome and its journal drawn as the HTML journal draws it, the first request where it parts from the
    first bridge's (for the first bridge, from any other's) marked `marked`, its details open."""
    import html

    from mcp_testkit.journal.diagram import POLICY, SCRIPT, STYLE, fragment, title_html

    text, _ = side_by_side(chosen, runs)
    columns = []
    for number, ((name, ended), at) in enumerate(zip(runs, _first_differences(runs), strict=True)):
        journal = ended.journal
        seq = None
        if at is None:
            where = (
                f"{len(journal)} requests, the same as {html.escape(runs[0][0])}'s" if number else "no other differs"
            )
        elif at < len(journal):
            seq = journal[at].seq
            where = f'the first request that differs: <a href="#b{number + 1}-r{seq}">#{at + 1}</a>'
        else:
            where = f"{len(journal)} requests: it ends where another goes on"
        columns.append(
            f'<div class="column" data-bridge="{html.escape(name)}"><h2>{html.escape(name)}</h2>'
            f'<p class="{"holds" if ended.status == "held" else "differs"}">{html.escape(_outcome(ended))}</p>'
            f"<p>{where}</p>{fragment(journal, prefix=f'b{number + 1}-', marked=seq)}</div>"
        )
    title = f"mcp-testkit diff: {chosen.property_id} in the {chosen.era} era, {' vs '.join(n for n, _ in runs)}"
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        f"<title>{html.escape(title)}</title><style>{STYLE}{_DIFF_STYLE}</style><script>{SCRIPT}</script></head>"
        f"<body><h1>{title_html(title)}</h1><pre>{html.escape(text)}</pre>"
        f'<div class="columns">{"".join(columns)}</div></body></html>\n'
    )


def _first_differences(runs: Sequence[tuple[str, Replayed]]) -> list[int | None]:
    """For each bridge, the index of its first request that differs: from the first bridge's for the others, the
    earliest of those for the first; None where the journals are the same."""
    base = request_lines(runs[0][1].journal)
    others: list[int | None] = []
    for _, ended in runs[1:]:
        other = request_lines(ended.journal)
        others.append(None if other == base else _parted_at(base, other))
    parted = [at for at in others if at is not None]
    return [min(parted) if parted else None, *others]


def _row(mark: str, left: int | None, base: list[str], right: int | None, other: list[str], width: int) -> str:
    shown_left = f"#{left + 1} {base[left]}" if left is not None else ""
    shown_right = f"#{right + 1} {other[right]}" if right is not None else ""
    return f"  {mark} {_cut(shown_left, width).ljust(width)} | {shown_right}".rstrip()


def _cut(text: str, width: int) -> str:
    text = re.sub(r"\s+", " ", text)
    return text if len(text) <= width else text[: width - 3] + "..."
