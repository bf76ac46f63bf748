"""The plugin's settings: options and ini keys read once at configure time, and the marker's keywords."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "ALLOW_KEY",
    "CASSETTE_KEYS",
    "FIRED_KEY",
    "JOURNAL_MODES",
    "MARKER",
    "OPTIONS",
    "RECORD_MODES",
    "STRICT_KEY",
    "TRANSPORTS",
    "Options",
    "Referee",
    "assert_all_fired",
    "keep_asyncio_fixture_loop_scope",
    "marker_settings",
    "read_options",
    "referee_of",
]

TRANSPORTS = ("socket", "asgi")
JOURNAL_MODES = ("fail", "always", "never")
RECORD_MODES = ("none", "once", "new", "all")
CASSETTE_KEYS = ("cassette", "upstream", "upstream_headers", "upstream_era", "match", "redact")
PROXY_KEYS = ("upstream", "upstream_headers")
"""The keywords of a marker that puts the chaos proxy in front of a live server (`upstream=` without `cassette=`)."""
FIRED_KEY = "assert_all_fired"
"""The marker keyword that relaxes the fail-closed check of scripted faults at teardown."""
STRICT_KEY = "strict"
"""The marker keyword (and, as `mcp_strict`, the ini key) that turns off the referee's fail-closed check."""
ALLOW_KEY = "allow_violations"
"""The marker keyword (and, as `mcp_allow_violations`, the ini key) naming referee rules a test may break."""

MARKER = (
    "mcp_server(name=..., page_size=..., response_mode=..., required_headers={...}, preset=...): "
    "configure the mcp_server fixture for this test (any TestMcpServer keyword except host and port); "
    "assert_all_fired=False lets a scripted fault of the test's servers stay unfired; "
    "strict=False lets the client break MCP's rules (docs/referee.md), allow_violations=[rule ids] the ones named; "
    "cassette='tapes/x.json' (with upstream=, upstream_headers=, upstream_era=, match=, redact=) replays or "
    "records a server; upstream='http://...' (or a command) without cassette= puts the chaos proxy in front of "
    "that live server"
)


@dataclass(frozen=True)
class Referee:
    """Whether a test fails on the referee's violations in its servers' journals, and which rules it may break."""

    strict: bool = True
    allow: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Options:
    """The run's settings: how fixtures reach servers, when reports carry journals, and the record mode."""

    transport: str
    journal: str
    limit: int
    asyncio: bool
    record: str = "none"
    report_dir: Path | None = None
    """Where a failing test's journals go as HTML diagrams (--mcp-report); None writes none."""
    referee: Referee = Referee()
    """The ini keys' referee check: on for every rule (the default), off, or some rules allowed."""


OPTIONS = pytest.StashKey[Options]()


def read_options(config: pytest.Config, *, asyncio: bool) -> Options:
    """The options and ini keys of the `mcp-testkit` group, checked; a UsageError names a wrong value."""
    transport = config.getoption("mcp_transport", None) or config.getini("mcp_transport")
    journal = config.getoption("mcp_journal", None) or config.getini("mcp_journal")
    if transport not in TRANSPORTS:
        raise pytest.UsageError(f"mcp_transport must be one of {', '.join(TRANSPORTS)}, not {transport!r}")
    if journal not in JOURNAL_MODES:
        raise pytest.UsageError(f"mcp_journal must be one of {', '.join(JOURNAL_MODES)}, not {journal!r}")
    limit = config.getini("mcp_journal_limit")
    if not str(limit).isdigit() or int(limit) < 1:
        raise pytest.UsageError(f"mcp_journal_limit must be a positive integer, not {limit!r}")
    record = config.getoption("mcp_record", None) or config.getini("mcp_record")
    if record not in RECORD_MODES:
        raise pytest.UsageError(f"mcp_record must be one of {', '.join(RECORD_MODES)}, not {record!r}")
    strict = str(config.getini("mcp_strict")).strip().lower()
    if strict not in ("true", "false"):
        raise pytest.UsageError(f"mcp_strict must be true or false, not {strict!r}")
    allow = _known_rules(config.getini("mcp_allow_violations"), "the ini key mcp_allow_violations", pytest.UsageError)
    referee = Referee(strict == "true", allow)
    return Options(transport, journal, int(limit), asyncio, record, _report_dir(config), referee)


def _known_rules(names: Any, where: str, error: type[Exception]) -> frozenset[str]:
    """`names` (rule ids) as a set, each checked against the referee's rules; `error` names an unknown one."""
    from mcp_testkit._wire.referee import RULES

    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise error(f"{where} takes a list of referee rule ids, not {names!r}; the rules are {', '.join(RULES)}")
    unknown = sorted(set(names) - set(RULES))
    if unknown:
        raise error(f"{where} names no referee rule: {', '.join(unknown)}; the rules are {', '.join(RULES)}")
    return frozenset(names)


