"""One vocabulary (issue 20 item 10): durations in seconds end in `_s`, `transport=` is an httpx2 transport, the
fault comes first; each old spelling still works for this release, warning with the new one."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mcp_testkit
from mcp_testkit import ReferenceBridgeAdapter, TestMcpServer, faults
from mcp_testkit._renamed import OLD_SPELLINGS, renamed_keywords
from mcp_testkit.adapters import DriverFactory
from mcp_testkit.contract import ContractHarness, check_property, run_contract
from mcp_testkit.journal import Journal
from mcp_testkit.scenario import from_json

DOCS = Path(__file__).resolve().parents[1] / "docs"

DURATION = re.compile(r"timeout|ttl|budget|delay|seconds|interval|elapsed|duration|deadline|backoff|_ms$|^at_ms$")
"""A parameter name that says it holds a span of time."""

NOT_SECONDS_S: dict[str, str] = {
    "seconds": "the name is the unit: a fault's wait (`Delay(0.5)`, `LateAnswer`, `SlowPage`, positional and a JSON "
    "key of scenarios and cassettes), `PropertyResult.seconds` and `advance_cache_clock(seconds)`, a method every "
    "caching adapter implements",
    "at_ms": "a recorded `Exchange` mirrors the cassette file's keys (docs/cassettes.md), which are milliseconds",
    "elapsed_ms": "a recorded `Exchange` mirrors the cassette file's keys (docs/cassettes.md), which are milliseconds",
}
"""Duration-like parameters of the public API allowed without the `_s` suffix, each with its reason."""

NOT_PUBLIC = {
    "mcp_testkit.server.ServerState": "one server's live state, read by the transport; `TestMcpServer` builds it from "
    "its own keywords and keeps the wire's units (ttlMs, retry in ms) there",
}


def _public_modules() -> list[str]:
    found = ["mcp_testkit"]
    for module in pkgutil.walk_packages(mcp_testkit.__path__, "mcp_testkit."):
        if not any(part.startswith("_") for part in module.name.split(".")[1:]):
            found.append(module.name)
    return found


def _public_callables() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every class, function and public method named in a public module's `__all__`, once each."""
    seen: set[int] = set()
    for module_name in _public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            thing = getattr(module, name)
            where = f"{module_name}.{name}"
            if id(thing) in seen or where in NOT_PUBLIC or not callable(thing):
                continue
            seen.add(id(thing))
            yield where, thing
            if inspect.isclass(thing):
                for member_name, member in inspect.getmembers(thing):
                    if not member_name.startswith("_") and callable(member) and not inspect.isclass(member):
                        yield f"{where}.{member_name}", member


