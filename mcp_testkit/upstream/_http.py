"""The link to a Streamable HTTP server: each message POSTed, its answer read as JSON or SSE, and every exchange
recorded on the link's tape."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcp_testkit._wire.strict_json import JsonError
from mcp_testkit._wire.strict_json import loads as strict_loads
from mcp_testkit.upstream._exchange import Exchange, HttpInfo, era_of, kept_headers, split_messages, version_of
from mcp_testkit.upstream._link import TIMEOUT_S, OnEvent, decode_message, describe_upstream, is_request
from mcp_testkit.upstream._tape import Tape

__all__ = ["ACCEPT", "HttpUpstream"]

ACCEPT = "application/json, text/event-stream"


class HttpUpstream:
    """A Streamable HTTP server at `url`: POSTs messages, keeps the session id and protocol version."""

    transport = "http"

    def __init__(
        self, url: str, headers: Mapping[str, str] | None = None, *, tape: Tape | None = None,
        timeout_s: float = TIMEOUT_S,
    ) -> None:  # fmt: skip
        import httpx2

        self.url = url
        self.headers = dict(headers or {})
        self.tape = tape if tape is not None else Tape()
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._client = httpx2.Client(timeout=timeout_s, follow_redirects=False)

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

        from mcp_testkit._wire.sse import SseEventTooLarge

        seq, at = self.tape.start()
        status: int | None = None
        received: list[tuple[str, str]] = []
        framing, body, error = "empty", None, None
        messages: list[Any] = []
        content = json.dumps(message).encode() if message is not None else None
        try:
            with self._client.stream(method, self.url, content=content, headers=sent) as response:
                status = response.status_code
                received = list(response.headers.multi_items())
                if response.headers.get("content-type", "").startswith("text/event-stream"):
                    framing = "sse"
                    _read_events(response, message.get("id") if is_request(message) else None, on_event, messages)
                else:
                    framing, body = _read_body(response, messages)
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
            http=HttpInfo(method, status, framing, kept_headers(sent.items()), kept_headers(received, response=True)),
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


def _read_events(response: Any, wanted: Any, on_event: OnEvent | None, messages: list[Any]) -> None:
    """An SSE answer's messages onto `messages` as they come, until the answer to the request `wanted`; each other
    message is handed to `on_event` meanwhile."""
    from mcp_testkit._wire.sse import SseDecoder

    decoder = SseDecoder()
    for chunk in response.iter_raw():
        for event in decoder.feed(chunk):
            if not event.data:
                continue  # a priming event
            decoded = decode_message(event.data)
            messages.append(decoded)
            answered = isinstance(decoded, dict) and "method" not in decoded
            if answered and decoded.get("id") == wanted:
                return
            if on_event is not None:
                on_event(decoded)


def _read_body(response: Any, messages: list[Any]) -> tuple[str, str | None]:
    """A plain answer's framing ('empty', 'json', or 'text' with the body kept as text); its message onto
    `messages`."""
    raw = response.read()
    if not raw:
        return "empty", None
    try:
        messages.append(strict_loads(raw, "answer"))
    except JsonError:
        return "text", raw.decode("utf-8", errors="replace")
    return "json", None
