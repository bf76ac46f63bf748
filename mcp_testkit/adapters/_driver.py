"""Bridges in other processes, virtualenvs or languages: `DriverAdapter` speaks the driver protocol
(`docs/driver.md`, `mcp_testkit/driver.schema.json`) with a driver command over its stdin and stdout.

A driver that dies, answers garbage, breaks the protocol or stops answering is an error of the
adapter (`DriverError`), never a verdict on the bridge; a driver whose own watchdog fired answers
`hung`, and that is the bridge hanging: the adapter then waits out the example's deadline so that
the contract reports the hang, naming the step.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import math
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar

from mcp_testkit._renamed import renamed_attribute, renamed_keywords
from mcp_testkit._wire.strict_json import JsonError, loads
from mcp_testkit._wire.terminal import printable
from mcp_testkit.adapters._outcome import Outcome, SessionMode

if TYPE_CHECKING:
    import httpx2
    from jsonschema.protocols import Validator

__all__ = ["PROTOCOL", "PROTOCOL_VERSION", "DriverAdapter", "DriverError", "DriverFactory", "driver_schema"]

PROTOCOL = "mcp-testkit-driver"
PROTOCOL_VERSION = 1
MAX_LINE = 4 * 1024 * 1024
"""The longest line a driver may write, in bytes."""
_OUTCOME_KINDS = ("ok", "tool_error", "auth_error", "outcome_unknown", "connection_error")
_ANSWERS = {
    "connect": _OUTCOME_KINDS,
    "call": _OUTCOME_KINDS,
    "list": ("tools",),
    "set_headers": ("done",),
    "close": ("done",),
}
"""The answer kinds each request may have, besides `hung` and `driver_error`."""
_WATCHDOG_MARGIN_S = 1.5
"""How long before the example's deadline a driver's watchdog fires, so that its `hung` arrives in time; at most
a quarter of the time left, so that a short deadline (a property's own bound on a wait, as P11's of 1.6 s for a
bridge whose timeout is 0.5 s) leaves the bridge its declared wait rather than a watchdog that fires first."""
_ANSWER_MARGIN_S = 0.5
"""How long before the example's deadline the adapter stops waiting for a driver that does not answer (a third
of the watchdog's margin, where that is shorter)."""
_STDERR_LINES = 20


class DriverError(Exception):
    """The driver itself failed: it died, wrote garbage, broke the protocol or stopped answering.

    Raised by the adapter, so the contract reports an error of the adapter: nothing is known about
    the bridge. The message names the driver command and ends with the last lines of its stderr.
    """


class BridgeReported(Exception):
    """What a bridge raised, as its driver described it (the `message` of an answer)."""


@lru_cache(maxsize=1)
def driver_schema() -> dict[str, Any]:
    """The JSON Schema of the driver protocol (`mcp_testkit/driver.schema.json`)."""
    text = Path(__file__).parent.parent.joinpath("driver.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@lru_cache(maxsize=3)
def _validator(part: str) -> Validator:
    from jsonschema import Draft202012Validator

    schema = driver_schema()
    return Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})


def _problem(part: str, value: Any) -> str | None:
    """Why `value` is not a valid `part` ("hello", "request" or "answer") of the protocol; None if it is."""
    errors = sorted(_validator(part).iter_errors(value), key=lambda e: len(list(e.absolute_path)))
    if not errors:
        return None
    best = min(errors, key=lambda e: len(e.context or ()))
    where = "/".join(str(p) for p in best.absolute_path) or "the line"
    return f"{where}: {best.message[:300]}"


