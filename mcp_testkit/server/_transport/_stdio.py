"""The same dispatcher over stdin/stdout: newline-delimited JSON-RPC, as local `command:` servers speak.

One message per line in, one per line out; stdout carries protocol messages alone (logs go to
stderr). `initialize` opens the one session. Each message gets one journal record. Lines are
read in linear time and bounded by the server's `max_body`: a longer line is answered -32600
("line too long") and skipped. No input stops the server; a crash of its own is answered -32603. The faults
that mean something here: `ErrorResult`, `ProtocolError`, `Delay`, the listing faults,
`TruncateBody` (half a line), `MalformedLine`, `Exit` and `Crash`, the waits and sizes, and the byte faults
but `ResetPeer` and `SlowClose` (`_effects.supports_stdio` says which).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel

from mcp_testkit._wire.strict_json import JsonError, loads
from mcp_testkit.journal import Headers, Record
from mcp_testkit.server._dispatch._input import answer_arrived
from mcp_testkit.server._dispatch._messages import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    describe,
    error_response,
    kind_of,
)
from mcp_testkit.server._dispatch._paging import LISTINGS, page_number, request_target
from mcp_testkit.server._dispatch._protocol import CANCELLED, DEFAULT_VERSION, Call, dispatch, handle_notification
from mcp_testkit.server._effects import effect_of
from mcp_testkit.server._eras._handshake import ERA
from mcp_testkit.server._eras._referee import arrived, left
from mcp_testkit.server._transport._http import JOURNAL_PREFIX, ServerCrash

if TYPE_CHECKING:
    from collections.abc import Callable

    from anyio.abc import TaskGroup

    from mcp_testkit.server._effects import Effect
    from mcp_testkit.server._state import ServerState
    from mcp_testkit.server._state._sessions import Session

__all__ = ["StdioServer", "serve_stdio"]


def _lines(stdin: BinaryIO, limit: int) -> Iterator[tuple[bytes, int]]:
    """The lines of `stdin` as (line, length): the whole line, or only its first bytes when longer than `limit`.

    Linear in the input: each chunk is searched once, and a line's pieces are joined once. It
    reads the file descriptor, not the buffered file, where there is one: that leaves no lock
    held by a thread blocked on input (Python aborts at exit when a daemon thread holds the lock
    of sys.stdin's buffer).
    """
    try:
        fd = stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    pieces: list[bytes] = []
    length = kept = 0
    while chunk := (os.read(fd, 65536) if fd is not None else stdin.readline(65536)):
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end == -1 else chunk[start:end]
            length += len(piece)
            # Past the limit only the journal's prefix is kept, so a line costs at most `limit` bytes.
            keep = piece if length <= limit else piece[: max(JOURNAL_PREFIX - kept, 0)]
            if keep:
                pieces.append(keep)
                kept += len(keep)
            if end == -1:
                break
            yield _joined(pieces, length, limit)
            pieces, length, kept = [], 0, 0
            start = end + 1
    if length:
        yield _joined(pieces, length, limit)


def _joined(pieces: list[bytes], length: int, limit: int) -> tuple[bytes, int]:
    line = b"".join(pieces)
    return (line if length <= limit else line[:JOURNAL_PREFIX]), length


def _line(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class StdioServer:
    """Serves a server's state on a pair of byte streams until input ends, a signal, or an `Exit` fault.

    `state` gives the server's current state (a `reset()` swaps in a fresh one), as `McpApp` is given it: the
    transport sees the state only, never the `TestMcpServer` above it.
    """

    def __init__(self, state: Callable[[], ServerState], stdout: BinaryIO) -> None:
        self._state = state
        self._out = stdout
        self._session: Session | None = None
        self._group: TaskGroup | None = None
        self.exit_code = 0
        self.reading = True
        """False once a `StopReading` fault stopped the server reading its input."""

    async def serve(self, stdin: BinaryIO) -> int:
        """Read and answer messages until `stdin` ends (in-flight calls are then cancelled); the exit status."""
        send, receive = anyio.create_memory_object_stream[tuple[bytes, int]](64)
        token = anyio.lowlevel.current_token()
        limit = self._state().max_body

        def pump() -> None:
            try:
                for line in _lines(stdin, limit):
                    anyio.from_thread.run(send.send, line, token=token)
            except Exception:  # the loop is gone (we are exiting) or stdin broke: either way, input ended
                pass
            finally:
                try:
                    anyio.from_thread.run_sync(send.close, token=token)
                except Exception:  # the loop is gone already
                    pass

        # A daemon thread, not a worker thread: a read blocked on stdin must not hold up the exit.
        threading.Thread(target=pump, name="mcp-testkit-stdin", daemon=True).start()
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._until_signal)
            async with receive:
                async for raw, length in receive:
                    if not self.reading:
                        await anyio.sleep_forever()  # until a signal: the lines wait unread (a StopReading)
                    if raw.strip() or length > limit:
                        self._receive_guarded(raw, length)
            group.cancel_scope.cancel()
        return self.exit_code

    async def _until_signal(self) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                assert self._group is not None
                self._group.cancel_scope.cancel()
                return

    def _write(self, message: Any) -> None:
        self._write_raw(_line(message))

    def _write_raw(self, data: bytes) -> None:
        # One write and a flush with no await in between: lines of concurrent calls never interleave.
        self._out.write(data)
        self._out.flush()

    async def _notify(self, message: dict[str, Any]) -> None:
        self._write(message)

    # -- one message --------------------------------------------------------------------------------------------

    def _receive_guarded(self, raw: bytes, length: int) -> None:
        """Take one line; a crash of ours is answered -32603 and journaled, and the server reads on."""
        state = self._state()
        journal = state.journal
        record = Record(
            seq=journal.writer.next_seq(),
            at=time.time(),
            http_method="STDIO",
            path="stdio",
            headers=Headers({}),
            body=raw.rstrip(b"\r"),
        )
        session = self._session
        record.session_id = session.id if session is not None else None
        record.protocol_version = session.protocol_version if session is not None else None
        journal.writer.begin(record, numbered=True)
        try:
            self._receive(record, length)
        except Exception as exc:
            self._crashed(record, exc, None)

    def _crashed(self, record: Record, exc: Exception, request_id: Any) -> None:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        crash = ServerCrash(f"mcp-testkit failed on message #{record.seq} ({record.summary()}): {detail}")
        crash.__cause__ = exc
        self._state().errors.append(crash)
        text = f"Internal error: mcp-testkit failed on this message ({detail})"
        self._refuse(record, request_id, INTERNAL_ERROR, text)

    def _receive(self, record: Record, length: int) -> None:
        state = self._state()
        journal = state.journal
        session = self._session
        limit = state.max_body
        if length > limit:
            text = f"Invalid Request: line too long ({length} bytes, over max_body {limit}); skipped"
            note = f"{text}; the journal keeps its first {len(record.body)} bytes (cut)"
            self._refuse(record, None, INVALID_REQUEST, text, note)
            return
        try:
            message = loads(record.body, "line")
        except JsonError as exc:
            self._refuse(record, None, PARSE_ERROR, f"Parse error: {exc}")
            return
        record.message = message
        kind = kind_of(message)
        if kind is None:
            request_id = message.get("id") if isinstance(message, dict) else None
            what = "a batch; batches are not used over stdio" if isinstance(message, list) else "a JSON-RPC 2.0 message"
            self._refuse(record, request_id, INVALID_REQUEST, f"Invalid Request: the line is not {what}")
            return
        describe(record, message)
        if kind == "response":
            record.error = answer_arrived(session, message, record)  # an answer to a tool's input request
            journal.writer.finish(record)
            return
        effect = None
        if state.plan:
            params = record.params or {}
            page = page_number(params.get("cursor")) if record.rpc_method in LISTINGS else None
            target = request_target(record.rpc_method, params, record.tool)
            fault = state.plan.take(record.rpc_method, target, page, record.session_id)
            record.fault = fault
            effect = effect_of(fault)
        if kind == "notification":
            if effect is not None and effect.notification_line(_LineTurn(self), record):
                return
            record.error = handle_notification(message, session)
            journal.writer.finish(record)
            return
        if session is not None:
            session.requests += 1
        assert self._group is not None
        self._group.start_soon(self._request, message, record, effect)

    def _refuse(self, record: Record, request_id: Any, code: int, text: str, note: str | None = None) -> None:
        """Answer with a JSON-RPC error; the journal gets `note` as the record's error, else `text`."""
        record.error = note or text
        record.response = error_response(request_id, code, text)
        self._write(record.response)
        self._state().journal.writer.finish(record)

    async def _request(self, message: dict[str, Any], record: Record, effect: Effect[Any] | None) -> None:
        state = self._state()
        turn = _LineTurn(self) if effect is not None else None
        finished = False
        try:
            if effect is not None and turn is not None and await effect.before_line(turn, record):
                return
            try:
                response = await self._answer(message, record, effect)
            except Exception as exc:  # a crash of ours: answered, journaled, and check() reports it
                finished = True
                self._crashed(record, exc, record.rpc_id)
                return
            if effect is not None:
                await effect.after()
            if response is CANCELLED:
                record.error = "cancelled by the client: nothing sent"
                return
            if effect is not None and turn is not None:
                line = _line(response)
                if await effect.stream_line(turn, record, response, line) or effect.send_line(
                    turn, record, response, line
                ):
                    return
            record.response = response
            self._write(response)
        finally:
            if not finished and (turn is None or not turn.finished):
                state.journal.writer.finish(record)

    async def _answer(self, message: dict[str, Any], record: Record, effect: Effect[Any] | None) -> Any:
        state = self._state()
        method = record.rpc_method
        if method == "server/discover":
            # The stateless 2026-07-28 probe: refusing it sends SDK clients back to initialize.
            return error_response(record.rpc_id, METHOD_NOT_FOUND, "Method not found: server/discover")
        if method == "initialize":
            response = await dispatch(message, Call(state, record, None, DEFAULT_VERSION, ERA, self._notify, effect))
            result = response.get("result") if isinstance(response, dict) else None
            if result is not None:
                self._open_session(result["protocolVersion"], record)
            return response
        session = self._session
        if session is None and method != "ping":
            record.error = "request before initialize"
            return error_response(record.rpc_id, INVALID_REQUEST, f"Invalid Request: send initialize before {method}")
        version = session.protocol_version if session is not None else DEFAULT_VERSION
        call = Call(state, record, session, version, ERA, self._notify, effect, to_client=self._notify)
        answered: Any = arrived(state, message, record, session)  # a refusal, under referee="refuse"
        try:
            if answered is None:
                answered = await dispatch(message, call)
        finally:
            left(state, record, session, answered)
        return answered

    def _open_session(self, version: str, record: Record) -> None:
        """`initialize` opens the one session; a second one replaces the first."""
        sessions = self._state().sessions
        if self._session is not None:
            sessions.end(self._session.id)
        client_info = (record.params or {}).get("clientInfo")
        self._session = sessions.open(version, client_info if isinstance(client_info, dict) else None)
        self._session.client_capabilities = record.client_capabilities or {}
        record.session_id = self._session.id
        record.protocol_version = version

    def _exit(self, record: Record, code: int) -> None:
        """End the process with status `code` (an `Exit` fault), the journal line of this message written first."""
        exited = f"the server exited with status {code} by a fault"
        # A fault that wrote part of the answer first (a LimitData) keeps its note of what it wrote.
        record.error = f"{record.error}; {exited}" if record.error else f"{exited}, without answering"
        self._state().journal.writer.finish(record)
        name = type(record.fault).__name__ if record.fault is not None else "Exit"
        print(f"mcp-testkit: exiting with status {code} ({name} fault)", file=sys.stderr, flush=True)
        self.exit_code = code
        assert self._group is not None
        self._group.cancel_scope.cancel()

    def _crash(self, record: Record) -> None:
        """Die at once by SIGKILL (a `Crash` fault), the journal line of this message written first."""
        record.error = "the server crashed (SIGKILL) by a fault, without answering"
        self._state().journal.writer.finish(record)
        print("mcp-testkit: crashing (Crash fault): SIGKILL", file=sys.stderr, flush=True)
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))


class _LineTurn:
    """What a fault may do to one stdio message (`_effects.LineTurn`); `finished` once its record was."""

    __slots__ = ("finished", "server")

    def __init__(self, server: StdioServer) -> None:
        self.server = server
        self.finished = False

    def write_line(self, record: Record, data: bytes, note: str) -> None:
        record.error = note
        self.server._write_raw(data)

    async def notify(self, message: Any) -> None:
        await self.server._notify(message)

    def stop_reading(self, record: Record) -> None:
        self.server.reading = False

    def exit(self, record: Record, code: int) -> None:
        self.finished = True
        self.server._exit(record, code)

    def crash(self, record: Record) -> None:
        self.finished = True
        self.server._crash(record)


async def serve_stdio(state: Callable[[], ServerState], stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve the server whose current state `state` gives over newline-delimited JSON-RPC on `stdin`/`stdout`;
    returns the exit status. (`mcp_testkit.server.serve_stdio` takes the `TestMcpServer` itself.)"""
    return await StdioServer(state, stdout).serve(stdin)
