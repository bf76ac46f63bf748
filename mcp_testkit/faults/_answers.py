"""The faults of the answer (`faults.ErrorResult`, `ProtocolError`, `Delay`, `LateAnswer`, `HttpStatus`, `Accepted`,
`WrongContentType`): what the server answers in place of the request's own answer, or when.

`mcp_testkit.faults` re-exports them and is the module to import; what they do lives in `server/_effects/_answers.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from mcp_testkit.faults._base import Fault, _positive

__all__ = ["Accepted", "Delay", "ErrorResult", "HttpStatus", "LateAnswer", "ProtocolError", "WrongContentType"]


@dataclass(frozen=True)
class ErrorResult(Fault):
    """Answer the call with an `isError` result carrying `text`; the tool's handler does not run. Any other request
    it hits (`method="resources/read"`...) has no `isError`: it is answered a JSON-RPC error -32603 with `text`."""

    text: str = "scripted tool error"
    default_method: ClassVar[str] = "tools/call"


@dataclass(frozen=True)
class ProtocolError(Fault):
    """Answer with a JSON-RPC error (`code`, `message`, `data`); nothing runs."""

    code: int = -32603
    message: str = "Internal error"
    data: Any = None
    default_method: ClassVar[str] = "tools/call"

    def __post_init__(self) -> None:
        if not isinstance(self.code, int) or isinstance(self.code, bool):
            raise ValueError(f"ProtocolError code must be an int, not {self.code!r}")


@dataclass(frozen=True)
class Delay(Fault):
    """Wait `seconds`, then answer normally (longer than the client waits: a timeout)."""

    seconds: float = 1.0

    def __post_init__(self) -> None:
        _positive(self.seconds, "Delay seconds")


@dataclass(frozen=True)
class LateAnswer(Fault):
    """Run the request, then wait `seconds` before answering: the call ran, its answer comes late.

    Unlike `Delay`, which waits before the handler runs, the ledger counts the run at once, so an
    answer later than the client waits is a timeout of a call that did run.
    """

    seconds: float = 1.0

    def __post_init__(self) -> None:
        _positive(self.seconds, "LateAnswer seconds")


_BYTES = "$bytes"
"""The key that marks an `HttpStatus` body of raw bytes in JSON."""


@dataclass(frozen=True)
class HttpStatus(Fault):
    """Answer with this HTTP status, body and headers instead of running the request."""

    status: int = 500
    body: Any = None
    """None: no body; a str or bytes: sent as is; anything else: sent as JSON.

    In JSON, bytes are written `{"$bytes": "<base64>"}` (and read back as bytes), so they survive exactly.
    """
    headers: Any = None
    """Extra response headers, a mapping (kept as a tuple of pairs so the fault stays hashable)."""

    def __post_init__(self) -> None:
        if not isinstance(self.status, int) or not 100 <= self.status <= 599:
            raise ValueError(f"HttpStatus status must be an HTTP status between 100 and 599, not {self.status!r}")
        if isinstance(self.body, Mapping) and set(self.body) == {_BYTES}:
            import base64
            import binascii

            try:
                object.__setattr__(self, "body", base64.b64decode(self.body[_BYTES], validate=True))
            except (binascii.Error, TypeError, ValueError):
                raise ValueError(f"HttpStatus body {{{_BYTES!r}: ...}} must hold base64 text") from None
        if self.headers is not None:
            pairs = self.headers.items() if isinstance(self.headers, Mapping) else self.headers
            object.__setattr__(self, "headers", tuple((str(k), str(v)) for k, v in pairs))

    def body_bytes(self) -> tuple[bytes, bytes | None]:
        """The body to send and its content type."""
        import json

        if self.body is None:
            return b"", None
        if isinstance(self.body, bytes):
            return self.body, None
        if isinstance(self.body, str):
            return self.body.encode(), b"text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), b"application/json"

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        if isinstance(self.body, bytes):
            import base64

            data["body"] = {_BYTES: base64.b64encode(self.body).decode("ascii")}
        return data


@dataclass(frozen=True)
class Accepted(Fault):
    """Answer a request with 202 Accepted and no body, as if it were a notification; nothing runs."""

    transient: ClassVar[bool] = False


@dataclass(frozen=True)
class WrongContentType(Fault):
    """Run the request, then send the answer labelled with this Content-Type."""

    content_type: str = "text/html"
