"""The Node.js test trees this repository owns, installed on first use.

A tree is a folder with a `package.json` and a `package-lock.json`: `tests/conformance` pins the
official MCP conformance suite, `tests/conformance_next` its pre-release with the 2026-07-28
scenarios, `tests/standalone/ts_client` a client on the TypeScript SDK, `tests/mermaid` the Mermaid CLI
(its puppeteer drives Debian's chromium and downloads no browser), `tests/proxy/everything` the MCP reference
server `@modelcontextprotocol/server-everything` (an upstream of the chaos proxy). The
first test that needs a tree runs `npm ci` in it, under a file lock so that pytest-xdist workers
wait for one install instead of racing; a stamp in `node_modules` (a digest of the two files) tells
later runs that it is done, and a changed lock installs again.

Without Node.js these tests skip and say why. Under `CI=true` they fail instead: CI must never turn
them off by missing Node. Node present but npm missing fails with what to run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
CONFORMANCE = TESTS / "conformance"
CONFORMANCE_NEXT = TESTS / "conformance_next"
TS_CLIENT = TESTS / "standalone" / "ts_client"
MERMAID = TESTS / "mermaid"
EVERYTHING = TESTS / "proxy" / "everything"
NODE20_SHIM = CONFORMANCE / "node20-globsync.mjs"
"""Lets both conformance trees run on Node 20 (they import fs.globSync, which Node 22 added)."""
NPM_CI_TIMEOUT_S = 600.0
"""One `npm ci` from the registry, on a slow network."""
SCENARIO_TIMEOUT_S = 120.0
"""One conformance scenario against a running server."""

_STAMP = ".mcp-testkit-installed"
_TALLY = re.compile(r"Passed: (\d+)/(\d+), (\d+) failed")
_LISTED = re.compile(r"^\s+- (\S+)(?: \[([^\]]*)\])?$")
_CHECK = re.compile(r"\[([^\]\s]+)\s*\] (SUCCESS|FAILURE|WARNING|SKIPPED|INFO) ")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def on_ci() -> bool:
    """Whether the run is CI's (`CI` set to anything but empty, 0, false or no), where no Node test may skip."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def node(purpose: str) -> str:
    """The path of `node`; without it the test skips naming `purpose`, or fails under CI=true."""
    found = shutil.which("node")
    if found is None:
        reason = f"Node.js is not installed (no `node` on PATH), and {purpose} needs it"
        if on_ci():
            pytest.fail(
                f"{reason}; under CI=true a Node test must not skip: install Node.js 20 or later", pytrace=False
            )
        pytest.skip(reason)
    return found


def installed(tree: Path) -> Path:
    """`tree`, with the packages its lock names installed in `node_modules` (by `npm ci` when missing or stale)."""
    wanted = _digest(tree)
    stamp = tree / "node_modules" / _STAMP
    if _read(stamp) == wanted:
        return tree
    shown = _shown(tree)
    with _exclusive(tree / ".npm-ci.lock"):
        if _read(stamp) == wanted:  # another worker installed it while this one waited
            return tree
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(
                f"npm is not on PATH, so the Node packages of {shown} cannot be installed: "
                f"install npm (it comes with Node.js), or run `npm ci --prefix {shown}`",
                pytrace=False,
            )
        command = [npm, "ci", "--no-audit", "--no-fund", "--include=dev"]
        # No package's install script may download a browser of its own (puppeteer would): that fails here.
        env = {**os.environ, "PUPPETEER_SKIP_DOWNLOAD": "1"}
        try:
            ran = subprocess.run(
                command, cwd=tree, capture_output=True, text=True, timeout=NPM_CI_TIMEOUT_S, env=env
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"`npm ci` in {shown} did not finish within {NPM_CI_TIMEOUT_S:.0f} s", pytrace=False)
        if ran.returncode != 0:
            said = "\n".join((ran.stderr or ran.stdout).strip().splitlines()[:12])  # npm puts the cause first
            pytest.fail(f"`npm ci --prefix {shown}` failed with exit status {ran.returncode}:\n{said}", pytrace=False)
        stamp.parent.mkdir(exist_ok=True)  # a tree with no dependencies gets no node_modules
        stamp.write_text(wanted)
    return tree


@dataclass(frozen=True)
class SuiteRun:
    """What one run of the conformance suite printed, and its tally."""

    scenario: str
    returncode: int
    output: str

    @property
    def tally(self) -> tuple[int, int, int] | None:
        """(passed, total, failed) from the suite's result line, None when it printed none."""
        found = _TALLY.search(self.output)
        return (int(found[1]), int(found[2]), int(found[3])) if found else None

    def checks(self, status: str) -> frozenset[str]:
        """The ids of the checks the suite reported with `status` (SUCCESS, FAILURE, WARNING, SKIPPED)."""
        return frozenset(check for check, said in _CHECK.findall(self.output) if said == status)

    @property
    def all_passed(self) -> bool:
        """Every check of the scenario passed, there was at least one, and the suite exited 0."""
        tally = self.tally
        return tally is not None and tally[2] == 0 and tally[0] == tally[1] > 0 and self.returncode == 0


