"""Errors the bridge raises; each message names the server and never a credential or response body."""

from __future__ import annotations

__all__ = [
    "MCPAuthError",
    "MCPBridgeError",
    "MCPCallOutcomeUnknown",
    "MCPConnectionError",
    "MCPInputRequired",
    "MCPResultTooLarge",
    "MCPResultWithheld",
    "MCPToolError",
]


class MCPBridgeError(Exception):
    """Base of every error the bridge raises, carrying the name of the server it concerns."""

    def __init__(self, server: str, message: str) -> None:
        super().__init__(f"server {server!r}: {message}")
        self.server = server


class MCPConnectionError(MCPBridgeError):
    """A server could not be connected, listed or reached; a call that raises it did not run."""


class MCPAuthError(MCPBridgeError):
    """A server refused the credentials (401 or 403), or a credential variable is not set."""

    def __init__(self, server: str, message: str, *, status: int | None = None) -> None:
        super().__init__(server, message)
        self.status = status


class MCPToolError(MCPBridgeError):
    """A tool answered with an error result (``isError``) or a JSON-RPC error; it is not retried."""

    def __init__(self, server: str, message: str, *, code: int | None = None) -> None:
        super().__init__(server, message)
        self.code = code


class MCPInputRequired(MCPToolError):
    """A tool asked for input (elicitation, sampling, roots) and the pool has no ``input_handler`` to answer it;
    the call did not complete (the server ran no write: it never got the input)."""

    def __init__(
        self, server: str, tool: str, needs: list[str], *, code: int | None = None, detail: str | None = None
    ) -> None:
        what = ", ".join(needs) or "input"
        said = f" (the server said: JSON-RPC error {code}: {detail})" if detail is not None else ""
        super().__init__(
            server,
            f"tool {tool!r} needs input the bridge cannot give ({what}): give ToolPool an input_handler to answer "
            f"it{said}",
            code=code,
        )
        self.tool = tool
        self.needs = needs


class MCPResultWithheld(MCPToolError):
    """The tool ran and answered, but a result guardrail refused its result, which the caller is never given."""

    def __init__(self, server: str, tool: str, guardrail: str, reason: str) -> None:
        super().__init__(server, f"the result of {tool!r} was withheld by {guardrail}: {reason}")
        self.tool = tool
        self.guardrail = guardrail
        self.reason = reason


class MCPResultTooLarge(MCPToolError):
    """The tool answered with a result over the server's ``max_result_bytes``: refused unread, the session intact.

    ``size`` is the answer's size in bytes where the server said it (a ``Content-Length``), else None: the bridge
    stopped reading at ``limit``. The tool ran; its result is not given to the caller.
    """

    def __init__(self, server: str, tool: str, size: int | None, limit: int) -> None:
        what = f"an answer of {size} bytes" if size is not None else "an answer longer"
        super().__init__(server, f"the result of {tool!r} is too large: {what} than max_result_bytes={limit} allows")
        self.tool = tool
        self.size = size
        self.limit = limit


class MCPCallOutcomeUnknown(MCPBridgeError):
    """A call was sent but its answer was lost, so it may have run; check its effect before calling again."""

    def __init__(self, server: str, tool: str, reason: str) -> None:
        super().__init__(
            server,
            f"call to {tool!r} {reason}; it may have run, so check its effect before calling it again",
        )
        self.tool = tool
        self.reason = reason
