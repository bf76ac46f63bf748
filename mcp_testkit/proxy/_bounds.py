"""The proxy's bounds on what comes from an HTTP upstream, beyond those its HTTP client holds while parsing (head,
header lines, a JSON body): an SSE answer passed on in whole events, each at most so many bytes, and the words a
client gets when an answer passes a bound."""

from __future__ import annotations

__all__ = ["EventTooLarge", "WholeEvents", "over_limit"]

_OPTIONS = {
    "max_upstream_head": "--max-upstream-head",
    "max_upstream_headers": "--max-upstream-headers",
    "max_upstream_body": "--max-upstream-body",
}


def over_limit(url: str, why: str) -> str:
    """What the client's 502 says of an answer that passed a bound: the upstream, the bound, and how to raise it."""
    option = next((name for name in _OPTIONS if f"({name})" in why), None)
    raising = f"; raise it with ChaosProxy({option}=...) or {_OPTIONS[option]}" if option is not None else ""
    return f"chaos proxy: upstream {url} answered over a limit: {why}; its connection is closed{raising}"


class WholeEvents:
    """An SSE body cut at the ends of its events (a blank line), so that what is passed on is whole events and the
    event still arriving is held, at most `limit` bytes of it: `feed` raises `EventTooLarge` past that.

    A blank line is two line breaks in a row, whichever of CRLF, LF or CR each is: every one holds `\\n\\n`, `\\r\\r`
    or `\\n\\r`, and each of these is one, so three searches in C find the last end in a piece."""

    __slots__ = ("_held", "_last", "_size", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: list[bytes] = []
        self._size = 0
        self._last = b""
        """The last byte held: an end may span two pieces."""

    def feed(self, piece: bytes) -> bytes:
        """The whole events `piece` completes (b"" when none); `EventTooLarge` when the event held passes `limit`."""
        if not piece:
            return b""
        cut = max(piece.rfind(b"\n\n"), piece.rfind(b"\r\r"), piece.rfind(b"\n\r"))
        if cut >= 0:
            cut += 2
        elif self._last + piece[:1] in (b"\n\n", b"\r\r", b"\n\r"):
            cut = 1
        if cut < 0:
            self._held.append(piece)
            self._size += len(piece)
            self._last = piece[-1:]
            if self._size > self.limit:
                raise EventTooLarge(self.limit)
            return b""
        rest = piece[cut:]
        if self._held:
            whole = b"".join([*self._held, piece[:cut]])
        else:
            whole = piece if not rest else piece[:cut]
        self._held, self._size, self._last = ([rest], len(rest), rest[-1:]) if rest else ([], 0, b"")
        if self._size > self.limit:
            raise EventTooLarge(self.limit)
        return whole

    def rest(self) -> bytes:
        """What is held at the end of the body: an event the upstream never ended (passed on as it came)."""
        held, self._held, self._size, self._last = self._held, [], 0, b""
        return b"".join(held)


class EventTooLarge(ValueError):
    """An SSE event of the upstream's passed the proxy's bound before it ended."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"an SSE event passed {limit:,} bytes without ending (max_upstream_body)")
