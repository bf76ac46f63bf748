"""The driver protocol: `DriverAdapter` against real driver processes, well-behaved and misbehaving."""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from jsonschema import Draft202012Validator

from mcp_testkit.adapters import DriverAdapter, DriverError, DriverFactory
from mcp_testkit.adapters._driver import _problem, driver_schema
from mcp_testkit.contract import run_contract

DRIVERS = Path(__file__).resolve().parents[1] / "drivers"
REFERENCE = [sys.executable, str(DRIVERS / "drive_reference.py")]
CHECK = [sys.executable, "-m", "mcp_testkit", "check"]


def _fake(mode: str) -> list[str]:
    return [sys.executable, str(DRIVERS / "fake_driver.py"), mode]


def _stopped(factory: DriverFactory) -> bool:
    return all(process.popen.poll() is not None for process in factory._started)


def test_reference_driver_holds_what_the_reference_bridge_holds() -> None:
    """The reference bridge run by a driver process holds every property in both eras, as it does in-process:
    the protocol loses nothing. P8, P9, P14 and P15 do not apply: the driver protocol has no approvals, cache clock
or OAuth handlers;
    nor P10 and P13: a call cannot be abandoned through it, nor two overlap (the adapter declares `cannot` both).
    P11 and P12 apply, on the waits its hello declares."""
    factory = DriverAdapter.factory(REFERENCE)
    results = run_contract(factory, max_examples=15, via="socket")
    verdicts = {(r.property_id, r.era): r.status for r in results}
    capabilities = {
        (pid, era) for pid in ("P8", "P9", "P10", "P13", "P14", "P15") for era in ("handshake", "stateless")
    }
    eras = {("P5s", "handshake"), ("P18", "handshake"), ("P5", "stateless"), ("P19", "stateless")}
    not_applicable = {*eras, *capabilities}
    assert {key for key, status in verdicts.items() if status == "not_applicable"} == not_applicable
    unheld = {key: status for key, status in verdicts.items() if key not in not_applicable and status != "passed"}
    assert unheld == {}, [r.counterexample for r in results if (r.property_id, r.era) in unheld]
    assert {era for _, era in verdicts} == {"handshake", "stateless"}
    assert factory.name == "reference@0.1.0"
    assert factory._started
    assert _stopped(factory), "the run must stop every driver process it started"


def test_one_driver_process_serves_many_examples() -> None:
    """A driver process is kept across examples: one run starts it once (plus the hello read)."""
    factory = DriverAdapter.factory(REFERENCE)
    [result] = run_contract(factory, properties=["P4"], eras=("handshake",), max_examples=12, via="socket")
    assert result.passed
    assert result.examples == 12
    assert len(factory._started) == 1


def test_per_call_facts_come_from_the_hello() -> None:
    """The adapter declares the facts of the driver's hello (sessions, retry, page_limit, timeout_s)."""
    with DriverAdapter.factory([*REFERENCE, "--per-call"]) as factory:
        adapter = factory()
        assert (adapter.sessions, adapter.retry, adapter.page_limit, adapter.timeout_s) == ("per_call", 2, 100, 0.5)
        assert adapter.bridge == "reference-per-call@0.1.0"
    assert _stopped(factory)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("crash", "ended without answering connect; it exited with status 3"),
        ("garbage", "wrote its answer to connect as a line that is not JSON: 'this is not JSON'"),
        ("silent", "gave no answer to connect within"),
        ("wrong-kind", "answered connect with kind 'tools', which is no answer to connect"),
    ],
)
def test_a_misbehaving_driver_is_an_error_of_the_adapter(mode: str, said: str) -> None:
    """A driver that dies, prints garbage, never answers or breaks the protocol is an adapter error, not a failure."""
    factory = DriverAdapter.factory(_fake(mode))
    [result] = run_contract(
        factory, properties=["P5"], eras=("handshake",), max_examples=1, via="socket", example_timeout_s=4
    )
    assert result.status == "error", result.counterexample
    assert result.counterexample is not None
    assert said in result.counterexample
    assert f"fake_driver.py {mode}" in result.counterexample
    assert f"fake driver in mode {mode} got connect" in result.counterexample, "its stderr is shown"
    assert _stopped(factory)


