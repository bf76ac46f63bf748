"""The HTTP exchange both eras share: a JSON-RPC request POSTed over one ``httpx2.AsyncClient``, its answer read
as JSON or from an SSE stream, and httpx2's failures told apart by whether the request may have left."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import aclosing, contextmanager
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import mcp_types
from pydantic import ValidationError

from mcp_testkit._wire import sse as _sse
from mcp_testkit._wire.sse import SseDecoder, SseEvent, SseEventTooLarge
from mcp_testkit.bridge._input import answer_request
from mcp_testkit.bridge._rpc import MODERN_CODES, AnswerTooLarge, BadReply, ConnectionLost, RpcError, RpcSession

if TYPE_CHECKING:
    from collections.abc import Mapping
    from contextlib import AbstractAsyncContextManager

__all__ = ["DRAIN_TIMEOUT_S", "HttpExchange", "content_type", "rpc_error", "transport_errors"]

DRAIN_TIMEOUT_S = 1.0
"""How long to wait for a server to end an SSE stream once the answer has arrived."""


def _parsed(url: str) -> httpx2.URL | str:
    """`url` as an ``httpx2.URL``; the string itself when it does not parse, so that its requests fail as before."""
    try:
        return httpx2.URL(url)
    except httpx2.InvalidURL:
        return url


def content_type(response: httpx2.Response) -> str:
    """The media type of a response, lower-cased, without its parameters ('' when there is none)."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