class _Process:
    """One running driver: its stdin, a thread reading stdout lines, a thread keeping the tail of stderr.

    On POSIX the driver leads a process group of its own, and stopping it ends the whole group: a driver
    started through a wrapper (`bash -c '...'`) leaves no orphan holding its pipes.
    """

    def __init__(self, argv: Sequence[str], cwd: str | None, env: Mapping[str, str] | None) -> None:
        self.argv = list(argv)
        try:
            self.popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=None if env is None else {**os.environ, **env},
                start_new_session=os.name == "posix",
            )
        except OSError as exc:
            raise DriverError(f"driver {shlex.join(self.argv)!r} could not be started: {exc}") from None
        self.ids = itertools.count(1)
        self._stopped = False
        self._lines: collections.deque[bytes] = collections.deque()
        self._eof = False
        self._ready = threading.Condition()
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        assert self.popen.stdout is not None
        assert self.popen.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self.popen.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self.popen.stderr,), daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self, stream: IO[bytes]) -> None:
        while True:
            line = stream.readline(MAX_LINE + 1)
            with self._ready:
                if not line:
                    self._eof = True
                    self._ready.notify_all()
                    return
                self._lines.append(line)
                self._ready.notify_all()

    def _read_stderr(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._stderr.append(printable(line.decode("utf-8", "replace").rstrip()[:300]))

    def wait_line(self, timeout: float) -> bool:
        """Block until a line (or the end of stdout) is there, at most `timeout` s; consumes nothing."""
        with self._ready:
            return self._ready.wait_for(lambda: bool(self._lines) or self._eof, timeout)

    def pop_line(self) -> bytes | None:
        """The next line, or None at the end of stdout; only after `wait_line` said one is there."""
        with self._ready:
            return self._lines.popleft() if self._lines else None

    def send(self, message: Mapping[str, Any]) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            stdin.flush()
        except (OSError, ValueError) as exc:
            raise self.error(f"could not be sent {message.get('op')!r} ({type(exc).__name__})") from None

    def error(self, what: str) -> DriverError:
        """A `DriverError` naming the driver, `what` went wrong, how it ended and its stderr.

        A driver that broke the protocol is not used again: it is stopped first, so that its stderr is
        read to the end and its exit status is known.
        """
        self.stop(grace=1.0)
        status = self.popen.returncode
        ended = "; it was stopped" if status is not None and status < 0 else f"; it exited with status {status}"
        tail = "\n".join(f"    {line}" for line in self._stderr)
        stderr = f"\n  its stderr ended with:\n{tail}" if tail else " (its stderr was empty)"
        return DriverError(f"driver {shlex.join(self.argv)!r} {what}{ended}{stderr}")

    @property
    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 5.0) -> None:
        """End the driver: close its stdin (a driver exits at the end of its input), then kill it after `grace`;
        either way, what is left of its process group is killed."""
        if self._stopped:
            return
        self._stopped = True
        with contextlib.suppress(OSError, ValueError):
            if self.popen.stdin is not None:
                self.popen.stdin.close()
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self._kill()
            self.popen.wait()
        else:
            self._kill()
        for thread in self._threads:
            thread.join(grace)
        for stream in (self.popen.stdout, self.popen.stderr):
            if stream is not None:
                stream.close()


    def _kill(self) -> None:
        """Kill the driver and every process of its group (a wrapper's children too)."""
        if os.name != "posix":
            self.popen.kill()
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)


class DriverFactory:
    """Makes `DriverAdapter`s for one driver command, and owns the driver processes they use.

    A driver process serves one adapter at a time and many in turn (each example of the contract
    connects and closes a fresh adapter): a process is started when no healthy one is idle, and
    stopped by `close()`, which the contract calls when its run ends. Use it as a context manager
    to stop them yourself. `name` is the bridge and version the driver's hello declares.
    """

    start_timeout = renamed_attribute("start_timeout", "start_timeout_s")
    close_timeout = renamed_attribute("close_timeout", "close_timeout_s")

    @renamed_keywords(start_timeout="start_timeout_s", close_timeout="close_timeout_s")
    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        start_timeout_s: float = 60.0,
        close_timeout_s: float = 10.0,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
        if not argv:
            raise ValueError("a driver command is needed, e.g. 'python drivers/langchain/drive.py'")
        self.argv = argv
        self.command = shlex.join(argv)
        self.cwd = None if cwd is None else os.fspath(cwd)
        self.env = dict(env) if env is not None else None
        self.start_timeout_s = start_timeout_s
        self.close_timeout_s = close_timeout_s
        self._hello: dict[str, Any] | None = None
        self._failure: DriverError | None = None
        self._idle: list[_Process] = []
        self._started: list[_Process] = []
        self._lock = threading.Lock()

    @property
    def hello(self) -> dict[str, Any]:
        """The driver's hello line (started once to read it); `DriverError` if the driver cannot say it."""
        if self._hello is None:
            self._give_back(self._start())
        assert self._hello is not None
        return self._hello

    @property
    def name(self) -> str:
        """`bridge@version` from the hello, or the command when the driver could not start (its error waits)."""
        try:
            hello = self.hello
        except DriverError:
            return self.command
        return f"{hello['bridge']}@{hello['bridge_version']}"

    def __call__(self, *, transport: httpx2.AsyncBaseTransport | None = None) -> DriverAdapter:
        if transport is not None:
            raise DriverError(
                f"driver {self.command!r} runs its bridge in another process, which reaches the server over a "
                "socket only: run the contract with via='socket' (mcp-testkit check --transport socket)"
            )
        return DriverAdapter(self)

    def _start(self) -> _Process:
        """A new driver process whose hello was read and checked (blocking: at most `start_timeout_s` s)."""
        if self._failure is not None:
            raise self._failure
        process = _Process(self.argv, self.cwd, self.env)
        with self._lock:
            self._started.append(process)
        try:
            hello = self._read_hello(process)
        except DriverError as exc:
            process.stop(grace=1.0)
            if self._hello is None:
                self._failure = exc  # a driver that cannot start once is not started again for every example
            raise
        if self._hello is None:
            self._hello = hello
        elif (hello["bridge"], hello["bridge_version"]) != (self._hello["bridge"], self._hello["bridge_version"]):
            process.stop(grace=1.0)
            raise process.error(f"changed its hello from {self._hello} to {hello}")
        return process

    def _read_hello(self, process: _Process) -> dict[str, Any]:
        if not process.wait_line(self.start_timeout_s):
            raise process.error(f"wrote no hello line within {self.start_timeout_s:g} s")
        line = process.pop_line()
        if line is None:
            raise process.error("ended before its hello line")
        hello = _decode(process, line, "its hello")
        if isinstance(hello, dict) and hello.get("protocol") == PROTOCOL and hello.get("version") != PROTOCOL_VERSION:
            raise process.error(
                f"speaks driver protocol version {hello.get('version')!r}; this mcp-testkit speaks {PROTOCOL_VERSION}"
            )
        problem = _problem("hello", hello)
        if problem is not None:
            raise process.error(f"wrote a hello that is not one of driver protocol {PROTOCOL_VERSION} ({problem})")
        result: dict[str, Any] = hello
        return result

    async def _take(self) -> _Process:
        import anyio.to_thread

        while self._idle:
            process = self._idle.pop()
            if process.alive:
                return process
            process.stop(grace=0)
        return await anyio.to_thread.run_sync(self._start)

    def _give_back(self, process: _Process) -> None:
        if process.alive:
            self._idle.append(process)
        else:
            process.stop(grace=0)

    def close(self) -> None:
        """Stop every driver process this factory started; it may start new ones afterwards."""
        with self._lock:
            started = list(self._started)
        self._idle.clear()
        for process in started:
            process.stop()

    def __enter__(self) -> DriverFactory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DriverFactory({self.command!r})"


