"""Mutations of a JSON document for the fuzz tests: a value replaced by an odd one, a token JSON does not have
(NaN, 1e999, a lone surrogate), nesting thousands deep, or the text cut short."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["mutated_text"]

_HOLE = "\u0000HOLE\u0000"
_ODD_TOKENS = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "1" * 5000, "tru", '"\\ud800"'])
_ODD_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from([{}, [], {"p": 2}, ["p2"], "\x1b[2J", "", 10**18]),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutated_text(draw: st.DrawFn, seed: Any) -> str:
    path = draw(st.sampled_from(_paths(seed)))
    kind = draw(st.sampled_from(["value", "token", "deep", "cut"]))
    if kind == "value":
        return json.dumps(_replaced(seed, path, draw(_ODD_VALUES)))
    text = json.dumps(_replaced(seed, path, _HOLE))
    if kind == "token":
        return text.replace(json.dumps(_HOLE), draw(_ODD_TOKENS))
    if kind == "deep":
        depth = draw(st.integers(min_value=100, max_value=20_000))
        opener = draw(st.sampled_from(["[", '{"k": ']))
        closer = "]" if opener == "[" else "}"
        return text.replace(json.dumps(_HOLE), opener * depth + "0" + closer * depth)
    return text[: draw(st.integers(min_value=0, max_value=len(text)))]