class HttpExchange(RpcSession):
    """Posts JSON-RPC requests over one ``httpx2.AsyncClient`` and reads their answers, JSON or SSE.

    An era's session adds its headers (``_headers``), reads a refusal (``_refused``), keeps what an answer's
    headers tell (``_opened``) and, where its streams can be resumed, resumes one (``_resumes``, ``_resume``).
    """

    def __init__(self, client: httpx2.AsyncClient, url: str, credentials: Mapping[str, str]) -> None:
        super().__init__()
        self._client = client
        self._url = url
        self._target = _parsed(url)
        """Where requests go: the URL parsed once for the session (httpx2 parses a string again on every request)."""
        self._credentials = dict(credentials)

    def _headers(self, method: str, params: dict[str, Any]) -> dict[str, str]:
        return {"Accept": "application/json, text/event-stream", **self._credentials}

    async def _refused(self, response: httpx2.Response, request_id: int | None) -> None:
        """Raise the ``WireError`` (or ``RpcError``) a non-success status stands for."""
        raise NotImplementedError

    def _opened(self, method: str, response: httpx2.Response) -> None:
        """Keep what the era takes from a successful answer's headers."""

    def _resumes(self, decoder: SseDecoder) -> bool:
        """Whether a stream that broke where ``decoder`` stopped is resumed rather than given up (never, here)."""
        return False

    async def _resume(self, request_id: int, method: str, decoder: SseDecoder) -> dict[str, Any]:
        """The answer, read from a resumed stream; only an era whose ``_resumes`` says so is asked."""
        raise NotImplementedError

    async def _request(
        self, method: str, params: dict[str, Any], headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        request_id, body = self._new_request(method, params)
        try:
            with transport_errors():
                async with self._post(body, {**self._headers(method, params), **(headers or {})}) as response:
                    if not 200 <= response.status_code < 300:
                        await self._refused(response, request_id)
                    if response.status_code == 202:
                        raise BadReply("answered 202 Accepted to a request", sent=True)
                    self._opened(method, response)
                    return await self._read_answer(response, request_id, method)
        except anyio.get_cancelled_exc_class():
            await self._abandoned(request_id, method)  # the response stream is closed by now
            raise

    def _post(self, body: dict[str, Any], headers: dict[str, str]) -> AbstractAsyncContextManager[httpx2.Response]:
        return self._client.stream("POST", self._target, json=body, headers=headers)

    async def _read_answer(self, response: httpx2.Response, request_id: int, method: str) -> dict[str, Any]:
        kind = content_type(response)
        if kind == "application/json":
            try:
                message = json.loads(await self._body(response))
            except ValueError:
                raise BadReply("answered with a body that is not JSON", sent=True) from None
            messages = message if isinstance(message, list) else [message]
            for item in messages:
                answer = self._answer_in(item, request_id)
                if answer is not None:
                    return answer
            raise BadReply("answered without a response to the request", sent=True)
        if kind == "text/event-stream":
            return await self._read_events(response, request_id, method)
        raise BadReply(f"answered with Content-Type {kind or 'none'!r}", sent=True)

    async def _body(self, response: httpx2.Response) -> bytes:
        """A JSON body, read up to ``max_answer_bytes``: a longer one is refused by its Content-Length, unread,
        or once the bound is passed."""
        limit = self.max_answer_bytes
        if limit is None:
            return await response.aread()
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise AnswerTooLarge(int(declared), limit)
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise AnswerTooLarge(None, limit)
        return bytes(body)

    async def _read_events(self, response: httpx2.Response, request_id: int, method: str) -> dict[str, Any]:
        """The answer in an SSE body; a stream that ends or breaks before it is resumed where the era allows."""
        limit = self.max_answer_bytes
        # The answer's bound where it is the tighter one; else the decoder's own (read now, as it is set).
        bound = limit if limit is not None and limit <= _sse.MAX_EVENT_CHARS else None
        decoder = SseDecoder(max_event_chars=bound)
        answer = await self._answer_on_stream(response, request_id, decoder)
        if answer is not None:
            return answer
        if self._resumes(decoder):
            return await self._resume(request_id, method, decoder)
        raise ConnectionLost("ended the SSE stream before the answer", sent=True)

    async def _answer_on_stream(
        self, response: httpx2.Response, request_id: int, decoder: SseDecoder
    ) -> dict[str, Any] | None:
        """The answer in an SSE body, read on to the end of the stream for notifications sent after it;
        None when the stream ended, or its connection broke where the era resumes it, before the answer."""
        answer: dict[str, Any] | None = None
        async with aclosing(response.aiter_bytes()) as chunks:
            try:
                async for chunk in chunks:
                    for event in decoder.feed(chunk):
                        found = self._answer_in_event(event, request_id, strict=answer is None)
                        answer = found if answer is None else answer
                    if self._asked:
                        await self._reply_asked()
                    if answer is not None:
                        break
            except (httpx2.ReadError, httpx2.RemoteProtocolError):
                if not self._resumes(decoder):
                    raise
            except SseEventTooLarge as exc:
                if decoder.max_event_chars is not None and decoder.max_event_chars == self.max_answer_bytes:
                    raise AnswerTooLarge(None, decoder.max_event_chars) from None
                raise BadReply(f"answered with {exc}", sent=True) from None
            finally:
                # The server ends the stream after the answer; reading to that end lets httpx2's body
                # generators finish by themselves (trio reports ones collected half-way). Without an answer
                # (the call's timeout cancelled the read) nothing is drained: the timeout is the whole wait.
                with anyio.move_on_after(DRAIN_TIMEOUT_S if answer is not None else 0, shield=True):
                    try:
                        async for chunk in chunks:
                            for event in decoder.feed(chunk):
                                self._answer_in_event(event, request_id, strict=False)
                    except (httpx2.HTTPError, SseEventTooLarge):
                        pass
        return answer

    async def _reply_asked(self) -> None:
        """POST the answers to the requests the server sent on a call's stream (a tool's input requests)."""
        asked, self._asked = self._asked, []
        for request in asked:
            reply = await answer_request(self.ask_input, self.calling, request)
            async with self._post(reply, self._headers("", {})) as response:
                if not 200 <= response.status_code < 300:
                    what = f"the answer to its {request.get('method')!s:.60} request"
                    raise BadReply(f"refused {what} (HTTP {response.status_code})", sent=True)

    def _answer_in_event(self, event: SseEvent, request_id: int, *, strict: bool) -> dict[str, Any] | None:
        """The result carried by ``event``, if any; once the answer is in (not ``strict``), only notes."""
        if not event.data or event.event != "message":
            return None
        try:
            item = json.loads(event.data)
        except ValueError:
            if strict:
                raise BadReply("sent an SSE event whose data is not JSON", sent=True) from None
            return None
        try:
            return self._answer_in(item, request_id)
        except (BadReply, RpcError):
            if strict:
                raise
            return None


async def rpc_error(response: httpx2.Response, request_id: int | None = None) -> RpcError | None:
    """The JSON-RPC error a refusal carries, if it answers the request or has a modern code."""
    if content_type(response) != "application/json":
        return None
    try:
        error = mcp_types.JSONRPCError.model_validate(json.loads(await response.aread()))
    except (ValueError, ValidationError):
        return None
    if (request_id is not None and error.id == request_id) or error.error.code in MODERN_CODES:
        return RpcError(error.error.code, error.error.message, error.error.data)
    return None


@contextmanager
def transport_errors() -> Iterator[None]:
    """Turn httpx2 failures into ``WireError``, telling a request that never left from one that did."""
    try:
        yield
    except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
        raise ConnectionLost(f"could not be reached ({type(exc).__name__})", sent=False) from None
    except (httpx2.SSEError, httpx2.DecodingError) as exc:
        raise BadReply(f"answered with an unreadable body ({type(exc).__name__})", sent=True) from None
    except httpx2.TransportError as exc:
        raise ConnectionLost(f"lost the connection ({type(exc).__name__})", sent=True) from None
