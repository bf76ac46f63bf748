"""Per-test overhead of the `mcp_server` fixture against pytest-httpserver's `httpserver`.

Run it from the repository root::

    python benchmarks/bench_fixture.py              # 500 tests a set, 3 interleaved rounds, best kept
    python benchmarks/bench_fixture.py --tests 200 --rounds 1

It writes generated test files into a temporary directory and runs each set in a pytest
subprocess of its own:

- ``empty``: 500 tests that do nothing, the floor every set pays;
- ``httpserver``: 500 tests that script one answer on pytest-httpserver's ``httpserver`` and
  make one request to it;
- ``mcp_server``: 500 tests that script one tool on ``mcp_server`` and call it through raw
  httpx2: ``initialize`` then ``tools/call`` on the new session. An MCP call needs a session and
  ``reset()`` ends every session between tests, so the fair unit of "one call" is these two
  requests (``notifications/initialized`` is left out: the server does not require it);
- ``httpserver (fixture only)`` and ``mcp_server (fixture only)``: the fixture without a request.

Both request sets share one ``httpx2.Client`` per module, so connection set-up is not what is
measured. A ``conftest.py`` times the test loop only (``pytest_runtestloop``), leaving out
interpreter start, plugin loading and collection, which are the same for every set, and it
imports the server and uvicorn before the loop in every set (pytest-httpserver imports werkzeug
when its plugin loads; mcp-testkit imports lazily, on first use). The one-off start and stop of
each fixture's server fall inside the loop and are spread over the tests.
Per-test overhead is ``(set - empty) / tests``, from the best of the rounds (other load only
ever slows a round down). The process CPU time is printed beside the wall time as a cross-check.
The exit status is 1 with ``--strict`` when ``mcp_server``'s overhead is above 1.5 times
``httpserver``'s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

TARGET_RATIO = 1.5

CONFTEST = """
import json
import time

import httpx2
import pytest

# One-off imports happen before the timed loop in every set: pytest-httpserver imports werkzeug
# when its plugin loads, while mcp-testkit imports its server and uvicorn on first use.
import mcp_testkit.server
import uvicorn


@pytest.fixture(scope="module")
def http():
    with httpx2.Client(timeout=30) as client:
        yield client


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        return (yield)
    finally:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        with open("timing.json", "w") as out:
            json.dump({"wall": wall, "cpu": cpu, "failed": session.testsfailed}, out)
"""

MCP_HEAD = """
HEADERS = {"accept": "application/json, text/event-stream"}
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
"""

BODIES = {
    "empty": ("", "def test_{i}():\n    pass\n"),
    "httpserver": (
        "",
        """
def test_{i}(httpserver, http):
    httpserver.expect_request("/echo").respond_with_data("ok")
    assert http.get(httpserver.url_for("/echo")).text == "ok"
""",
    ),
    "mcp_server": (
        MCP_HEAD,
        """
def test_{i}(mcp_server, http):
    mcp_server.tool("echo", returns="ok")
    answer = http.post(mcp_server.url, json=INIT, headers=HEADERS)
    session = {{**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}}
    assert http.post(mcp_server.url, json=CALL, headers=session).json()["result"]["content"][0]["text"] == "ok"
""",
    ),
    "httpserver (fixture only)": ("", "def test_{i}(httpserver):\n    pass\n"),
    "mcp_server (fixture only)": ("", "def test_{i}(mcp_server):\n    pass\n"),
}


def write_set(root: Path, name: str, tests: int) -> Path:
    """A directory with a pytest.ini, the timing conftest and `tests` generated tests."""
    folder = root / name.replace(" ", "_").replace("(", "").replace(")", "")
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (folder / "conftest.py").write_text(CONFTEST)
    head, body = BODIES[name]
    source = head + "".join(body.format(i=i) for i in range(tests))
    (folder / "test_generated.py").write_text(textwrap.dedent(source))
    return folder


def run_set(folder: Path) -> dict[str, float]:
    """Run one set in a pytest subprocess; the loop's wall and CPU seconds."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:randomly"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    timing: dict[str, float] = json.loads((folder / "timing.json").read_text())
    if done.returncode != 0 or timing["failed"]:
        raise SystemExit(f"set {folder.name} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return timing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=500, help="tests a set (500)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, best kept (3)")
    parser.add_argument("--strict", action="store_true", help=f"exit 1 when the ratio is above {TARGET_RATIO}")
    args = parser.parse_args(argv)

    best: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-fixture-") as tmp:
        folders = {name: write_set(Path(tmp), name, args.tests) for name in BODIES}
        for _ in range(args.rounds):
            for name, folder in folders.items():
                timing = run_set(folder)
                kept = best.setdefault(name, timing)
                kept["wall"] = min(kept["wall"], timing["wall"])
                kept["cpu"] = min(kept["cpu"], timing["cpu"])

    floor = best["empty"]
    print(f"{args.tests} tests a set, best of {args.rounds} round(s); overhead = (set - empty) / tests")
    print(f"{'set':<28} {'loop s':>8} {'CPU s':>8} {'µs/test':>9} {'CPU µs/test':>12}")
    overhead: dict[str, float] = {}
    for name, timing in best.items():
        per_test = (timing["wall"] - floor["wall"]) / args.tests * 1e6
        per_test_cpu = (timing["cpu"] - floor["cpu"]) / args.tests * 1e6
        overhead[name] = per_test
        print(f"{name:<28} {timing['wall']:>8.3f} {timing['cpu']:>8.3f} {per_test:>9.0f} {per_test_cpu:>12.0f}")
    ratio = overhead["mcp_server"] / overhead["httpserver"]
    fixture_ratio = overhead["mcp_server (fixture only)"] / max(overhead["httpserver (fixture only)"], 1e-9)
    print(
        f"mcp_server (initialize + tools/call) / httpserver (one request): {ratio:.2f}x "
        f"(target <= {TARGET_RATIO}x: {'met' if ratio <= TARGET_RATIO else 'MISSED'})"
    )
    print(f"fixture only, no request: {fixture_ratio:.2f}x")
    return 1 if args.strict and ratio > TARGET_RATIO else 0


if __name__ == "__main__":
    sys.exit(main())
