"""The contract's log capture is scoped: one handler on the root logger (and on the loggers an adapter names)
while an example runs; no other logger's handlers, level or propagation change, during a run or after it."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from mcp_testkit.adapters import Outcome, ReferenceBridgeAdapter
from mcp_testkit.contract import ContractHarness, check_property, run_contract


class _Keep(logging.Handler):
    """A handler of the user's that keeps what reaches it."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _state(logger: logging.Logger) -> tuple[list[logging.Handler], bool, int]:
    return list(logger.handlers), logger.propagate, logger.level


class _Observing(ReferenceBridgeAdapter):
    """The reference bridge, logging through a propagating logger; while it calls it also writes to an unrelated
    logger and notes that logger's state and the root logger's handlers. Every call is reported as a tool error."""

    seen: ClassVar[list[Any]] = []

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        logging.getLogger("observing.bridge").warning("calling %s through a propagating logger", tool)
        unrelated = logging.getLogger("unrelated.library")
        unrelated.warning("something of its own")
        _Observing.seen.append((_state(unrelated), list(logging.getLogger().handlers)))
        await super().call(tool, arguments)
        return Outcome.tool_error(RuntimeError("observing"))


@pytest.fixture
def unrelated() -> Any:
    """A handler of the user's on an unrelated logger that does not propagate, with a level of its own."""
    logger = logging.getLogger("unrelated.library")
    handler = _Keep()
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    yield logger, handler
    logger.removeHandler(handler)
    logger.propagate = True
    logger.setLevel(logging.NOTSET)


def test_an_unrelated_logger_is_untouched_during_and_after_a_run(unrelated: Any) -> None:
    """A handler on an unrelated logger stays, and gets its records, during a run; its logger's state is unchanged
    after; the root logger gains the capture's handler only while an example runs."""
    logger, handler = unrelated
    before, root_before = _state(logger), list(logging.getLogger().handlers)
    _Observing.seen = []
    [result] = run_contract(_Observing, eras=["handshake"], properties=["P7"], max_examples=5)
    assert result.status == "failed"
    assert _Observing.seen
    for state, root_handlers in _Observing.seen:
        assert state == before
        assert root_handlers[: len(root_before)] == root_before
        assert len(root_handlers) == len(root_before) + 1  # the capture's one handler
    assert _state(logger) == before
    assert list(logging.getLogger().handlers) == root_before
    assert [r.getMessage() for r in handler.records][:1] == ["something of its own"]


def test_a_propagating_bridge_logger_reaches_the_evidence(unrelated: Any) -> None:
    """The lines a bridge logs through a propagating logger appear under the failing example; the unrelated
    logger's, which does not propagate, do not."""
    _Observing.seen = []
    [result] = run_contract(_Observing, eras=["handshake"], properties=["P7"], max_examples=5)
    evidence = result.counterexample or ""
    assert "WARNING observing.bridge: calling tool through a propagating logger" in evidence
    assert "something of its own" not in evidence


class _Chatty(ReferenceBridgeAdapter):
    """The reference bridge (which holds P5), logging a warning on every call, from its task and from a thread."""

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        import anyio

        logging.getLogger("chatty.bridge").warning("calling %s", tool)
        await anyio.to_thread.run_sync(lambda: logging.getLogger("chatty.worker").warning("in a thread"))
        return await super().call(tool, arguments)


def test_a_chatty_bridge_does_not_reach_the_users_handlers_during_a_passing_run() -> None:
    """A bridge that logs on every call, run for P5 (which it holds): none of its records reach a handler the user
    put on the root logger, during the run or after; the user's own records, logged between runs, still do; the
    handler's filters are as they were."""
    root, mine = logging.getLogger(), _Keep()
    root.addHandler(mine)
    try:
        [result] = run_contract(_Chatty, eras=["handshake"], properties=["P5"], max_examples=5)
        logging.getLogger("the.user").warning("after the run")
    finally:
        root.removeHandler(mine)
    assert result.status == "passed", result.counterexample
    assert [record.getMessage() for record in mine.records] == ["after the run"]
    assert mine.filters == []


def test_loggers_that_are_not_names_are_an_error() -> None:
    """An adapter whose `loggers` is not a collection of logger names gets an error verdict naming it."""

    class _BadLoggers(ReferenceBridgeAdapter):
        loggers = "one.string"

    with ContractHarness(_BadLoggers) as harness:
        result = check_property(harness, "P7")
    assert result.status == "error"
    assert "loggers must be a collection of logger names" in (result.counterexample or "")
