"""Every 2026-07-28 server scenario of the official conformance suite's pre-release (pinned in tests/conformance_next)
against `TestMcpServer(preset="conformance")`, at the 2026-07-28 wire: on a server of both eras, and those it passes
on a server of the stateless era only too.

The tasks extension's scenarios (which name no spec version) run at the wire the suite picks for them.

A scenario about a feature the server does not have would be a known gap (GAPS, TASK_GAPS: both empty now): an
xfail(strict) with its reason, which also fails loudly when any other check of the scenario fails, or when the known
ones start to pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from node_trees import NPM_CI_TIMEOUT_S, SCENARIO_TIMEOUT_S, ConformanceSuite

from mcp_testkit import TestMcpServer

SPEC = "2026-07-28"

PASSING = [
    "server-stateless",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "http-header-validation",
    "http-custom-header-server-validation",
    "input-required-result-unsupported-methods",
    "input-required-result-validate-input",
    "completion-complete",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "sep-2164-resource-not-found",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "caching",
    "input-required-result-basic-elicitation",
    "input-required-result-basic-sampling",
    "input-required-result-basic-list-roots",
    "input-required-result-request-state",
    "input-required-result-multiple-input-requests",
    "input-required-result-multi-round",
    "input-required-result-missing-input-response",
    "input-required-result-non-tool-request",
    "input-required-result-result-type",
    "input-required-result-tampered-state",
    "input-required-result-capability-check",
    "input-required-result-ignore-extra-params",
]


@dataclass(frozen=True)
class Gap:
    """Why the server knowingly fails a scenario, and the checks it fails (FAILURE) or leaves unchecked (WARNING)."""

    reason: str
    checks: frozenset[str]


def _gap(reason: str, *checks: str) -> Gap:
    return Gap(reason, frozenset(checks))


GAPS: dict[str, Gap] = {}


class ScenarioGap(Exception):
    """The scenario failed exactly the checks its known gap names."""


BOTH = ("handshake", "stateless")
ONLY = ("stateless",)


@pytest.fixture(scope="module")
def next_server(request: pytest.FixtureRequest) -> Iterator[TestMcpServer]:
    """One conformance-preset server on loopback per set of eras the cases name; its handler errors fail the module."""
    with TestMcpServer("conformance", preset="conformance", eras=request.param) as server:
        yield server
    server.check()


CASES = [
    *(
        pytest.param(scenario, eras, id=f"{scenario}-{'both-eras' if eras == BOTH else 'stateless-only'}")
        for eras in (BOTH, ONLY)
        for scenario in PASSING
    ),
    *(
        pytest.param(
            scenario,
            BOTH,
            id=f"{scenario}-both-eras",
            marks=pytest.mark.xfail(reason=gap.reason, strict=True, raises=ScenarioGap),
        )
        for scenario, gap in GAPS.items()
    ),
]


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
@pytest.mark.parametrize(("scenario", "next_server"), CASES, indirect=["next_server"])
def test_conformance_2026_scenario(
    conformance_next: ConformanceSuite, next_server: TestMcpServer, scenario: str, tmp_path: Path
) -> None:
    """The scenario's checks all pass at the 2026-07-28 wire; a known gap fails exactly its own checks."""
    run = conformance_next.run(next_server.url, scenario, cwd=tmp_path, spec_version=SPEC)
    assert run.tally is not None, f"no result line from the conformance suite (exit {run.returncode}):\n{run.output}"
    gap = GAPS.get(scenario)
    known = gap.checks if gap is not None else frozenset()
    unmet = run.checks("FAILURE") | run.checks("WARNING")
    outside = sorted(unmet - known)
    assert not outside, f"checks outside the known gap failed or could not be checked: {outside}\n{run.output}"
    if gap is not None:
        passing = sorted(known - unmet)
        assert not passing, f"known gap checks now pass, drop them from GAPS: {passing}\n{run.output}"
        raise ScenarioGap(gap.reason)
    assert run.all_passed, run.output