def _report_dir(config: pytest.Config) -> Path | None:
    """--mcp-report's directory (relative to where pytest was started), else the ini key's (relative to the
    ini file), else None."""
    given = config.getoption("mcp_report", None)
    if given:
        return config.invocation_params.dir / str(given)
    ini = str(config.getini("mcp_report") or "").strip()
    if not ini:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return base / ini


def keep_asyncio_fixture_loop_scope(config: pytest.Config) -> None:
    """Spare a plain run pytest-asyncio's deprecation warning, which `-W error` turns into a crash.

    pytest-asyncio warns on every run in which `asyncio_default_fixture_loop_scope` is unset, also in a
    project whose only async tests are the ones our fixtures serve. When the user has not set it, set
    the value pytest-asyncio itself names for keeping its present behaviour ("fixture-scope"), so that
    nothing changes but the warning. A pytest-asyncio without that value is left alone.
    """
    import pytest_asyncio.plugin

    keep = getattr(pytest_asyncio.plugin, "_MATCH_FIXTURE_SCOPE", None)
    cache = getattr(config, "_inicache", None)
    key = "asyncio_default_fixture_loop_scope"
    if isinstance(keep, str) and isinstance(cache, dict) and not config.getini(key):
        cache[key] = keep


_server_defaults: dict[str, Any] | None = None


def _constructor_defaults() -> dict[str, Any]:
    """`TestMcpServer`'s keywords and their defaults, read from its signature once."""
    global _server_defaults
    if _server_defaults is None:
        import inspect

        from mcp_testkit.server import TestMcpServer

        parameters = inspect.signature(TestMcpServer.__init__).parameters.values()
        _server_defaults = {p.name: p.default for p in parameters if p.name != "self"}
    return _server_defaults


def _merged_marks(item: pytest.Item) -> dict[str, Any]:
    """The keywords of the test's `mcp_server` markers, the closest one winning keyword by keyword."""
    merged: dict[str, Any] = {}
    for mark in reversed(list(item.iter_markers("mcp_server"))):
        if mark.args:
            pytest.fail(f"@pytest.mark.mcp_server takes keywords only, not {mark.args!r}", pytrace=False)
        merged.update(mark.kwargs)
    return merged


def assert_all_fired(item: pytest.Item) -> bool:
    """Whether every scripted fault of the test's servers must have fired by the end of the test (the default),
    or the marker's `assert_all_fired=False` lets one stay unfired."""
    value = _merged_marks(item).get(FIRED_KEY, True)
    if not isinstance(value, bool):
        pytest.fail(f"@pytest.mark.mcp_server: {FIRED_KEY} takes True or False, not {value!r}", pytrace=False)
    return value


def referee_of(item: pytest.Item) -> Referee:
    """The referee check for the test: the ini keys', then its marker's `strict=` and `allow_violations=`."""
    ini = item.config.stash[OPTIONS].referee
    marks = _merged_marks(item)
    strict = marks.get(STRICT_KEY, ini.strict)
    if not isinstance(strict, bool):
        pytest.fail(f"@pytest.mark.mcp_server: {STRICT_KEY} takes True or False, not {strict!r}", pytrace=False)
    allow = marks.get(ALLOW_KEY, ())
    try:
        rules = _known_rules(allow, f"@pytest.mark.mcp_server: {ALLOW_KEY}", ValueError)
    except ValueError as exc:
        pytest.fail(str(exc), pytrace=False)
    return Referee(strict, ini.allow | rules)


def marker_settings(item: pytest.Item) -> tuple[dict[str, Any], dict[str, str]]:
    """The server settings of the test's `mcp_server` markers (closest wins), minus defaults, and its headers."""
    assert_all_fired(item)
    referee_of(item)
    merged = _merged_marks(item)
    for key in (FIRED_KEY, STRICT_KEY, ALLOW_KEY):
        merged.pop(key, None)
    headers = dict(merged.pop("required_headers", None) or {})
    cassette = {key: merged.pop(key) for key in CASSETTE_KEYS if key in merged}
    if cassette and "cassette" not in cassette and not set(cassette) <= set(PROXY_KEYS):
        needing = [key for key in cassette if key not in PROXY_KEYS]
        pytest.fail(f"@pytest.mark.mcp_server: {', '.join(needing)} need cassette='path.json'", pytrace=False)
    defaults = _constructor_defaults()
    unknown = sorted(set(merged) - (set(defaults) - {"host", "port"}))
    if unknown:
        keys = {*defaults, "required_headers", FIRED_KEY, STRICT_KEY, ALLOW_KEY} - {"host", "port"}
        allowed = ", ".join(sorted(keys))
        pytest.fail(f"@pytest.mark.mcp_server: unknown keyword {', '.join(unknown)}; it takes {allowed}", pytrace=False)
    settings = {name: value for name, value in merged.items() if not _is_default(value, defaults[name])}
    return {**settings, **cassette}, headers


def _is_default(value: Any, default: Any) -> bool:
    try:
        return bool(type(value) is type(default) and value == default)
    except Exception:
        return False
