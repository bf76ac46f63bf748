"""The life of an app served on a socket by a `Runner`: `start()` and `stop()`, `with` and `async with`.

`TestMcpServer` and `ChaosProxy` live the same way and differ only in the runner they build and in what they close
around its stop, which they say in three hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from types import TracebackType

    from typing_extensions import Self

    from mcp_testkit._wire.runner import Runner

__all__ = ["RunnerLifecycle"]


class RunnerLifecycle:
    """Start and stop serving, as a context manager too; `async with` serves from a thread, or (`in_loop_task`) as
    a task of the running asyncio loop.

    A subclass builds its runner in `_new_runner` (refusing when started), names it in `_runner_name`, and may
    close what serving holds before the runner stops (`_closing`) and what outlives it (`_closed`, run even after
    a failed start).
    """

    in_loop_task: ClassVar[bool] = False
    """Whether `async with` under asyncio serves as a task of the running loop rather than from a thread."""
    _runner: Runner | None = None
    _in_task = False

    def _new_runner(self) -> Runner:
        raise NotImplementedError

    def _runner_name(self) -> str:
        raise NotImplementedError

    def _closing(self, *, started: bool) -> None:
        """Close what serving holds, before the runner stops (`started`: whether it was serving)."""

    def _closed(self) -> None:
        """Release what outlives the runner, once it stopped."""

    @property
    def started(self) -> bool:
        """Whether it serves on a socket now."""
        return self._runner is not None

    def start(self) -> None:
        """Serve from a background thread; returns once it accepts connections."""
        runner = self._new_runner()
        runner.start_thread(self._runner_name())
        self._runner = runner

    def stop(self) -> None:
        """Stop serving and release what serving held; nothing happens to a server that never started."""
        runner, self._runner = self._runner, None
        self._in_task = False
        try:
            self._closing(started=runner is not None)
            if runner is not None:
                runner.stop()
        finally:
            self._closed()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        import anyio.to_thread
        import sniffio

        if not self.in_loop_task or sniffio.current_async_library() != "asyncio":
            await anyio.to_thread.run_sync(self.start)
            return self
        runner = self._new_runner()
        await runner.start_task(self._runner_name())
        self._runner, self._in_task = runner, True
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        import anyio
        import anyio.to_thread

        runner = self._runner
        if runner is None or not self._in_task:
            with anyio.CancelScope(shield=True):  # a cancelled test still stops its server
                await anyio.to_thread.run_sync(self.stop)
            return
        self._runner, self._in_task = None, False
        try:
            self._closing(started=True)
            await runner.stop_task()
        finally:
            self._closed()