def test_a_driver_whose_watchdog_fired_is_a_hang_of_the_bridge() -> None:
    """A driver answering `hung` is the bridge hanging: a hung verdict naming the step, not an error."""
    factory = DriverAdapter.factory(_fake("hung"))
    [result] = run_contract(
        factory, properties=["P1"], eras=("handshake",), max_examples=1, via="socket", example_timeout_s=3
    )
    assert result.status == "hung"
    assert result.counterexample is not None
    assert "hung in connect after 3 s" in result.counterexample
    assert _stopped(factory)


def test_a_driver_of_another_protocol_version_is_refused() -> None:
    """A hello in another protocol version is refused, naming both versions."""
    with DriverAdapter.factory(_fake("old-version")) as factory, pytest.raises(DriverError) as raised:
        factory()
    assert "speaks driver protocol version 99; this mcp-testkit speaks 1" in str(raised.value)
    assert factory.name == factory.command, "a driver that cannot start is named by its command"


def test_a_command_that_cannot_start_is_an_error() -> None:
    """A driver command that does not exist is a DriverError naming it."""
    with DriverAdapter.factory(["/nonexistent/driver"]) as factory, pytest.raises(DriverError) as raised:
        factory()
    assert "driver '/nonexistent/driver' could not be started" in str(raised.value)


def test_a_driver_runs_over_the_socket_only() -> None:
    """The in-process transport cannot reach another process: the run is an error that says to use the socket."""
    with DriverAdapter.factory(REFERENCE) as factory:
        [result] = run_contract(factory, properties=["P1"], eras=("handshake",), max_examples=1)
    assert result.status == "error"
    assert "run the contract with via='socket'" in (result.counterexample or "")


def test_the_schema_is_valid_and_describes_the_protocol() -> None:
    """driver.schema.json is a valid 2020-12 schema whose parts accept real messages and refuse wrong ones."""
    Draft202012Validator.check_schema(driver_schema())
    hello = {
        "protocol": "mcp-testkit-driver",
        "version": 1,
        "bridge": "b",
        "bridge_version": "1",
        "page_limit": None,
        "retry": 0,
        "timeout_s": 1.5,
        "sessions": "per_call",
    }
    assert _problem("hello", hello) is None
    assert _problem("hello", {**hello, "sessions": "sometimes"}) is not None
    assert _problem("hello", {**hello, "bridge": "\x1b[2Jfake"}) is not None, "a name with control characters"
    assert _problem("hello", {**hello, "bridge": "langchain-mcp-adapters", "bridge_version": "0.3.2+ü"}) is None
    assert _problem("hello", {**hello, "retry": 101}) == "retry: 101 is greater than the maximum of 100"
    assert _problem("hello", {**hello, "timeout_s": 601}) == "timeout_s: 601 is greater than the maximum of 600"
    assert _problem("request", {"id": 1, "op": "call", "name": "t", "arguments": {}, "watchdog_s": 2}) is None
    assert _problem("request", {"id": 1, "op": "call", "name": "t", "watchdog_s": 2}) is not None
    assert _problem("answer", {"id": 1, "kind": "ok", "text": "x", "message": ""}) is None
    assert _problem("answer", {"id": 1, "kind": "tools", "tools": ["a", "a"]}) is None
    assert _problem("answer", {"id": 1, "kind": "hung", "message": "after 2 s"}) is None
    assert _problem("answer", {"id": 1, "kind": "maybe", "text": None, "message": ""}) is not None