LISTEN_CHECKS = frozenset(
    {
        "sep-2575-server-sends-subscription-ack",
        "sep-2575-server-tags-subscription-id",
        "sep-2575-server-honors-notification-filter",
        "sep-2575-server-sends-prompts-list-changed-on-subscription",
        "sep-2575-server-sends-tools-list-changed-on-subscription",
    }
)


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
def test_the_listen_checks_of_server_stateless_are_exercised_not_skipped(
    conformance_next: ConformanceSuite, tmp_path: Path
) -> None:
    """server-stateless's subscriptions/listen checks (SEP-2575) succeed: the server announces change notifications
    and the preset's trigger tools change the lists, so none of them is skipped as not applicable."""
    with TestMcpServer("conformance", preset="conformance") as server:
        run = conformance_next.run(server.url, "server-stateless", cwd=tmp_path, spec_version=SPEC)
    server.check()
    assert run.tally is not None, run.output
    assert LISTEN_CHECKS <= run.checks("SUCCESS"), run.output


TASKS_PASSING = [
    "tasks-mrtr-composition",
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-dispatch-and-envelope",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-required-task-error",
    "tasks-request-headers",
    "tasks-mrtr-input",
]
"""The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663) the server passes; an extension names
no spec version, so each runs at the wire the suite picks for it (2026-07-28's)."""

TASK_GAPS: dict[str, Gap] = {}

SKIPPED_BY_THE_SUITE = {
    "tasks-status-notifications": "the pinned suite skips its only check, pending a rewrite onto subscriptions/listen; "
    "the server sends notifications/tasks there (tests/server/test_tasks_input.py checks them)",
}


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
@pytest.mark.parametrize(
    ("scenario", "next_server"),
    [
        *(
            pytest.param(scenario, eras, id=f"{scenario}-{'both-eras' if eras == BOTH else 'stateless-only'}")
            for eras in (BOTH, ONLY)
            for scenario in TASKS_PASSING
        ),
        *(
            pytest.param(
                scenario,
                BOTH,
                id=f"{scenario}-both-eras",
                marks=pytest.mark.xfail(reason=gap.reason, strict=True, raises=ScenarioGap),
            )
            for scenario, gap in TASK_GAPS.items()
        ),
    ],
    indirect=["next_server"],
)
def test_tasks_extension_scenario(
    conformance_next: ConformanceSuite, next_server: TestMcpServer, scenario: str, tmp_path: Path
) -> None:
    """The tasks extension's scenario passes every check; a known gap fails exactly its own checks."""
    run = conformance_next.run(next_server.url, scenario, cwd=tmp_path)
    assert run.tally is not None, f"no result line from the conformance suite (exit {run.returncode}):\n{run.output}"
    gap = TASK_GAPS.get(scenario)
    known = gap.checks if gap is not None else frozenset()
    unmet = run.checks("FAILURE") | run.checks("WARNING")
    assert not sorted(unmet - known), f"checks outside the known gap failed: {sorted(unmet - known)}\n{run.output}"
    if gap is not None:
        assert not sorted(known - unmet), f"known gap checks now pass, drop them from TASK_GAPS\n{run.output}"
        raise ScenarioGap(gap.reason)
    assert run.all_passed, run.output


@pytest.mark.timeout(NPM_CI_TIMEOUT_S + SCENARIO_TIMEOUT_S)
def test_the_tasks_scenario_the_suite_skips_is_still_skipped(
    conformance_next: ConformanceSuite, tmp_path: Path
) -> None:
    """tasks-status-notifications checks nothing in the pinned suite (its check is SKIPPED); when it starts to check,
    this fails, to move it to TASKS_PASSING or TASK_GAPS."""
    with TestMcpServer("conformance", preset="conformance") as server:
        for scenario in SKIPPED_BY_THE_SUITE:
            run = conformance_next.run(server.url, scenario, cwd=tmp_path)
            assert run.checks("SKIPPED") == {scenario}, run.output
            assert not run.checks("SUCCESS") | run.checks("FAILURE") | run.checks("WARNING"), run.output
    server.check()


def test_every_tasks_scenario_of_the_pinned_suite_is_listed(conformance_next: ConformanceSuite) -> None:
    """The tasks extension's scenarios here are exactly those the pinned pre-release lists."""
    listed = {name for name, versions in conformance_next.server_scenarios().items() if name.startswith("tasks-")}
    assert listed == set(TASKS_PASSING) | set(TASK_GAPS) | set(SKIPPED_BY_THE_SUITE)


def test_every_2026_server_scenario_of_the_pinned_suite_is_run(conformance_next: ConformanceSuite) -> None:
    """The scenarios here are exactly the server scenarios the pinned pre-release lists for 2026-07-28 (extensions,
    which name no version, are not the spec's)."""
    dated = {name for name, versions in conformance_next.server_scenarios().items() if SPEC in versions}
    assert dated == set(PASSING) | set(GAPS)
    assert not set(PASSING) & set(GAPS)
