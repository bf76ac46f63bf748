"""What tools asked the client for, and what they got: the journal's log of input requests in both eras.

An `InputExchange` is one input request (elicitation, sampling, roots) and its answer, if one came: in the
handshake era a server-to-client request on the call's stream and the client's response; in 2026-07-28 an
entry of an `InputRequiredResult` and the `inputResponses` entry of the retry that answered it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "InputExchange", "InputLog"]

KINDS = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}
"""The kind of an input request by its method, as `assert_input` names it."""

_UNSET: Any = object()


@dataclass
class InputExchange:
    """One input request of a tool (or prompt) and the client's answer."""

    seq: int
    """The journal sequence number of the request that asked (2026-07-28: the round that returned it)."""
    name: str
    """The tool (or prompt) that asked."""
    method: str
    """The input request's method: `elicitation/create`, `sampling/createMessage` or `roots/list`."""
    key: str
    """Its key (2026-07-28 `inputRequests` key; in the handshake era the same key the tool gave or got)."""
    params: dict[str, Any]
    era: str
    answer: Any = None
    """The client's answer as it sent it (an `ElicitResult`, `CreateMessageResult`, `ListRootsResult`), once it came."""
    answered_seq: int | None = None
    """The journal sequence number of the message that carried the answer."""
    error: str | None = None
    """Why the answer was refused or never came (a schema mismatch, the client's error, a timeout)."""

    @property
    def kind(self) -> str:
        """`elicit`, `sample` or `roots`."""
        return KINDS.get(self.method, self.method)

    @property
    def answered(self) -> bool:
        return self.answered_seq is not None and self.error is None


class InputLog(list[InputExchange]):
    """Every input exchange of a server, in the order the requests were made."""

    def asked(self, name: str | None = None, *, kind: str | None = None) -> list[InputExchange]:
        """The exchanges of a tool (or any), of a kind (`elicit`, `sample`, `roots`) or any."""
        return [e for e in list(self) if (name is None or e.name == name) and (kind is None or e.kind == kind)]

    def latest(self, name: str, method: str, key: str) -> InputExchange | None:
        """The last exchange of this request still waiting for its answer (2026-07-28: asked in an earlier round)."""
        for exchange in reversed(list(self)):
            if exchange.name == name and exchange.method == method and exchange.key == key:
                return exchange if exchange.answered_seq is None else None
        return None

    def assert_input(
        self, name: str, *, kind: str | None = None, answer: Any = _UNSET, times: int | None = None
    ) -> list[InputExchange]:
        """Assert the tool `name` asked the client for input (of `kind`) and got `answer` (the answer as the client
        sent it); `times` counts the answered exchanges. Returns the answered exchanges that matched."""
        asked = self.asked(name, kind=kind)
        what = f"{name!r} asked for {kind or 'input'}"
        if not asked:
            raise AssertionError(f"expected {what}, but it never asked (asked: {self._summary()})")
        got = [e for e in asked if e.answered and (answer is _UNSET or e.answer == answer)]
        if answer is not _UNSET and not got:
            answers = [e.answer if e.answered else f"<{e.error or 'no answer'}>" for e in asked]
            raise AssertionError(f"expected {what} and got {answer!r}; it got: {answers}")
        if not got:
            errors = [e.error or "no answer yet" for e in asked]
            raise AssertionError(f"expected {what} and an answer, but none came: {errors}")
        if times is not None and len(got) != times:
            raise AssertionError(f"expected {what} answered {times} time(s), got {len(got)}")
        return got

    def _summary(self) -> str:
        return ", ".join(f"{e.name}:{e.kind}" for e in list(self)) or "nothing"