@dataclass(frozen=True)
class ConformanceSuite:
    """The official MCP conformance suite (npm @modelcontextprotocol/conformance), as a tree pins it."""

    node: str
    tree: Path

    def run(self, url: str, scenario: str, cwd: Path, *, spec_version: str | None = None) -> SuiteRun:
        """Run one server scenario against `url`, at the wire of `spec_version` if given (else the scenario's
        default); the suite writes what it writes under `cwd`."""
        version = ("--spec-version", spec_version) if spec_version else ()
        return self._run(scenario, cwd, "server", "--url", url, "--scenario", scenario, *version)

    def run_client(self, command: str, scenario: str, cwd: Path) -> SuiteRun:
        """Run one client scenario: the suite starts its server and runs `command URL` (a shell command line)."""
        return self._run(scenario, cwd, "client", "--command", command, "--scenario", scenario)

    def _run(self, scenario: str, cwd: Path, *arguments: str) -> SuiteRun:
        command = self._command(*arguments)
        ran = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=SCENARIO_TIMEOUT_S)
        return SuiteRun(scenario, ran.returncode, _ANSI.sub("", ran.stdout + ran.stderr))

    def client_scenarios(self) -> dict[str, tuple[str, ...]]:
        """Every client scenario the suite lists, with the spec versions it applies to (none for an extension)."""
        return self._listed("--client")

    def server_scenarios(self) -> dict[str, tuple[str, ...]]:
        """Every server scenario the suite lists, with the spec versions it applies to (none for an extension)."""
        return self._listed("--server")

    def _listed(self, kind: str) -> dict[str, tuple[str, ...]]:
        listed = subprocess.run(
            self._command("list", kind), capture_output=True, text=True, timeout=SCENARIO_TIMEOUT_S, check=True
        ).stdout
        found = {}
        for line in _ANSI.sub("", listed).splitlines():
            named = _LISTED.match(line)
            if named:
                found[named[1]] = tuple(v for v in (named[2] or "").split(",") if v[:1].isdigit())
        return found

    def _command(self, *arguments: str) -> list[str]:
        entry = self.tree / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
        return [self.node, "--import", NODE20_SHIM.as_uri(), str(entry), *arguments]


def conformance_suite() -> ConformanceSuite:
    """The conformance suite, installed; skips (fails under CI=true) without Node.js."""
    return ConformanceSuite(node("the MCP conformance suite"), installed(CONFORMANCE))


def conformance_next_suite() -> ConformanceSuite:
    """The conformance suite's pre-release with the 2026-07-28 scenarios, installed; skips (fails under CI=true)
    without Node.js."""
    return ConformanceSuite(node("the MCP conformance suite (2026-07-28)"), installed(CONFORMANCE_NEXT))


@dataclass(frozen=True)
class EverythingServer:
    """`@modelcontextprotocol/server-everything` as its tree pins it: `node dist/index.js stdio` serves stdio,
    `streamableHttp` serves Streamable HTTP at `/mcp` on the port the `PORT` variable names (3001 by default).
    `loopback.mjs`, loaded first, makes that HTTP server listen on 127.0.0.1 at a free port and say which."""

    node: str
    tree: Path

    @property
    def entry(self) -> Path:
        return self.tree / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

    def stdio_command(self) -> list[str]:
        """The command line that serves it over stdio."""
        return [self.node, str(self.entry), "stdio"]

    @contextlib.contextmanager
    def serving_http(self, log: Path, *, timeout_s: float = 30.0) -> Iterator[str]:
        """Serve it over Streamable HTTP on 127.0.0.1 (its stderr to `log`); yields its URL, stops it after."""
        command = [self.node, "--import", (self.tree / "loopback.mjs").as_uri(), str(self.entry), "streamableHttp"]
        with log.open("w") as err:
            process = subprocess.Popen(command, env={**os.environ, "PORT": "0"}, stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + timeout_s
            while (found := re.search(r"listening on 127\.0\.0\.1:(\d+)", log.read_text())) is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    said = log.read_text().strip()[-2000:]
                    raise RuntimeError(f"server-everything did not start over HTTP within {timeout_s:.0f} s: {said}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{found[1]}/mcp"
        finally:
            process.terminate()
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout_s)


def everything_server() -> EverythingServer:
    """server-everything, installed; skips (fails under CI=true) without Node.js."""
    return EverythingServer(node("@modelcontextprotocol/server-everything"), installed(EVERYTHING))


def _digest(tree: Path) -> str:
    files = (tree / "package.json", tree / "package-lock.json")
    return hashlib.sha256(b"\0".join(path.read_bytes() for path in files)).hexdigest()


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


def _shown(tree: Path) -> str:
    """The tree as a user would type it: relative to the current folder when it is under it."""
    with contextlib.suppress(ValueError):
        return str(tree.relative_to(Path.cwd()))
    return str(tree)


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock` (created if need be); other processes block until it is released."""
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
