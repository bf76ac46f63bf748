"""A command server: the bridge starts it, speaks newline-delimited JSON-RPC on its stdin and stdout,
and stops its whole process group, reaped, when done with it or when it misses ``read_timeout_s``."""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
from anyio.streams.buffered import BufferedByteReceiveStream

from mcp_testkit._wire.eras import HANDSHAKE
from mcp_testkit.bridge._handshake import initialize_params, initialized
from mcp_testkit.bridge._input import answer_request
from mcp_testkit.bridge._rpc import CANCEL_REASON, BadReply, ConnectionLost, RpcSession, WireError

if TYPE_CHECKING:
    import mcp_types
    from anyio.abc import Process

__all__ = ["MAX_LINE", "CommandFailed", "StdioSession", "stop_process"]

logger = logging.getLogger("mcp_testkit.bridge")

MAX_LINE = 4 * 1024 * 1024
"""The longest line a command server may write (4 MiB, as long as the fake server reads)."""
EOF_GRACE_S = 2.0
"""How long a server gets to exit by itself once its stdin is closed."""
TERM_GRACE_S = 1.0
"""How long its process group gets between SIGTERM and SIGKILL."""


class CommandFailed(WireError):
    """The command could not be started at all (not found, not executable): nothing was sent."""


def _exited(process: Process) -> str:
    code = process.returncode
    if code is None:
        return "closed its stdout"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _signal_group(process: Process, sig: int) -> None:
    """Send ``sig`` to the process group the server leads (it was started in a session of its own)."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def stop_process(process: Process, *, grace_s: float = EOF_GRACE_S) -> None:
    """Stop a server and everything it started: stdin closed, ``grace_s`` to exit, then SIGTERM and SIGKILL
    to its process group; always reaped, so no zombie is left. Shielded: it finishes even when cancelled."""
    with anyio.CancelScope(shield=True):
        if process.stdin is not None:
            try:
                await process.stdin.aclose()
            except (anyio.BrokenResourceError, OSError):
                pass
        for sig, wait_s in ((None, grace_s), (signal.SIGTERM, TERM_GRACE_S), (signal.SIGKILL, None)):
            if process.returncode is not None:
                break
            if sig is not None:
                _signal_group(process, sig)
            if wait_s is None:
                await process.wait()
            else:
                with anyio.move_on_after(wait_s):
                    await process.wait()
        # The leader is reaped; whatever it started and left behind in its group goes too.
        _signal_group(process, signal.SIGKILL)
        await process.aclose()


class StdioSession(RpcSession):
    """One run of a command server: started by ``initialize``, answers bounded by ``read_timeout_s``.

    ``read_timeout_s`` bounds the whole answer to each request (the server's notifications and pings
    meanwhile do not extend it); a server that misses it is stopped, process group and all, and the
    request fails with ``ConnectionLost`` naming the request. The environment is ``env`` when given
    (replacing this process's), else inherited.
    """

    era = HANDSHAKE

    def __init__(self, command: str, args: Sequence[str], env: Mapping[str, str] | None, read_timeout_s: float) -> None:
        super().__init__()
        self._argv = [command, *args]
        self._env = dict(env) if env is not None else None
        self._read_timeout_s = read_timeout_s
        self._process: Process | None = None
        self._lines: BufferedByteReceiveStream | None = None
        self._stopped = False
        self.protocol_version: str | None = None

    @property
    def usable(self) -> bool:
        """False once stopped, or once the server exited by itself."""
        return not self._stopped and (self._process is None or self._process.returncode is None)

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs (None before the start)."""
        return self._process.pid if self._process is not None else None

    async def initialize(self) -> mcp_types.InitializeResult:
        """Start the command, then run the handshake: ``initialize``, then ``notifications/initialized``."""
        try:
            self._process = await anyio.open_process(self._argv, env=self._env, start_new_session=True, stderr=None)
        except OSError as exc:
            self._stopped = True
            reason = exc.strerror or type(exc).__name__
            raise CommandFailed(f"could not be started ({self._argv[0]!r}: {reason})", sent=False) from None
        assert self._process.stdout is not None
        self._lines = BufferedByteReceiveStream(self._process.stdout)
        result = initialized(await self._request("initialize", initialize_params(self.capabilities)))
        self.protocol_version = result.protocol_version
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notifications/initialized")
        return result

    async def close(self, credentials: Mapping[str, str] | None = None) -> None:
        """Stop the server: its stdin closed, then its process group signalled if it lingers; reaped."""
        await self._stop(grace_s=EOF_GRACE_S)

    async def _stop(self, *, grace_s: float) -> None:
        self._stopped = True
        process, self._process = self._process, None
        if process is not None:
            await stop_process(process, grace_s=grace_s)

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        # A pipe has no headers: what they would mirror is in the body already.
        if self._stopped or self._process is None:
            raise ConnectionLost(f"is stopped, so {method} was not sent", sent=False)
        request_id, request = self._new_request(method, params)
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self._read_timeout_s) as scope:
                await self._send(request, method)
                while True:
                    item = await self._receive(method)
                    if isinstance(item, dict) and "method" in item and "id" in item:
                        await self._answer_server(item)
                        continue
                    answer = self._answer_in(item, request_id)  # a late answer to an abandoned request: skipped
                    if answer is not None:
                        return answer
        except anyio.get_cancelled_exc_class():
            await self._abandoned(request_id, method)
            raise
        assert scope.cancelled_caught
        logger.warning(
            "command server %r did not answer %s within read_timeout_s=%ss; stopping it",
            self._argv[0],
            method,
            self._read_timeout_s,
        )
        await self._stop(grace_s=0)
        raise ConnectionLost(
            f"did not answer {method} within read_timeout_s={self._read_timeout_s}s, so it was stopped", sent=True
        )

    async def _cancelled(self, request_id: int, method: str) -> None:
        """On stdio (both eras): ``notifications/cancelled`` naming the request, while the server runs."""
        if self.usable and self._process is not None:
            params = {"requestId": request_id, "reason": CANCEL_REASON}
            await self._send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}, method)

    async def _send(self, message: dict[str, Any], method: str) -> None:
        assert self._process is not None
        assert self._process.stdin is not None
        line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        try:
            await self._process.stdin.send(line)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stop(grace_s=0)
            raise ConnectionLost(f"had exited, so {method} could not be sent", sent=False) from None
        except BaseException:
            # Cancelled part-way: the stream may hold half a line, so this run of the server is done.
            self._stopped = True
            raise

    async def _receive(self, method: str) -> object:
        """The next message the server writes; blank lines are skipped."""
        assert self._lines is not None
        assert self._process is not None
        process = self._process
        while True:
            try:
                line = await self._lines.receive_until(b"\n", MAX_LINE)
            except (anyio.IncompleteRead, anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await self._stop(grace_s=EOF_GRACE_S)
                raise ConnectionLost(f"{_exited(process)} before answering {method}", sent=True) from None
            except anyio.DelimiterNotFound:
                await self._stop(grace_s=0)
                raise BadReply(f"wrote a line longer than {MAX_LINE} bytes while {method} waited", sent=True) from None
            if line.strip():
                break
        try:
            return json.loads(line)
        except ValueError:
            raise BadReply(f"wrote a line that is not JSON while {method} waited", sent=True) from None

    async def _answer_server(self, request: dict[str, Any]) -> None:
        """Answer a request of the server's own: ``ping`` with ``{}``, an input request through the input handler,
        anything else as not found."""
        self._asked.clear()  # `_answer_in` does not see it here: answered at once
        answer = await answer_request(self.ask_input, self.calling, request)
        await self._send(answer, "an answer to the server's request")
