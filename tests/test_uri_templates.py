"""Matching a URI against a resource template (`_wire/uri_templates.py`): the parameters a backtracking regex of
`(?P<name>[^/?#]+)` per parameter gave, found without backtracking, and the limits on URIs and parameters."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_testkit import ScriptedTemplate
from mcp_testkit._wire.uri_templates import MAX_TEMPLATE_PARAMETERS, MAX_URI_LENGTH, UriTemplate


def _reference(template: str, uri: str) -> dict[str, str] | None:
    """The matcher this one replaced: a regex, fine on short URIs, exponential in the parameters on long ones."""
    parts = re.split(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template)
    pattern = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/?#]+)" for i, part in enumerate(parts))
    found = re.fullmatch(pattern, uri)
    return None if found is None else found.groupdict()


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("db://rows/{id}", "db://rows/7", {"id": "7"}),
        ("db://rows/{id}", "db://rows/7/x", None),
        ("db://rows/{id}", "db://rows/", None),
        ("db://rows/{id}", "db://rows/7?x=1", None),
        ("db://rows/{id}", "db://rows/7#top", None),
        ("db://rows/{id}", "db://cols/7", None),
        ("test://template/{id}/data", "test://template/42/data", {"id": "42"}),
        ("test://template/{id}/data", "test://template/42/data/", None),
        ("log://{year}-{month}-{day}", "log://2026-12-02", {"year": "2026", "month": "12", "day": "02"}),
        ("log://{year}-{month}-{day}", "log://a-b-c-d", {"year": "a-b", "month": "c", "day": "d"}),
        ("log://{year}-{month}-{day}", "log://---", None),
        ("log://{year}-{month}-{day}", "log://-----", {"year": "-", "month": "-", "day": "-"}),
        ("x://{a}{b}", "x://abcd", {"a": "abc", "b": "d"}),
        ("x://{a}{b}{c}", "x://ab", None),
        ("{scheme}://{host}/p", "s3://bucket/p", {"scheme": "s3", "host": "bucket"}),
        ("x://a.(b)*/{v}", "x://a.(b)*/1", {"v": "1"}),
        ("x://a.(b)*/{v}", "x://aX(b)/1", None),
        ("note://{title}", "note://caf\u00e9 au lait\n", {"title": "caf\u00e9 au lait\n"}),
    ],
)
def test_a_uri_gives_the_parameters_the_regex_gave(template: str, uri: str, expected: dict[str, str] | None) -> None:
    """Each parameter is a non-empty run without `/`, `?` or `#`, as long as the rest allows, the first first."""
    assert UriTemplate.parse(template).match(uri) == expected
    assert _reference(template, uri) == expected
    assert ScriptedTemplate(template, "t", reads=lambda params: "").match(uri) == expected


_PIECES = st.sampled_from(["{a}", "{b}", "{c}", "{d}", "-", "/", "?", "a", "ab", "-a"])


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(_PIECES, min_size=1, max_size=6), uri=st.text("ab-/?#", max_size=12))
def test_the_matcher_agrees_with_the_regex_on_short_inputs(pieces: list[str], uri: str) -> None:
    """On every template of a few pieces and every short URI, the same answer as the backtracking regex."""
    template = "".join(pieces)
    try:
        matcher = UriTemplate.parse(template)
    except ValueError:
        return  # no parameter, or one named twice: refused when scripted
    assert matcher.match(uri) == _reference(template, uri)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(_PIECES, min_size=1, max_size=6), data=st.data())
def test_the_matcher_agrees_on_uris_made_from_the_template(pieces: list[str], data: st.DataObject) -> None:
    """URIs built by filling the template in (so that most match) get the regex's parameters too."""
    template = "".join(pieces)
    try:
        matcher = UriTemplate.parse(template)
    except ValueError:
        return
    values = {name: data.draw(st.text("ab-/", min_size=0, max_size=4)) for name in matcher.names}
    uri = re.sub(r"\{(\w+)\}", lambda found: values[found.group(1)], template)
    assert matcher.match(uri) == _reference(template, uri)


def test_a_uri_over_the_limit_matches_nothing() -> None:
    """A URI of `MAX_URI_LENGTH` characters matches; one character more does not, whatever the template."""
    template = UriTemplate.parse("db://rows/{id}")
    at_limit = "db://rows/" + "x" * (MAX_URI_LENGTH - len("db://rows/"))
    assert template.match(at_limit) == {"id": at_limit[len("db://rows/") :]}
    assert template.match(at_limit + "x") is None


def test_the_pathological_uris_get_their_answer() -> None:
    """The issue's URIs, and the same at the length limit, are answered (no match, or the greedy split)."""
    dates = UriTemplate.parse("log://{year}-{month}-{day}")
    assert dates.match("log://" + "-" * 2994 + "/") is None
    assert dates.match("log://" + "-" * (MAX_URI_LENGTH - 7) + "/") is None
    hours = UriTemplate.parse("log://{year}-{month}-{day}-{hour}")
    assert hours.match("log://" + "-" * 398 + "/") is None
    split = hours.match("log://" + "-" * (MAX_URI_LENGTH - 6))
    assert split is not None
    assert [len(value) for value in split.values()] == [MAX_URI_LENGTH - 12, 1, 1, 1]


def test_a_template_has_at_most_the_limit_of_parameters() -> None:
    """`MAX_TEMPLATE_PARAMETERS` parameters are fine; one more is a ValueError naming the template and the limit,
    from `resource_template()` too; the other refusals are as before."""
    fine = "x://" + "/".join(f"{{p{i}}}" for i in range(MAX_TEMPLATE_PARAMETERS))
    assert UriTemplate.parse(fine).names == tuple(f"p{i}" for i in range(MAX_TEMPLATE_PARAMETERS))
    over = fine + "/{extra}"
    with pytest.raises(ValueError, match=rf"has {MAX_TEMPLATE_PARAMETERS + 1} parameters, over the limit"):
        ScriptedTemplate(over, "t", reads=lambda params: "")
    with pytest.raises(ValueError, match="has no"):
        UriTemplate.parse("x://plain")
    with pytest.raises(ValueError, match="twice"):
        UriTemplate.parse("x://{a}/{a}")