class DriverAdapter:
    """A bridge run by a driver process, behind the adapter interface; made by `DriverAdapter.factory(command)`.

    The bridge's facts (`page_limit`, `retry`, `timeout_s`, `sessions`, and where declared `connect_timeout_s`,
    `progress_timeout_s` and `max_result_bytes`) are those of the driver's hello.
    Every request carries a `watchdog_s` that ends before the example's deadline: a driver whose bridge
    does not finish in it answers `hung`; a driver that does not answer at all is a `DriverError`.
    """

    name: ClassVar[str] = "driver"
    cannot: ClassVar[frozenset[str]] = frozenset({"abandon_calls", "overlap_calls"})
    """The driver protocol carries one request at a time and has no way to abandon one: the contract can neither
    overlap a driver's calls (P13) nor abandon one (P10)."""

    def __init__(self, factory: DriverFactory) -> None:
        hello = factory.hello
        self._factory = factory
        self.bridge = f"{hello['bridge']}@{hello['bridge_version']}"
        self.page_limit: int | None = hello["page_limit"]
        self.retry: int = hello["retry"]
        self.timeout_s: float | None = hello["timeout_s"]
        self.sessions: SessionMode = hello["sessions"]
        # Optional in the hello (P11, P12): absent is not declared.
        self.connect_timeout_s: float | None = hello.get("connect_timeout_s")
        self.progress_timeout_s: float | None = hello.get("progress_timeout_s")
        self.max_result_bytes: int | None = hello.get("max_result_bytes")
        self._process: _Process | None = None
        self._headers: dict[str, str] | None = None

    @classmethod
    def factory(cls, command: str | Sequence[str], **options: Any) -> DriverFactory:
        """A factory for `run_contract` (over the socket) that runs `command` as the driver; see `DriverFactory`."""
        return DriverFactory(command, **options)

    def _budget(self, within: float | None) -> tuple[float, float]:
        """The watchdog to send and how long to wait for the answer, from `within` or the example's deadline."""
        import anyio

        if within is None:
            remaining = anyio.current_effective_deadline() - anyio.current_time()
            if math.isinf(remaining):
                return 30.0, 35.0
            within = remaining
        margin = min(_WATCHDOG_MARGIN_S, within / 4)
        watchdog = max(within - margin, 0.1)
        return watchdog, max(within - min(_ANSWER_MARGIN_S, margin / 3), watchdog + 0.1)

    async def _ask(self, op: str, within: float | None = None, **fields: Any) -> dict[str, Any]:
        if self._process is None:
            self._process = await self._factory._take()
        process = self._process
        if self._headers is not None and op not in ("set_headers", "close"):
            headers, self._headers = self._headers, None
            await self._ask("set_headers", within, headers=headers)
        request_id = next(process.ids)
        request: dict[str, Any] = {"id": request_id, "op": op, **fields}
        watchdog, wait = self._budget(within)
        if op != "set_headers":
            request["watchdog_s"] = round(watchdog, 3)
        process.send(request)
        try:
            answer = await self._answer(process, request_id, op, wait, watchdog)
        except DriverError:
            self._drop()
            raise
        if answer["kind"] == "driver_error":
            error = process.error(f"reported its own failure during {op}: {answer['message']}")
            self._drop()
            raise error
        return answer

    async def _answer(
        self, process: _Process, request_id: int, op: str, wait: float, watchdog: float
    ) -> dict[str, Any]:
        import anyio
        import anyio.to_thread

        deadline = anyio.current_time() + wait
        while True:
            remaining = deadline - anyio.current_time()
            if remaining <= 0 or not await anyio.to_thread.run_sync(
                process.wait_line, remaining, abandon_on_cancel=True
            ):
                raise process.error(f"gave no answer to {op} within {wait:.1f} s (its watchdog: {watchdog:.1f} s)")
            line = process.pop_line()
            if line is None:
                raise process.error(f"ended without answering {op}")
            answer = _decode(process, line, f"its answer to {op}")
            problem = _problem("answer", answer)
            if problem is not None:
                raise process.error(f"answered {op} with a line that is not a driver protocol answer ({problem})")
            if answer["id"] < request_id:
                continue  # the answer to a request whose wait was cancelled
            if answer["id"] != request_id:
                raise process.error(f"answered request {answer['id']}, but {request_id} ({op}) was the last sent")
            if answer["kind"] not in (*_ANSWERS[op], "hung", "driver_error"):
                raise process.error(f"answered {op} with kind {answer['kind']!r}, which is no answer to {op}")
            result: dict[str, Any] = answer
            return result

    async def _bridge_hung(self, op: str, message: str) -> None:
        """The driver's watchdog fired: the bridge hangs. Wait for the example's deadline, which names the step."""
        import anyio

        if math.isinf(anyio.current_effective_deadline()):
            raise DriverError(f"the bridge of driver {self._factory.command!r} hung in {op}: {message}")
        self.waiting_on_bridge = True  # the wait is the bridge's, not the adapter's (the contract's hang report)
        await anyio.sleep_forever()

    async def _outcome(self, op: str, **fields: Any) -> Outcome:
        answer = await self._ask(op, **fields)
        if answer["kind"] == "hung":
            await self._bridge_hung(op, answer["message"])
        return Outcome(answer["kind"], answer["text"], BridgeReported(answer["message"]))

    def _drop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.stop(grace=1.0)

    async def connect(self, url: str, headers: Mapping[str, str]) -> Outcome:
        self._headers = None
        return await self._outcome("connect", url=url, headers=dict(headers))

    async def list_tools(self) -> list[str]:
        answer = await self._ask("list")
        if answer["kind"] == "hung":
            await self._bridge_hung("list", answer["message"])
        return list(answer["tools"])

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> Outcome:
        return await self._outcome("call", name=tool, arguments=dict(arguments))

    def set_headers(self, headers: Mapping[str, str]) -> None:
        """Kept, and sent as `set_headers` before the next request: the protocol has no request without an answer."""
        self._headers = {**(self._headers or {}), **headers}

    async def close(self) -> None:
        """Close the bridge; a driver that answers in time is kept for the next adapter, any other is stopped."""
        import anyio
        import anyio.to_thread

        if self._process is None:
            return
        with anyio.CancelScope(shield=True):
            answer = await self._ask("close", within=self._factory.close_timeout_s)
            process, self._process = self._process, None
            if process is None:
                return
            if answer["kind"] == "done":
                self._factory._give_back(process)
            else:
                await anyio.to_thread.run_sync(process.stop, 1.0)


def _decode(process: _Process, line: bytes, what: str) -> Any:
    if len(line) > MAX_LINE or not line.endswith(b"\n"):
        raise process.error(f"wrote {what} on a line longer than {MAX_LINE} bytes or without its newline")
    try:
        return loads(line, what="line")
    except JsonError as exc:
        shown = line[:120].decode("utf-8", "replace").rstrip()
        raise process.error(f"wrote {what} as a line that is not JSON: {shown!r} ({exc})") from None
