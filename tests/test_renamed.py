"""Old spellings of renamed arguments keep working with a DeprecationWarning naming the new one."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from mcp_testkit._renamed import renamed


def _configure(timeout_s: float | None = None, **old: Any) -> float | None:
    to_seconds = lambda v: v / 1000  # noqa: E731
    value: float | None = renamed(old, "timeout_ms", "timeout_s", timeout_s, where="configure()", convert=to_seconds)
    return value


def test_the_new_spelling_passes_silently() -> None:
    """The new name is used as given, with no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _configure(timeout_s=2.0) == 2.0


def test_the_old_spelling_warns_naming_the_new_one() -> None:
    """The old name still gives its value (converted), and warns naming the new name, pointing at the caller."""
    with pytest.warns(DeprecationWarning, match=r"configure\(\): timeout_ms= is deprecated, use timeout_s=") as caught:
        assert _configure(timeout_ms=1500) == 1.5
    assert caught[0].filename == __file__


def test_both_spellings_at_once_are_refused() -> None:
    """Giving the old and the new name together is a TypeError, since they may disagree."""
    with pytest.raises(TypeError, match=r"give timeout_s= only"):
        _configure(timeout_s=1.0, timeout_ms=1000)
