"""Links to a live MCP server, over Streamable HTTP or a stdio process, that record every exchange on a tape.

They are blocking and thread-safe, so one link serves callers on any event loop (a replay server's
thread, a test's loop, the CLI) through `anyio.to_thread`: the link owns its HTTP client or its
process, and closing it never depends on a loop that may be gone. `UpstreamSession`
(`upstream/_session.py`) speaks MCP on a link.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.cassettes._format import Exchange, Tape, era_of, split_messages, version_of
from mcp_testkit.cassettes._redact import kept_headers
from mcp_testkit.upstream._stderr import StderrTail

__all__ = [
    "HttpUpstream", "OnEvent", "StdioUpstream", "Upstream", "UpstreamError", "describe_upstream", "from_env",
    "headers_from", "open_upstream",
]  # fmt: skip

ACCEPT = "application/json, text/event-stream"
_GROUPS = hasattr(os, "killpg")
"""Whether a stdio server runs in a process group of its own (POSIX), which closing it ends whole."""
_GROUP_GRACE_S = 1.0
TIMEOUT_S = 30.0
OnEvent = Callable[[Any], None]


class UpstreamError(Exception):
    """The live server could not be reached or did not answer as MCP says; the message names it. A stdio server's
    error keeps the last lines it wrote on stderr in `stderr` (empty for others)."""

    def __init__(self, message: str, *, stderr: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.stderr = list(stderr)


class Upstream(Protocol):
    """A blocking link to a live server that records each exchange on `tape`."""

    transport: str
    tape: Tape
    protocol_version: str | None

    def send(
        self, message: Any, *, headers: Mapping[str, str] | None = None, on_event: OnEvent | None = None
    ) -> Exchange:
        """Send one JSON-RPC message; the recorded exchange (its `error` says what failed, if anything)."""
        ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


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


def describe_upstream(url: str | None = None, command: Sequence[str] | None = None) -> str:
    """How messages name an upstream: its URL without user info or query, or its command line."""
    if command is not None:
        return shlex.join(command)
    parts = urlsplit(url or "")
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def headers_from(lines: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`--header "Name: value"` lines as a dict; a value `env:VAR` is read from the environment.

    ValueError naming the header (never its value) when a line is not `Name: value` or a variable is unset.
    """
    environ = os.environ if environ is None else environ
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or " " in name:
            raise ValueError(f"--header {name[:40]!r}: give it as 'Name: value' (or 'Name: env:VAR')")
        headers[name] = from_env(value, f"--header {name}", environ)
    return headers


def from_env(value: str, what: str, environ: Mapping[str, str] | None = None) -> str:
    """`value`, or for `env:VAR` the variable's value; ValueError naming `what` and the variable when it is unset."""
    if not value.startswith("env:"):
        return value
    environ = os.environ if environ is None else environ
    variable = value[4:]
    if variable not in environ:
        raise ValueError(f"{what}: the environment variable {variable} is not set")
    return environ[variable]


def open_upstream(
    upstream: str | Sequence[str], *, headers: Mapping[str, str] | None = None, tape: Tape | None = None
) -> Upstream:
    """An `HttpUpstream` for an http(s) URL, a `StdioUpstream` for a command (a list, or a command line)."""
    if isinstance(upstream, str) and upstream.startswith(("http://", "https://")):
        return HttpUpstream(upstream, headers, tape=tape)
    command = shlex.split(upstream) if isinstance(upstream, str) else list(upstream)
    if not command:
        raise ValueError("the upstream command is empty")
    return StdioUpstream(command, tape=tape)


def _is_request(message: Any) -> bool:
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def _decode(data: str) -> Any:
    """An upstream's message, decoded as strictly as the server decodes one (no NaN, bounded nesting); what is not
    JSON of the wire is kept as `{"unparsed": text}`, so that the cassette written stays strict JSON."""
    try:
        return strict_loads(data.encode("utf-8", "surrogatepass"), "answer")
    except JsonError:
        return {"unparsed": data}


