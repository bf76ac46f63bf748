"""Issue 22 items 5 and 6 for cassettes: `Cassette.from_json` bounds a value built in Python as `loads` bounds
a file, and the recording proxy decodes an upstream's answers strictly, so that the file it writes stays
strict JSON that loads back."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from mcp_testkit._wire.runner import Runner
from mcp_testkit.cassettes import Cassette, CassetteError, record

from ._support import ACCEPT, LIMIT_S

_ODD_ANSWER = b'{"jsonrpc": "2.0", "id": 1, "result": {"x": NaN, "deep": ' + b"[" * 300 + b"]" * 300 + b"}}"


async def _odd_upstream(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An upstream whose every answer holds NaN and arrays nested 300 deep (JSON by Python's reader, not by MCP's)."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(_ODD_ANSWER)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": _ODD_ANSWER})


@pytest.fixture
def odd_upstream() -> Iterator[str]:
    """The odd upstream on a real socket; its URL."""
    runner = Runner(_odd_upstream, "127.0.0.1", 0, header_timeout_s=10.0, body_timeout_s=10.0, idle_timeout_s=10.0)
    runner.start_thread("odd-upstream")
    try:
        yield f"http://127.0.0.1:{runner.port}/mcp"
    finally:
        runner.stop()


@pytest.mark.anyio
async def test_an_upstream_answer_with_nan_is_kept_as_text_and_the_cassette_loads(
    odd_upstream: str, tmp_path: Path
) -> None:
    """The proxy answers the client 502 naming what is not JSON (issue 37: as strictly as the fake reads a
    request), and the cassette keeps the upstream's answer as text: strict JSON, no NaN as a number, and it loads
    back."""
    out = tmp_path / "odd.json"
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    async with record(odd_upstream, out=out) as proxy, httpx2.AsyncClient() as http:
        with anyio.fail_after(LIMIT_S):
            answer = await http.post(proxy, json=ping, headers={"accept": ACCEPT})
    assert answer.status_code == 502
    assert "NaN is not JSON" in answer.json()["error"]["message"]

    def no_constants(name: str) -> Any:
        raise AssertionError(f"the cassette holds {name} as a number")

    json.loads(out.read_text(), parse_constant=no_constants)
    exchange = Cassette.load(out).exchanges[0]
    assert exchange.response is None
    assert exchange.http is not None
    assert exchange.http.framing == "text"


def _nested(depth: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    inner = root
    for _ in range(depth):
        inner["a"] = inner = {}
    return root


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (_nested(100_000), "a/a/a/a/a/a/a/a/... (123 levels more): nested too deeply (more than 131 levels)"),
        ({"exchanges": [{"request": {"params": {"n": math.nan}}}]}, "exchanges/0/request/params/n: NaN is not JSON"),
        ({"exchanges": [{"response": [1, -math.inf]}]}, "exchanges/0/response/1: -Infinity is not JSON"),
    ],
    ids=["nested-100k", "nan", "infinity"],
)
def test_cassette_from_json_bounds_a_value_built_in_python(data: Any, problem: str) -> None:
    """A dict nested 100,000 deep, or holding NaN or -Infinity, is one CassetteError naming the field, not a
    RecursionError or a cassette that writes non-JSON."""
    with pytest.raises(CassetteError) as caught:
        Cassette.from_json(data, source="built.json")
    message = str(caught.value)
    assert message.startswith(f"cassette built.json: {problem}"), message
    assert "\n" not in message
    json.dumps(message)  # printable as it is