def test_check_runs_a_driver(tmp_path: Path) -> None:
    """`mcp-testkit check --driver COMMAND` checks the driven bridge over the socket and names it by its hello."""
    report = tmp_path / "verdicts.json"
    command = " ".join(REFERENCE)
    done = subprocess.run(
        [*CHECK, "--driver", command, "--property", "P4", "--examples", "3", "--json", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"checking reference@0.1.0 (--driver {command}) in the handshake era (socket): P4; 1 hold, " in done.stdout
    verdicts = json.loads(report.read_text())["reference@0.1.0"]["properties"]
    assert verdicts["P4@handshake"]["status"] == verdicts["P4@stateless"]["status"] == "passed"


def test_check_refuses_a_driver_in_process() -> None:
    """`check --driver ... --transport asgi` exits 2 and says a driver runs over the socket only."""
    done = subprocess.run(
        [*CHECK, "--driver", "python x.py", "--transport", "asgi"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "a driver runs its bridge in another process" in done.stderr


def _ended(pid: int) -> bool:
    """Whether process `pid` has ended (gone, or a zombie that nobody reaped yet)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _ends_within(pid: int, limit_s: float) -> bool:
    """Whether process `pid` has ended or ends within `limit_s` (a SIGKILL is delivered, not awaited, by whoever
    sent it: on a loaded machine the process may still be on its way out when the adapter returns)."""
    if _ended(pid):
        return True
    try:
        handle = os.pidfd_open(pid)  # readable once the process has ended
    except ProcessLookupError:
        return True
    try:
        select.select([handle], [], [], limit_s)
    finally:
        os.close(handle)
    return _ended(pid)


def _ask_within(factory: DriverFactory, limit_s: float) -> DriverError:
    """Make an adapter and connect it under `fail_after(limit_s)`; the DriverError that ends it."""

    async def run() -> DriverError:
        with anyio.fail_after(limit_s):
            try:
                adapter = await anyio.to_thread.run_sync(factory, abandon_on_cancel=True)
                await adapter.connect("http://127.0.0.1:9/mcp", {})
            except DriverError as exc:
                return exc
        raise AssertionError("the driver was expected to fail")

    return anyio.run(run)


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        ("huge", "page_limit: 1000000000000000000 is greater than the maximum of 1000"),
        ("deep", "nested too deeply"),
        ("nan", "NaN is not JSON"),
    ],
)
def test_an_odd_hello_is_refused_at_once_naming_the_field(mode: str, said: str) -> None:
    """Item 4: a hello with 10**18 pages, nested 100,000 deep or holding NaN is a DriverError saying why, quickly,
    and the driver is stopped (no RecursionError traceback, no process left)."""
    with DriverAdapter.factory(_fake(mode)) as factory:
        error = _ask_within(factory, 5.0)
    assert said in str(error)
    assert "\n" not in str(error).split("; it")[0], "one line says what is wrong"
    assert _stopped(factory)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the driver's state in /proc")
@pytest.mark.parametrize("mode", ["mute", "silent"])
def test_a_wrapped_driver_that_never_answers_leaves_no_process(mode: str) -> None:
    """Item 4: a never-answering driver started through `bash -c` ends within its timeout, its child killed too."""
    wrapped = ["bash", "-c", f"{shlex.join(_fake(mode))}; true"]
    # 3 s to say hello: time for the wrapped Python to start and write its pid on a busy machine (a second was not).
    with DriverAdapter.factory(wrapped, start_timeout_s=3.0) as factory:
        error = _ask_within(factory, 10.0)
        assert "no hello line within 3 s" in str(error) or "gave no answer to connect" in str(error)
    found = re.search(r"fake driver in mode \w+ has pid (\d+)", str(error))
    assert found is not None, "the driver's stderr is shown"
    assert _ends_within(int(found[1]), 5.0), "the wrapper's child was killed with it"


def test_check_reports_an_odd_hello_as_an_adapter_error(tmp_path: Path) -> None:
    """`mcp-testkit check --driver` with a hello of 10**18 pages, or nested 100,000 deep, exits 3 naming the field
    or the nesting: an error of the adapter, no RecursionError, no memory blown on 10**18 pages."""
    for mode, said in (("huge", "page_limit: 1000000000000000000 is greater than the maximum of 1000"), ("deep", "")):
        done = subprocess.run(
            [*CHECK, "--driver", shlex.join(_fake(mode)), "--property", "P1", "--examples", "1", "-v"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 3, output
        assert "RecursionError" not in output
        assert (said or "the JSON is nested too deeply") in output
