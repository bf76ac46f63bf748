"""The link to a stdio server: a process of its own (in a process group that closing it ends whole), one message a
line each way, answers matched to the requests that wait for them, and every exchange recorded on the link's tape."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.upstream._exchange import Exchange, era_of, version_of
from mcp_testkit.upstream._link import TIMEOUT_S, OnEvent, UpstreamError, describe_upstream, is_request
from mcp_testkit.upstream._options import MAX_UPSTREAM_BODY
from mcp_testkit.upstream._stderr import StderrTail
from mcp_testkit.upstream._tape import Tape

__all__ = ["StdioUpstream", "check_startable"]

_GROUPS = hasattr(os, "killpg")
"""Whether a stdio server runs in a process group of its own (POSIX), which closing it ends whole."""
_GROUP_GRACE_S = 1.0
STRAY_LINES = 20
"""How many of the lines a stdio server wrote on stdout that are not JSON-RPC are kept (`StdioUpstream.stray`)."""
STRAY_CHARS = 200
"""How much of each such line is kept."""


def check_startable(command: Sequence[str]) -> None:
    """UpstreamError unless the command's program is an executable file or a command on PATH: said at start,
    before a proxy serves anything, rather than to the first client."""
    if not command or not command[0]:
        raise UpstreamError("the upstream command is empty")
    if shutil.which(command[0]) is None:
        raise UpstreamError(
            f"upstream {describe_upstream(command=command)}: cannot start it: {command[0]!r} is neither an "
            "executable file nor a command on PATH"
        )


def _is_message(value: Any) -> bool:
    """Whether a line's JSON is one JSON-RPC message: an object with a string `method` (a request or notification),
    or with an `id` and no `method` (an answer). Anything else a stdio server writes is a stray line."""
    if not isinstance(value, dict):
        return False
    method = value.get("method")
    return isinstance(method, str) if "method" in value else "id" in value


@dataclass(eq=False)
class _Waiting:
    """A request written to a stdio server, waiting for its answer; events routed to it meanwhile."""

    request_id: Any
    progress_token: Any
    inbox: queue.Queue[tuple[str, Any]] = field(default_factory=queue.Queue)


class StdioUpstream:
    """A stdio server process: one message a line each way, answers matched to requests by id.

    A reader thread routes what the server writes: an answer to the request that waits for it; a
    notification or server request to the call it belongs to (by progress token, else the latest
    one waiting), or, when none waits, to an exchange of its own. A line that is not JSON-RPC is never
    a message: it is kept in `stray` (the last `STRAY_LINES`), counted in `strays`, and recorded as an
    exchange of its own (`{"unparsed": line}`), so that the cassette stays strict JSON.
    """

    transport = "stdio"

    def __init__(
        self,
        command: Sequence[str],
        *,
        tape: Tape | None = None,
        timeout_s: float = TIMEOUT_S,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_line: int = MAX_UPSTREAM_BODY,
    ) -> None:
        """`max_line` bounds one line the server writes on stdout: a longer one ends the process (see `over_limit`)."""
        self.command = list(command)
        self.max_line = max_line
        self.over_limit: str | None = None
        """Why the link ended the process, when it wrote a line over `max_line` bytes (every request waiting, and
        every later one, is told so); None otherwise."""
        self.tape = tape if tape is not None else Tape()
        self.protocol_version: str | None = None
        self.timeout_s = timeout_s
        self.exit_status: int | None = None
        self.stray: deque[str] = deque(maxlen=STRAY_LINES)
        """The last lines the server wrote on stdout that are not JSON-RPC (each cut to `STRAY_CHARS`)."""
        self.strays = 0
        """How many such lines it wrote in all."""
        try:
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                # A group of its own, so that closing ends what it started too (npx's node, a shell's child).
                start_new_session=_GROUPS,
            )
        except OSError as exc:
            raise UpstreamError(f"upstream {self.describe()}: cannot start it: {exc.strerror or exc}") from None
        self.session = f"process-{self._process.pid}"
        self.stderr = StderrTail(self._process.stderr, name=f"mcp-testkit-stderr-{self.session}")  # type: ignore[arg-type]
        self._write_lock = threading.Lock()
        self._lock = threading.Lock()
        self._waiting: list[_Waiting] = []
        self._ended: str | None = None
        self._reader = threading.Thread(target=self._read, name=f"mcp-testkit-stdio-{self._process.pid}", daemon=True)
        self._reader.start()

    def describe(self) -> str:
        return describe_upstream(command=self.command)

    @property
    def exited(self) -> str | None:
        """How the server process ended ("exited with status 4", "was ended by signal 9"), once it has; else None.

        Asked of the process too, not only of the reader's end of its stdout: a child it left may hold that open
        long after it exited, and a request written to a process that is gone must not wait for that."""
        code = self.exit_status
        if code is None:
            code = self._process.poll()
        if code is None:
            return None
        return f"was ended by signal {-code}" if code < 0 else f"exited with status {code}"

    # -- reading ------------------------------------------------------------------------------------

    def _read(self) -> None:
        stdout: IO[bytes] = self._process.stdout  # type: ignore[assignment]
        limit = self.max_line
        while line := stdout.readline(limit + 1):  # never more than a line's bound held, whatever the server writes
            if len(line) > limit and not line.endswith(b"\n"):
                self._too_long()
                break
            if line.strip():
                self._route(line.decode("utf-8", errors="replace").strip())
        code = self.exit_status = self._process.wait()  # set before any waiting request hears of the end
        self.stderr.join(1.0)
        said = f": {last}" if (last := self.stderr.last()) else ""
        with self._lock:
            self._ended = self.over_limit or f"the server process ended (exit status {code}) before answering{said}"
            waiting = list(self._waiting)
        for one in waiting:
            one.inbox.put(("ended", self._ended))

    def _too_long(self) -> None:
        """A line past `max_line`: the process (its group) is killed, as a connection past a bound is closed; a
        request still waiting is answered that it wrote too long a line, not with the line's first part."""
        self.over_limit = (
            f"the server process wrote a stdout line over {self.max_line:,} bytes (max_upstream_body); it was ended"
        )
        self._signal(signal.SIGKILL)

    def _route(self, line: str) -> None:
        try:
            message = strict_loads(line.encode("utf-8", "surrogatepass"), "answer")
        except JsonError:
            self._stray(line)
            return
        if not _is_message(message):  # JSON, but no JSON-RPC message: `5`, `"text"`, `[]`, `{"level": "info"}`
            self._stray(line)
            return
        with self._lock:
            if "method" not in message:
                target = next((w for w in self._waiting if w.request_id == message["id"]), None)
                kind = "answer"
            else:
                kind = "event"
                params = message.get("params")
                token = params.get("progressToken") if isinstance(params, dict) else None
                target = next((w for w in self._waiting if token is not None and w.progress_token == token), None)
                if target is None and self._waiting:
                    target = self._waiting[-1]
        if target is not None:
            target.inbox.put((kind, message))
            return
        # Nobody waits for it: a message of the server's own, kept as an exchange without a request.
        seq, at = self.tape.start()
        self.tape.add(
            Exchange(seq, at, 0.0, "stdio", era_of(self.protocol_version), self.protocol_version, None,
                     session=self.session, events=[message])
        )  # fmt: skip

    def _stray(self, line: str) -> None:
        """Keep a line that is not JSON-RPC: counted, its start kept, and recorded as an exchange of its own."""
        with self._lock:
            self.strays += 1
            self.stray.append(line[:STRAY_CHARS])
        seq, at = self.tape.start()
        self.tape.add(
            Exchange(seq, at, 0.0, "stdio", era_of(self.protocol_version), self.protocol_version, None,
                     session=self.session, events=[{"unparsed": line}])
        )  # fmt: skip

    # -- writing ------------------------------------------------------------------------------------

    def _write(self, message: Any) -> str | None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        stdin: IO[bytes] = self._process.stdin  # type: ignore[assignment]
        try:
            with self._write_lock:
                stdin.write(data)
                stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            return self._ended or "the server process closed its stdin"
        return None

    def send(
        self, message: Any, *, headers: Mapping[str, str] | None = None, on_event: OnEvent | None = None
    ) -> Exchange:
        seq, at = self.tape.start()
        waiting = None
        if is_request(message):
            meta = message.get("params", {}).get("_meta") if isinstance(message.get("params"), dict) else None
            token = meta.get("progressToken") if isinstance(meta, dict) else None
            waiting = _Waiting(message["id"], token)
            with self._lock:
                self._waiting.append(waiting)
        answer, events, error = None, [], self._write(message)
        if waiting is not None:
            deadline = time.monotonic() + self.timeout_s
            try:
                while error is None:
                    try:
                        kind, item = waiting.inbox.get(timeout=max(0.0, deadline - time.monotonic()))
                    except queue.Empty:
                        error = f"no answer within {self.timeout_s:g} s"
                        break
                    if kind == "answer":
                        answer = item
                        break
                    if kind == "ended":
                        error = item
                        break
                    events.append(item)
                    if on_event is not None:
                        on_event(item)
            finally:
                with self._lock:
                    self._waiting.remove(waiting)
        version = version_of(message, self.protocol_version, answer)
        exchange = Exchange(
            seq, at, self.tape.elapsed_ms(at), "stdio", era_of(version), version, message, answer,
            session=self.session, events=events, error=error,
        )  # fmt: skip
        self.tape.add(exchange)
        if isinstance(message, dict) and message.get("method") == "initialize" and exchange.result is not None:
            self.protocol_version = version
        return exchange

    def _signal(self, number: int) -> None:
        """Send `number` to the server's process group (to the process alone where there are no groups)."""
        try:
            if _GROUPS:
                os.killpg(self._process.pid, number)
            elif number == signal.SIGTERM:
                self._process.terminate()
            else:
                self._process.kill()
        except ProcessLookupError:
            pass

    def _end_group(self) -> None:
        """End what the server started and left behind holding its stdout: terminated, then killed if the pipe is
        still held after `_GROUP_GRACE_S`. No wait when the server took its children with it."""
        if not _GROUPS:
            return
        try:
            os.killpg(self._process.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            return
        self._reader.join(_GROUP_GRACE_S)  # it ends when nothing holds the server's stdout any more
        if self._reader.is_alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)

    def close(self) -> None:
        """Close the server's stdin and wait for it to exit (its process group terminated, then killed, if it does
        not); then end whatever it started that is still running."""
        process = self._process
        if process.stdin is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
        for stop in (None, signal.SIGTERM, signal.SIGKILL):
            if stop is not None:
                self._signal(stop)
            try:
                process.wait(5.0)
                break
            except subprocess.TimeoutExpired:
                continue
        self._end_group()
        self._reader.join(5.0)
        if process.stdout is not None:
            process.stdout.close()
        self.stderr.close()
