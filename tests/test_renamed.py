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


def test_a_name_moved_out_of_the_server_still_imports_with_a_warning() -> None:
    """`mcp_testkit.server.stdio_supports` (the proxy's old import) is `effects.supports_stdio`, warning its home."""
    import mcp_testkit.server
    from mcp_testkit.server import effects

    with pytest.warns(DeprecationWarning, match=r"stdio_supports is deprecated: use .*effects\.supports_stdio") as w:
        moved = mcp_testkit.server.stdio_supports
    assert moved is effects.supports_stdio
    assert w[0].filename == __file__
    with pytest.warns(DeprecationWarning, match=r"server\.Effect is deprecated: use mcp_testkit\.server\.effects"):
        assert mcp_testkit.server.Effect is effects.Effect
    with pytest.warns(DeprecationWarning, match=r"effect_of is deprecated"):
        assert mcp_testkit.server.effect_of is effects.effect_of


def test_the_server_state_moved_nowhere_and_the_warning_says_what_to_read_instead() -> None:
    """`ServerState` has no public home: the warning points at the server's own properties."""
    import mcp_testkit.server

    with pytest.warns(DeprecationWarning, match=r"ServerState is deprecated: .*TestMcpServer's properties"):
        state_class = mcp_testkit.server.ServerState
    assert state_class.__name__ == "ServerState"
    assert "ServerState" not in mcp_testkit.server.__all__


def test_a_name_that_never_was_is_still_an_attribute_error() -> None:
    """The module's `__getattr__` knows only the moved names; any other is an AttributeError naming it."""
    import mcp_testkit.server

    with pytest.raises(AttributeError, match="no_such_name"):
        _ = mcp_testkit.server.no_such_name  # type: ignore[attr-defined]