class HttpUpstream:
    """A Streamable HTTP server at `url`: POSTs messages, keeps the session id and protocol version."""

    transport = "http"

    def __init__(
        self, url: str, headers: Mapping[str, str] | None = None, *, tape: Tape | None = None,
        timeout: float = TIMEOUT_S,
    ) -> None:  # fmt: skip
        import httpx2

        self.url = url
        self.headers = dict(headers or {})
        self.tape = tape if tape is not None else Tape()
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._client = httpx2.Client(timeout=timeout, follow_redirects=False)

    def describe(self) -> str:
        return describe_upstream(self.url)

    def _headers(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        sent = {"accept": ACCEPT, "content-type": "application/json", **self.headers}
        if self.session_id is not None:
            sent["mcp-session-id"] = self.session_id
        if self.protocol_version is not None:
            sent["mcp-protocol-version"] = self.protocol_version
        sent.update({name.lower(): value for name, value in (extra or {}).items()})
        return sent

    def send(
        self, message: Any, *, headers: Mapping[str, str] | None = None, on_event: OnEvent | None = None
    ) -> Exchange:
        return self._exchange("POST", message, self._headers(headers), on_event)

    def _exchange(self, method: str, message: Any, sent: dict[str, str], on_event: OnEvent | None) -> Exchange:
        import httpx2

        from mcp_testkit._wire.sse import SseDecoder, SseEventTooLarge

        seq, at = self.tape.start()
        status: int | None = None
        received: list[tuple[str, str]] = []
        framing, body, error = "empty", None, None
        messages: list[Any] = []
        wanted = message.get("id") if _is_request(message) else None
        content = json.dumps(message).encode() if message is not None else None
        try:
            with self._client.stream(method, self.url, content=content, headers=sent) as response:
                status = response.status_code
                received = list(response.headers.multi_items())
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    framing = "sse"
                    decoder = SseDecoder()
                    for chunk in response.iter_raw():
                        for event in decoder.feed(chunk):
                            if not event.data:
                                continue  # a priming event
                            decoded = _decode(event.data)
                            messages.append(decoded)
                            answered = isinstance(decoded, dict) and "method" not in decoded
                            if answered and decoded.get("id") == wanted:
                                break
                            if on_event is not None:
                                on_event(decoded)
                        else:
                            continue
                        break
                else:
                    raw = response.read()
                    if raw:
                        try:
                            messages.append(strict_loads(raw, "answer"))
                            framing = "json"
                        except JsonError:
                            framing, body = "text", raw.decode("utf-8", errors="replace")
        except (httpx2.HTTPError, SseEventTooLarge) as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        answer, events = split_messages(message, messages) if framing == "sse" else (None, [])
        if framing == "json":
            answer = messages[0]
        version = version_of(message, sent.get("mcp-protocol-version"), answer)
        exchange = Exchange(
            seq=seq,
            at_ms=at,
            elapsed_ms=self.tape.elapsed_ms(at),
            transport="http",
            era=era_of(version),
            protocol_version=version,
            request=message,
            response=answer,
            session=sent.get("mcp-session-id") or dict(received).get("mcp-session-id"),
            http=_http(method, status, framing, sent, received),
            events=events,
            body=body,
            error=error,
        )
        self.tape.add(exchange)
        if isinstance(message, dict) and message.get("method") == "initialize" and exchange.result is not None:
            self.session_id = dict(received).get("mcp-session-id")
            self.protocol_version = version
        return exchange

    def close(self) -> None:
        """End the session (DELETE, recorded) and close the client."""
        try:
            if self.session_id is not None:
                self._exchange("DELETE", None, self._headers(None), None)
        finally:
            self.session_id = None
            self._client.close()


def _http(method: str, status: int | None, framing: str, sent: Mapping[str, str], received: Any) -> Any:
    from mcp_testkit.cassettes._format import HttpInfo

    return HttpInfo(method, status, framing, kept_headers(sent.items()), kept_headers(received, response=True))


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
    one waiting), or, when none waits, to an exchange of its own.
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
    ) -> None:
        self.command = list(command)
        self.tape = tape if tape is not None else Tape()
        self.protocol_version: str | None = None
        self.timeout_s = timeout_s
        self.exit_status: int | None = None
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

    # -- reading ------------------------------------------------------------------------------------

    def _read(self) -> None:
        stdout: IO[bytes] = self._process.stdout  # type: ignore[assignment]
        for line in stdout:
            if line.strip():
                self._route(line.decode("utf-8", errors="replace").strip())
        code = self.exit_status = self._process.wait()  # set before any waiting request hears of the end
        self.stderr.join(1.0)
        said = f": {last}" if (last := self.stderr.last()) else ""
        with self._lock:
            self._ended = f"the server process ended (exit status {code}) before answering{said}"
            waiting = list(self._waiting)
        for one in waiting:
            one.inbox.put(("ended", self._ended))

    def _route(self, line: str) -> None:
        message = _decode(line)
        with self._lock:
            if isinstance(message, dict) and "method" not in message and "id" in message:
                target = next((w for w in self._waiting if w.request_id == message["id"]), None)
                kind = "answer"
            else:
                kind = "event"
                params = message.get("params") if isinstance(message, dict) else None
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
        if _is_request(message):
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