def _parameters(thing: Callable[..., Any]) -> list[inspect.Parameter]:
    try:
        return list(inspect.signature(thing).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        return []


def test_every_public_duration_is_in_seconds_with_an_s_suffix() -> None:
    """No parameter of the public API that holds a duration lacks the `_s` suffix, but those listed with a reason."""
    offenders = sorted(
        f"{where}({parameter.name}=)"
        for where, thing in _public_callables()
        for parameter in _parameters(thing)
        if DURATION.search(parameter.name) and not parameter.name.endswith("_s") and parameter.name not in NOT_SECONDS_S
    )
    assert offenders == [], "durations are seconds and end in _s (STYLE.md rule 15); rename, or list with a reason"


def test_the_exceptions_listed_still_exist() -> None:
    """Each duration allowed without `_s` is still a parameter somewhere, and the walk sees through the renames."""
    names = {parameter.name for _, thing in _public_callables() for parameter in _parameters(thing)}
    assert set(NOT_SECONDS_S) <= names
    assert {"header_timeout_s", "cache_ttl_s", "budget_s", "example_timeout_s", "timeout_s", "via"} <= names


TRANSPORT_AS_DATA = {
    "mcp_testkit.cassettes.Exchange": "a recorded exchange's `transport` is the cassette file's key, the wire it was "
    "recorded on ('http' or 'stdio'): read back from a file, not a choice a caller makes",
}


def test_transport_is_never_a_string() -> None:
    """A public `transport=` parameter is an httpx2 transport, never a string choosing how to connect."""
    strings = sorted(
        where
        for where, thing in _public_callables()
        if where not in TRANSPORT_AS_DATA
        for parameter in _parameters(thing)
        if parameter.name == "transport"
        and (isinstance(parameter.default, str) or re.search(r"\bstr\b", str(parameter.annotation)))
    )
    assert strings == []


def test_a_rename_must_name_a_keyword_the_function_has() -> None:
    """A rename whose new name is not a parameter, or whose old name still is, fails where it is declared."""

    def configure(*, timeout_s: float = 1.0, delay: float = 0.0) -> float:
        return timeout_s + delay

    with pytest.raises(TypeError, match="configure has no keyword wait_s"):
        renamed_keywords(timeout="wait_s")(configure)
    with pytest.raises(TypeError, match="configure still has the keyword delay"):
        renamed_keywords(delay="timeout_s")(configure)
    assert renamed_keywords(timeout="timeout_s")(configure)(timeout_s=2.0) == 2.0


# -- each old spelling: same behaviour, a warning naming the new one ---------------------------------------------


def _server_limits(server: TestMcpServer) -> tuple[Any, ...]:
    return (
        server.header_timeout_s,
        server.body_timeout_s,
        server.idle_timeout_s,
        server.sessions.idle_timeout_s,
        server._state.cache_ttl_ms,
        server._state.retry_ms,
    )


SAME: list[tuple[str, Callable[[], Any], Callable[[], Any], Callable[[Any], Any]]] = [
    ("header_timeout", lambda: TestMcpServer(header_timeout=3), lambda: TestMcpServer(header_timeout_s=3), _server_limits),  # noqa: E501
    ("body_timeout", lambda: TestMcpServer(body_timeout=2.5), lambda: TestMcpServer(body_timeout_s=2.5), _server_limits),  # noqa: E501
    ("idle_timeout", lambda: TestMcpServer(idle_timeout=9), lambda: TestMcpServer(idle_timeout_s=9), _server_limits),
    (
        "session_idle_timeout",
        lambda: TestMcpServer(session_idle_timeout=4),
        lambda: TestMcpServer(session_idle_timeout_s=4),
        _server_limits,
    ),
    ("cache_ttl_ms", lambda: TestMcpServer(cache_ttl_ms=1500), lambda: TestMcpServer(cache_ttl_s=1.5), _server_limits),
    ("retry_ms", lambda: TestMcpServer(retry_ms=250), lambda: TestMcpServer(retry_s=0.25), _server_limits),
    ("retry_ms", lambda: faults.BreakStream(retry_ms=100), lambda: faults.BreakStream(retry_s=0.1), lambda f: f),
    (
        "retry_ms",
        lambda: faults.from_json({"type": "BreakStream", "retry_ms": 100}),
        lambda: faults.from_json({"type": "BreakStream", "retry_s": 0.1}),
        lambda f: f,
    ),
    (
        "retry_ms",
        lambda: from_json({"retry_ms": 40}).options,
        lambda: from_json({"retry_s": 0.04}).options,
        lambda options: options,
    ),
    (
        "timeout",
        lambda: Journal().wait_for(lambda journal: len(journal) == 0, timeout=0.01),
        lambda: Journal().wait_for(lambda journal: len(journal) == 0, timeout_s=0.01),
        lambda done: done,
    ),
    (
        "start_timeout",
        lambda: DriverFactory("driver", start_timeout=2, close_timeout=3),
        lambda: DriverFactory("driver", start_timeout_s=2, close_timeout_s=3),
        lambda factory: (factory.start_timeout_s, factory.close_timeout_s),
    ),
    (
        "example_timeout",
        lambda: ContractHarness(ReferenceBridgeAdapter, example_timeout=7, transport="socket"),
        lambda: ContractHarness(ReferenceBridgeAdapter, example_timeout_s=7, via="socket"),
        lambda harness: (harness.example_timeout_s, harness.via),
    ),
    (
        "fail_next_call(tool, fault)",
        lambda: TestMcpServer().fail_next_call("create", faults.Drop()),
        lambda: TestMcpServer().fail_next_call(faults.Drop(), tool="create"),
        lambda rule: rule,
    ),
]


@pytest.mark.parametrize(("old", "with_old", "with_new", "seen"), SAME, ids=[f"{c[0]}-{i}" for i, c in enumerate(SAME)])
def test_an_old_spelling_does_what_the_new_one_does_and_warns(
    old: str, with_old: Callable[[], Any], with_new: Callable[[], Any], seen: Callable[[Any], Any]
) -> None:
    """The old spelling gives the same result as the new one, with a DeprecationWarning naming the new one."""
    with pytest.warns(DeprecationWarning, match="is deprecated, use ") as caught:
        old_result = seen(with_old())
    assert old_result == seen(with_new())
    assert old.split("(")[0] in str(caught[0].message)


CHECKED = [
    ("example_timeout_s", lambda: ContractHarness(ReferenceBridgeAdapter, example_timeout=-1)),
    ("budget_s", lambda: check_property(None, "P1", budget=0)),  # type: ignore[arg-type]
    ("via", lambda: run_contract(ReferenceBridgeAdapter, transport="stdio")),
    ("header_timeout_s", lambda: TestMcpServer(header_timeout=0)),
]


@pytest.mark.parametrize(("new", "call"), CHECKED, ids=[new for new, _ in CHECKED])
def test_the_old_spelling_reaches_the_same_check(new: str, call: Callable[[], Any]) -> None:
    """An old keyword's value is checked as the new one's: the error names the new keyword."""
    with pytest.warns(DeprecationWarning, match=f"use {new}="), pytest.raises(ValueError, match=f"^{new} must be"):
        call()


@pytest.mark.parametrize(
    ("make", "old", "new"),
    [
        (lambda: TestMcpServer(header_timeout_s=3), "header_timeout", "header_timeout_s"),
        (lambda: TestMcpServer(body_timeout_s=3), "body_timeout", "body_timeout_s"),
        (lambda: TestMcpServer(idle_timeout_s=3), "idle_timeout", "idle_timeout_s"),
        (lambda: DriverFactory("driver", start_timeout_s=2), "start_timeout", "start_timeout_s"),
        (lambda: DriverFactory("driver", close_timeout_s=2), "close_timeout", "close_timeout_s"),
        (lambda: ContractHarness(ReferenceBridgeAdapter, example_timeout_s=4), "example_timeout", "example_timeout_s"),
        (lambda: ContractHarness(ReferenceBridgeAdapter, via="socket"), "transport", "via"),
    ],
)
def test_an_old_attribute_reads_the_new_one_and_warns(make: Callable[[], Any], old: str, new: str) -> None:
    """A renamed attribute is still readable under its old name, warning with the new one."""
    thing = make()
    with pytest.warns(DeprecationWarning, match=rf"\.{old} is deprecated, use \.{new}"):
        assert getattr(thing, old) == getattr(thing, new)


def test_the_warning_names_the_new_spelling_and_points_at_the_caller() -> None:
    """The warning says which keyword to use instead, and its location is the line that used the old one."""
    with pytest.warns(DeprecationWarning, match="cache_ttl_ms") as caught:
        TestMcpServer(cache_ttl_ms=60_000)
    assert str(caught[0].message).startswith("TestMcpServer(): cache_ttl_ms= is deprecated, use cache_ttl_s=")
    assert caught[0].filename == __file__
    with pytest.warns(DeprecationWarning, match="fail_next_call") as caught:
        TestMcpServer().fail_next_call("create", faults.Drop())
    assert "use fail_next_call(fault, tool=...)" in str(caught[0].message)
    assert caught[0].filename == __file__


@pytest.mark.parametrize(
    "both",
    [
        lambda: TestMcpServer(header_timeout=1, header_timeout_s=1),
        lambda: TestMcpServer(cache_ttl_ms=0, cache_ttl_s=0),
        lambda: faults.BreakStream(retry_ms=1, retry_s=0.001),
        lambda: ContractHarness(ReferenceBridgeAdapter, transport="socket", via="socket"),
        lambda: Journal().wait_for(lambda journal: True, timeout=1, timeout_s=1),
        lambda: TestMcpServer().fail_next_call("create", faults.Drop(), tool="create"),
    ],
)
def test_giving_both_spellings_is_a_type_error(both: Callable[[], Any]) -> None:
    """The old and the new spelling together are refused, since they may disagree."""
    with pytest.raises(TypeError, match=r"give .* only|give the tool once"):
        both()


def test_a_scenario_with_both_spellings_is_refused() -> None:
    """A JSON scenario with retry_ms and retry_s is a ScenarioError naming the one to keep."""
    with pytest.raises(ValueError, match="give retry_s only"):
        from_json({"retry_ms": 40, "retry_s": 0.04})


def test_the_suite_turns_our_deprecation_warnings_into_errors() -> None:
    """pytest's `filterwarnings` starts with `error` and ignores none of ours, so no old spelling hides in a test."""
    import tomllib

    config = tomllib.loads((DOCS.parent / "pyproject.toml").read_text(encoding="utf-8"))
    filters = config["tool"]["pytest"]["ini_options"]["filterwarnings"]
    assert filters[0] == "error"
    assert not [entry for entry in filters if entry.startswith("ignore") and "is deprecated, use" in entry]


def test_the_renamed_page_lists_every_old_spelling() -> None:
    """docs/changes.md names each old keyword with its new one."""
    for module in _public_modules():
        importlib.import_module(module)  # each registers its renames
    text = (DOCS / "changes.md").read_text(encoding="utf-8")
    for where, renames in OLD_SPELLINGS.items():
        if "<locals>" in where:  # a rename a test declared, not one of the package's
            continue
        for old, new in renames.items():
            assert f"`{old}`" in text, (where, old)
            assert f"`{new}`" in text, (where, new)
    assert "fail_next_call(fault, tool=...)" in text
