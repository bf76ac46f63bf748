"""The contract reports what the referee found in a bridge's traffic (docs/referee.md): with each property's verdict
(`PropertyResult.violations`, `--json`), and as a line of its own in `mcp-testkit check`; never as a verdict."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_testkit.adapters import ReferenceBridgeAdapter
from mcp_testkit.contract import run_contract


class _NoVersionHeader(httpx2.AsyncBaseTransport):
    """A transport that drops the MCP-Protocol-Version header after `initialize`: the referee's `version-header`."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if "mcp-protocol-version" in request.headers and b'"initialize"' not in request.content:
            del request.headers["mcp-protocol-version"]
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class ForgetsTheVersionHeader(ReferenceBridgeAdapter):
    """The reference bridge, but for the header: every verdict as the reference's, and the referee's violations."""

    name = "forgets-version"

    def __init__(self, *, transport: httpx2.AsyncBaseTransport | None = None, **options: Any) -> None:
        super().__init__(transport=_NoVersionHeader(transport or httpx2.AsyncHTTPTransport()), **options)


@pytest.mark.sends_invalid_mcp("a reference bridge whose transport drops the version header, on purpose")
def test_each_verdict_carries_the_violations_of_its_examples_and_the_reference_bridge_has_none() -> None:
    """A bridge that drops the version header breaks `version-header` in every example that calls after the
    handshake; its verdicts are the reference bridge's; the reference bridge breaks no rule at all."""
    kept = ("P1", "P2", "P7")
    broken = run_contract(ForgetsTheVersionHeader, max_examples=10, properties=kept, eras=["handshake"])
    clean = run_contract(ReferenceBridgeAdapter, max_examples=10, properties=kept, eras=["handshake"])
    assert [r.status for r in broken] == [r.status for r in clean] == ["passed"] * 3
    for result in broken:
        assert set(result.violations) == {"version-header"}, result.property_id
        assert result.violations["version-header"] >= result.examples, result.property_id
        assert result.violation_shown["version-header"].startswith("version-header at $: ")
    assert all(result.violations == {} for result in clean)


def test_check_prints_a_line_per_bridge_that_broke_a_rule_and_json_keeps_the_counts(tmp_path: Path) -> None:
    """`check` says which rules a bridge's messages broke, how often and in which properties' examples, with the
    first violation; the exit status is the verdicts' alone (0 here); `--json` has the counts per verdict, and
    `--html` shows them in each cell's details."""
    imports = "from typing import Any\n\nimport httpx2\n\nfrom mcp_testkit.adapters import ReferenceBridgeAdapter\n\n\n"
    classes = inspect.getsource(_NoVersionHeader) + "\n\n" + inspect.getsource(ForgetsTheVersionHeader)
    (tmp_path / "forgets.py").write_text(imports + classes)
    out = tmp_path / "verdicts.json"
    done = subprocess.run(
        [sys.executable, "-m", "mcp_testkit", "check", "./forgets.py:ForgetsTheVersionHeader", "--property", "P1",
         "--property", "P2", "--examples", "5", "--era", "handshake", "--json", str(out),
         "--html", str(tmp_path / "verdicts.html")],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = [line for line in done.stdout.splitlines() if "broke MCP's rules" in line]
    assert line.startswith(
        "forgets-version's messages broke MCP's rules (docs/referee.md, no verdict): version-header "
    ), line
    assert "(in P1, P2); first: version-header at $: the MCP-Protocol-Version header is missing" in line
    cells = json.loads(out.read_text())["forgets-version"]["properties"]
    assert cells["P1@handshake"]["violations"]["version-header"] >= 5
    assert cells["P2@handshake"]["status"] == "passed"
    assert "<dt>referee</dt><dd>version-header " in (tmp_path / "verdicts.html").read_text()
