"""Replay: a `TestMcpServer` that serves a recorded server's info, capabilities and catalogue, answers
each `tools/call` with the recorded answer it matches, and resources, prompts and completion as recorded
(`_offerings`).

The replay is a `TestMcpServer` like any other, so faults, required headers, the journal, the
ledger and the contract work on it unchanged; `reset()` brings the recording back. A call that
matches no recorded one is answered `isError` and fails `check()` with the nearest recorded calls.
Given an upstream (the pytest record modes), such a call is sent to the live server instead and
the answer is added to the cassette.

The server is assembled here from its seams: `_script` reads what a cassette replays, `_matching`
picks the recorded call that answers a call, `_answers` renders it for the client's era, and
`_forwarding` sends what the cassette lacks on to the live server.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp_testkit._wire.eras import spoken_versions
from mcp_testkit.cassettes._answers import answer_of, replay_events
from mcp_testkit.cassettes._format import Cassette, CassetteError
from mcp_testkit.cassettes._inputs import ask_recorded
from mcp_testkit.cassettes._matching import MATCH_MODES, CallIndex, Matcher, Matching, UnmatchedCall, check_match
from mcp_testkit.cassettes._offerings import RecordedOfferings
from mcp_testkit.cassettes._script import ReplayScript, is_request
from mcp_testkit.server import Recording, TestMcpServer
from mcp_testkit.tools import ScriptedTool, ToolContext

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mcp_testkit.cassettes._forwarding import Forwarding

__all__ = ["MATCH_MODES", "CassetteServer", "Matcher", "ReplayScript", "UnmatchedCall", "replay"]

_RECORDED: Any = object()


class CassetteServer(TestMcpServer):
    """A `TestMcpServer` replaying a cassette; made by `TestMcpServer.from_cassette`.

    `cassette` is what it replays, `script` what was derived from it, `notes` where the recording
    could not be replayed as is (methods a replay does not serve, another era's fields...).
    """

    __test__ = False

    def __init__(
        self,
        cassette: Cassette,
        *,
        match: str | Matcher = "exact",
        forward: Forwarding | None = None,
        **settings: Any,
    ) -> None:
        self.cassette = cassette
        self.script = ReplayScript.from_cassette(cassette)
        self._match = check_match(match)
        self._index = CallIndex(self.script.calls)
        self._forwarding = forward
        info = self.script.server_info
        settings.setdefault("name", str(info.get("name") or "replay"))
        settings.setdefault("version", str(info.get("version") or "0"))
        if settings.get("page_size", _RECORDED) is _RECORDED:
            settings["page_size"] = self.script.page_size
        if "response_mode" not in settings:
            noisy = {call.tool for call in self.script.calls if any(not is_request(e) for e in call.events)}
            framing = dict(self.script.framing)
            if forward is not None:
                framing["tools/call"] = "sse"  # a call sent on to the live server may send notifications first
            settings["response_mode"] = _mode_of(framing, noisy)
        settings.setdefault("get_stream", self.script.get_stream)
        settings.setdefault("eras", self.script.eras)
        for key, value in self.script.cache.items():
            settings.setdefault(key, value)
        super().__init__(replaying=_Replayed(self), **settings)

    @property
    def notes(self) -> list[str]:
        return list(self.script.notes)

    def _answerer(self, tool: str, matching: Matching) -> Callable[..., Any]:
        async def answer(arguments: dict[str, Any], context: ToolContext) -> Any:
            try:
                call = matching.match(tool, arguments)
            except UnmatchedCall:
                if self._forwarding is None:
                    raise
                call = await self._forwarding.call(tool, arguments, context)
            if call.inputs:
                try:
                    await ask_recorded(call, context, self.cassette.source)
                except BaseException:
                    matching.give_back(call)  # a round that ends asking runs again on its retry
                    raise
            await replay_events(call, context)
            return answer_of(call, context.era)

        return answer

    def unmatched(self) -> list[UnmatchedCall]:
        """The calls no recorded call matched, oldest first."""
        return [error for error in self.errors if isinstance(error, UnmatchedCall)]

    def check(self, *, unused_faults: bool = False) -> None:
        """As `TestMcpServer.check`, and first: fail listing every call that matched no recorded one."""
        misses = self.unmatched()
        if misses:
            where = f"server {self.name!r} (cassette {self.cassette.source})"
            lines = [f"{where}: {len(misses)} call(s) matched no recorded call:"]
            lines.extend(f"  {miss}" for miss in misses)
            raise AssertionError("\n".join(lines))
        super().check(unused_faults=unused_faults)

    def save(self) -> Cassette | None:
        """Write what a recording replay added (the pytest record modes); None when nothing new was recorded."""
        return self._forwarding.save() if self._forwarding is not None else None

    def close_upstream(self) -> None:
        """End the live session a recording replay holds, if any."""
        if self._forwarding is not None:
            self._forwarding.close()


class _Replayed(Recording):
    """What a `CassetteServer` serves from its cassette, made again for every fresh state: the recorded answers of
    `initialize` and `server/discover`, what it offered besides tools, and its tools, matched afresh."""

    def __init__(self, replay: CassetteServer) -> None:
        self._replay = replay

    def initialize_result(self) -> dict[str, Any] | None:
        return self._replay.script.initialize_result()

    def discover_result(self, eras: Sequence[str]) -> dict[str, Any] | None:
        return self._replay.script.discover_result(spoken_versions(eras))

    def offerings(self) -> RecordedOfferings:
        return RecordedOfferings(self._replay.cassette)

    def tools(self) -> list[ScriptedTool]:
        replay = self._replay
        matching = Matching(replay._index, replay._match, replay.cassette.source)
        return [
            ScriptedTool(name=d["name"], definition=d, answers=[replay._answerer(d["name"], matching)])
            for d in replay.script.tools
        ]


def _mode_of(framing: Mapping[str, str], noisy: set[str]) -> Any:
    """The replay's `response_mode`: each method framed as recorded, and SSE for a call of a tool that sent
    notifications while recording, so that they reach the client during the call as they did."""
    counts = Counter(framing.values())
    default = counts.most_common(1)[0][0] if counts else "json"
    if len(counts) <= 1 and (not noisy or default == "sse"):
        return default
    table = dict(framing)

    def by_request(record: Any) -> str:
        if record.rpc_method == "tools/call" and record.tool in noisy:
            return "sse"
        return table.get(record.rpc_method, default)

    return by_request


def replay(cassette: str | Path | Cassette, *, match: str | Matcher = "exact", **settings: Any) -> CassetteServer:
    """A `TestMcpServer` replaying `cassette` (a path or a loaded `Cassette`); see `TestMcpServer.from_cassette`."""
    loaded = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
    if not loaded.exchanges:
        raise CassetteError(f"cassette {loaded.source}: holds no exchange, so there is nothing to replay")
    return CassetteServer(loaded, match=match, **settings)
