"""The guarantee matrix of the bridges people use: builds each bridge's environment in a cache folder,
runs the contract over the socket and writes docs/matrix.md (and docs/matrix.json).

    python scripts/matrix.py                      # every bridge, 100 examples, writes docs/matrix.md
    python scripts/matrix.py --only fastmcp       # one bridge (repeatable): its columns are replaced, the
                                                  # others kept from docs/matrix.json
    python scripts/matrix.py --property P10 --property P11
                                                  # these properties only: their cells replace theirs in
                                                  # docs/matrix.json, every other cell is kept; it
                                                  # prints each cell it replaced, added or removed
    python scripts/matrix.py --docs /tmp/docs ... # read and write /tmp/docs/matrix.{md,json} instead
    python scripts/matrix.py --reuse ...          # run nothing: read each bridge's report of an earlier run
                                                  # (a run with --no-write, e.g. bridges run side by side)
    python scripts/matrix.py --only fastmcp --json shards/fastmcp.json
                                                  # a shard: one job's bridge, its cells, the toolkit's version
                                                  # and the settings, written to that file and nowhere else
    python scripts/matrix.py --merge shards/*.json --html docs/matrix.html
                                                  # run nothing: the shards of one run (one toolkit, one set of
                                                  # settings), written as that run unsharded would write them
    python scripts/matrix.py --ci                 # what CI runs: the bridges installable alongside the
                                                  # toolkit and the TypeScript driver, 10 examples, each
                                                  # cell asserted against .ci/matrix-expected.json

Bridges sharing a venv with mcp 2.x get one with this repository installed with their extra; the
drivers for bridges that need mcp<2 get one from their pinned requirements; the TypeScript driver
`npm ci`. The cache folder (default ~/.cache/mcp-testkit-matrix) keeps them between runs.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / ".ci" / "matrix-expected.json"
BOTH_ERAS = ("handshake", "stateless")
STATELESS_COLUMN = " [2026-07-28]"
"""What a column of the stateless era (2026-07-28, against a server of both eras) carries after its name; a column
without it is of the handshake era (against a server from before 2026-07-28)."""


@dataclass(frozen=True)
class Bridge:
    """One environment and the adapters (module:factory) or driver run in it."""

    key: str
    kind: str  # "toolkit" (this interpreter), "extra" (venv with the toolkit and an extra), "driver", "node"
    specs: tuple[str, ...] = ()
    extra: str = ""
    dist: str = ""
    driver: str = ""
    in_ci: bool = False
    eras: tuple[str, ...] = ("handshake",)
    """The eras checked: both for the bridges that speak 2026-07-28, the handshake era for the others."""
    packages: tuple[str, ...] = ()
    """Requirements installed beside the toolkit and its extra (a bridge with no extra of its own)."""


BRIDGES = (
    Bridge(
        "toolkit",
        "toolkit",
        (
            "mcp_testkit.adapters:ReferenceBridgeAdapter",
            "mcp_testkit.adapters:SdkClientAdapter",
            "mcp_testkit.adapters:SdkClientAdapter.legacy",
        ),
        dist="mcp",
        eras=BOTH_ERAS,
    ),
    Bridge(
        "fastmcp",
        "extra",
        ("mcp_testkit.adapters.fastmcp:FastMcpClientAdapter",),
        "fastmcp",
        "fastmcp",
        in_ci=True,
        eras=BOTH_ERAS,
    ),
    Bridge(
        "pydantic-ai",
        "extra",
        ("mcp_testkit.adapters.pydantic_ai:PydanticAiToolsetAdapter",),
        "pydantic-ai",
        "pydantic-ai-slim",
        in_ci=True,
        eras=BOTH_ERAS,
    ),
    Bridge(
        "openai-agents",
        "extra",
        (
            "mcp_testkit.adapters.openai_agents:ServerAdapter",
            "mcp_testkit.adapters.openai_agents:InvokeAdapter",
            "mcp_testkit.adapters.openai_agents:RetryingServerAdapter",
        ),
        "openai-agents",
        "openai-agents",
        in_ci=True,
        eras=BOTH_ERAS,
    ),
    Bridge(
        "llama-index",
        "extra",
        ("mcp_testkit.adapters.llama_index:ToolSpecAdapter",),
        "llama-index",
        "llama-index-tools-mcp",
        in_ci=True,
    ),
    Bridge(
        "langchain-mcp",
        "extra",
        ("mcp_testkit.adapters.langchain_mcp:McpAdapterAdapter",),
        "fastmcp",
        "langchain",
        eras=BOTH_ERAS,
        packages=("langchain>=1.4",),
    ),
    Bridge("langchain", "driver", driver="drivers/langchain/drive.py"),
    Bridge("smolagents", "driver", driver="drivers/smolagents/drive.py"),
    Bridge("typescript", "node", driver="drivers/typescript/drive.mjs", in_ci=True),
)

MEANING = {
    "P0": "the bridge cannot connect to a server whose tools are legal (a tool without parameters is enough): the "
    "agent gets no tool at all, and no other promise can be checked (every other property is blocked).",
    "P1": "the agent may run with a partial or duplicated tool list (tools silently missing, or two tools under "
    "one name), or loop on a server's pages without end.",
    "P2": "a write can run twice, or be reported done when it never ran: an order placed twice, a ticket never opened.",
    "P3": "a read fails on a transient fault it could have survived, or runs more often than its retry budget.",
    "P4": "a refused credential is sent again, or the next call after a rotation still carries the stale one.",
    "P5": "after the server lost the session, every later call fails until the application rebuilds the client.",
    "P5s": "a read whose answer was lost with its broken stream fails, although 2026-07-28 recovers it only by "
    "re-issuing it; or a write is re-issued and may run twice.",
    "P6": "the application cannot tell what happened: a call that may have run looks like one that surely did not "
    "(or like a tool error the model is invited to retry).",
    "P7": "the model does not read what the tool said: a text block, an error's text or the structured result is "
    "left out of what it reads, two different results read the same, or an error reads as a success.",
    "P8": "a call a person declined, or never answered, reaches the server; an approved one runs twice or not at all.",
    "P9": "a cached tool list leaks one credential's tools to another, or hides a changed catalogue past its TTL.",
    "P10": "a call the application gave up on keeps running at the server (an order placed after the user cancelled), "
    "or its late answer is handed to another call.",
    "P11": "the agent hangs for good on a server that never answers, dribbles its answer or sends only progress.",
    "P12": "a large result is reported as a session or auth error, crashes the bridge, or leaves it unusable.",
    "P13": "with calls in flight at once, a fault on one breaks the others, hands one another's answer, or leaves "
    "the bridge unusable.",
    "P14": "the agent calls tools the server no longer offers, or never sees the new ones, after the catalogue "
    "changed.",
    "P15": "a token that expired mid-session ends the agent's work although a refresh would have saved it, or the "
    "bridge asks for new tokens in a loop, or sends the call twice.",
    "P19": "a server that keeps state in its session (a login, a cursor, a transaction) loses it between the "
    "agent's calls: they reach it in different sessions.",
}


NOTES = {
    "langchain-mcp-adapters": (
        "Its calls hang (P2, P3, P6) when an answer arrives broken (`TruncateBody`, `MalformedSse`) or its SSE "
        "stream ends before the answer (`EndStream`). The hang is the bridge's, not the driver's: it stays with the "
        "driver's `WireWatch` replaced by a plain `httpx` transport. Its mcp 1.x client hands a body it cannot parse "
        "to the session as an exception, which fails no pending request, and a stream that ends with no event to "
        "resume from leaves the request waiting; a request then waits for the session's read timeout, and "
        "langchain-mcp-adapters gives `ClientSession` none unless the application passes "
        '`session_kwargs={"read_timeout_seconds": ...}` (with one, such a call fails with a timeout instead, an '
        "outcome the application can handle)."
    ),
    "smolagents": (
        'P0 fails, and blocks every other property: mcpadapt reads `inputSchema["properties"]`, '
        'which a tool without parameters may leave out (`{"type": "object"}`, as the spec allows and as '
        "`TestMcpServer`'s tools declare by default), so the listing raises `KeyError: 'properties'` and the bridge "
        "loads nothing. [The probes](matrix-probes.md) run it a second time with tools whose schema has "
        "`properties` (the rows `smolagents (schema with properties)`), and show what the crash hides: it reads the "
        "first page of the listing only (P1); it hands an `isError` result's text to the agent as a success (P2, "
        "P7: a write that never ran is reported done); an HTTP error (401, 500) or a dropped connection during a "
        "call hangs it for good (P3, P4, P6), because the error ends mcpadapt's session task and the thread of its "
        "event loop, and the synchronous tool call waits, with no timeout, for a result from that stopped loop; "
        "no new session follows a 404 (P5). Its session read timeout is lost too (`client_session_timeout_seconds` "
        "defaults to the int 5 and only a float or a timedelta is used), but a float does not end the hang above."
    ),
}
"""What a bridge's column cannot say by itself, by column name (without the version)."""


CHANGES = """
- **Fail closed on needs** (issue 36): a property is n/a only where the contract structurally cannot do what it
  takes, never because an adapter declared no number (an undeclared `connect_timeout_s` is the listing's 1 + retry
  attempts of `timeout_s`, an undeclared `timeout_s` 30 s a request, an undeclared `concurrency` 2). Cells that
  changed: openai-agents, openai-agents-invoke and openai-agents-retrying, both eras, P13 n/a -> FAILS (their
  adapters now declare `concurrency` 4: the Agents SDK runs an agent's tool calls as parallel tasks, and the bridge
  then runs them one at a time, so a `Drop` on the first fails the others unsent, and every later call too);
  `@modelcontextprotocol/sdk` P11 FAILS -> holds: the old verdict was the toolkit's own fault, not the bridge's
  (a driver's watchdog fired 1.5 s before the example's deadline, which under P11's 2.25 s bound was 0.75 s,
  before the bridge's 1 s timeout could; the watchdog now leaves a short deadline three quarters of its time).
  langchain-mcp-adapters' P11 still FAILS with the watchdog fixed (still waiting at 1.7 s on a 1 s timeout).
  Checked with `python scripts/matrix.py --only openai-agents --only llama-index` and
  `--only typescript --only langchain --property P11`; the other columns declare every fact already.
- **New row P0, "connects to any valid server"** (issue 36): every column connects to a server of legal but
  unusual tools (a schema without `properties`, `additionalProperties`, `$defs`, empty descriptions, 128-character
  names, odd annotations) and loads them all. Where P0 fails, every other property of the era is **blocked**, a
  status of its own: smolagents P0 FAILS with `KeyError: 'properties'` (on a `{"type": "object"}` schema, its
  declared case 1) and P1-P7 not run -> blocked.
- **P14 judges `list_changed` on the handshake era's GET stream** (issue 23): in P14's examples the contract's
  server offers the GET stream, and a bridge that opened one and is told of a change there must offer the current
  tools, as on 2026-07-28's `subscriptions/listen`. No cell changed: the reference bridge, which now opens the GET
  stream with its cache on, holds P14 in both eras (`python scripts/matrix.py --only toolkit --property P14`, 100
  examples), and no other bridge declares a tool cache, so P14 stays n/a for every other column.
- **New rows P10-P14** (issue 23) for every column, from the facts each adapter and driver now declares from
  its bridge's source (`connect_timeout_s`, `concurrency`, the `"cancellation"` capability; see
  [adapters](adapters.md)); a fact a bridge does not have leaves its property n/a, with the reason in
  `matrix.json`. What they show: the SDK client, fastmcp and pydantic-ai cancel an abandoned call as their era
  says (P10), but a connection lost under one of several calls in flight ends their one session and every other
  call with it (P13: a `Drop` on one of 4 calls fails all 4 and the client stays dead); openai-agents (its three
  paths) and llama-index send `notifications/cancelled` when their own timeout ends a call (the `mcp` session
  under them does), and fail P10 only where the application abandons a call (its cancel scope, a deadline): then
  they tell the server nothing ([the probes](matrix-probes.md) show both, a row each); openai-agents
  with retries resends a held or huge write, so a write waits 3 times its timeout (P11) and runs again (P12);
  langchain-mcp-adapters and the TypeScript SDK client, as their drivers run them, are still waiting at
  2.25 s on a call the server never answers although each declares a 1 s timeout (P11, `NeverAnswer`: headers
  sent, no body; langchain-mcp-adapters' session has no read timeout of its own). No shipped bridge but the
  reference caches its listing (P14 n/a), and a bridge run by a driver cannot abandon a call or run two at once
  (P10, P13 n/a).
- **New column `langchain.mcp`** (LangChain's in-core MCP adapter, langchain 1.5.2; the 1.4 alphas are
  superseded by 1.4.0-1.5.2 releases), in both eras: built on the fastmcp `Client`, it shares its session
  verdicts (P1, P4, P5, P6, P13) and adds its own: P7 FAILS (an audio block raises `NotImplementedError:
  Converting MCP audio content to a LangChain content block is not yet supported` instead of rendering) and
  P10 FAILS (a call the application abandons is never cancelled at the server, although the fastmcp `Client`
  under it cancels one).
- **The drivers stop reading the wire** (issue 21 item 11): langchain-mcp-adapters' and smolagents' `WireWatch`
  and the TypeScript driver's watched `fetch` are gone; each sorts what its bridge raised from the error alone.
  No verdict changed: mcp 1.x hands its caller an `httpx.HTTPStatusError` carrying the status, and the
  TypeScript SDK a `StreamableHTTPError` whose `code` is the status, so both still report a 401 as a refusal
  (P4 holds for langchain-mcp-adapters and the TypeScript SDK, and the probes show what each caller receives).
- **Statuses of issue 21 item 12, published for the first time**: langchain-mcp-adapters P2, P3, P6 FAILS ->
  HANGS (a call that waits for good is its own status, not a failure of the property whose example hung);
  smolagents P2-P7 FAILS -> not run (one connect failure, `KeyError: 'properties'`, is reported once, under
  P1, and blocks the rest).
- **P5s FAILS -> holds** for `sdk-client (auto)`, `fastmcp`, `openai-agents` and `openai-agents-invoke` in
  2026-07-28: P5s now follows the retry rule P3 follows (docs/contract.md): a bridge declaring `retry = 0`
  re-issues nothing after a broken stream and must report the loss, which these do; `pydantic-ai` still fails
  (its `ModelRetry` invites the model to resend) and so does `openai-agents-retrying` (it resends a write).
- **The adapters' HTTP timeouts are the bridges' own** (30 s, reads 300 s, as the mcp SDK and fastmcp set
  them); the per-request timeout of each bridge (`timeout_s`) ends a wait first. Before, the adapters gave
  the HTTP client a read timeout as short as the session's, which made the SDK's transport task fail and end
  the whole session at a timed-out call: it would have failed P10 for the SDK client, fastmcp and pydantic-ai
  where an application with the SDK's defaults holds it. No P1-P9 cell changed with it.
- Earlier (issue 21 item 11): P4 holds -> FAILS for `sdk-client (auto)`, `sdk-client (legacy)`, `fastmcp`,
  `openai-agents`, `openai-agents-invoke` and `llama-index`: mcp 2.3's Streamable HTTP client raises the one
  `MCPError(-32603, "Server returned an error response")` for a 401, a 403 and a 500 alike, and their
  adapters no longer read the status from the wire. Earlier (issue 21 item 6): `fastmcp` P7 holds -> FAILS
  (its `ToolError` keeps only the first text block of an error result).
"""
"""The cells that changed since the matrix was last published, and why (written under the table)."""


def run(command: list[str], **options: object) -> subprocess.CompletedProcess[str]:
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, text=True, check=False, **options)  # type: ignore[call-overload]


def uv() -> str | None:
    """uv, the fast installer, when it is installed beside this interpreter or on PATH (the dev extra brings it):
    it resolves the same newest releases as pip from the same index, in a fraction of the time. MATRIX_INSTALLER=pip
    asks for pip."""
    if os.environ.get("MATRIX_INSTALLER") == "pip":
        return None
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def venv(path: Path) -> Path:
    python = path / "bin" / "python"
    if not python.exists():
        fast = uv()
        made = [fast, "venv", "--quiet", "--python", sys.executable] if fast else [sys.executable, "-m", "venv"]
        run([*made, str(path)]).check_returncode()
    return python


def install(python: Path, *requirements: str) -> None:
    """Install into the venv of `python` (uv pip, else pip)."""
    fast = uv()
    if fast:
        command = [fast, "pip", "install", "--quiet", "--python", str(python)]
    else:
        command = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    run([*command, *requirements]).check_returncode()


def prepare(bridge: Bridge, cache: Path) -> tuple[Path, str | None]:
    """The interpreter that runs `mcp-testkit check` for this bridge, and the driver command if any."""
    if bridge.kind == "toolkit":
        return Path(sys.executable), None
    if bridge.kind == "extra":
        python = venv(cache / bridge.key)
        install(python, "-e", f"{ROOT}[{bridge.extra}]", *bridge.packages)
        return python, None
    if bridge.kind == "driver":
        python = venv(cache / bridge.key)
        install(python, "-r", str(ROOT / Path(bridge.driver).parent / "requirements.txt"))
        return Path(sys.executable), f"{python} {ROOT / bridge.driver}"
    run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(ROOT / Path(bridge.driver).parent)]).check_returncode()
    return Path(sys.executable), f"node {ROOT / bridge.driver}"


def version_of(python: Path, dist: str) -> str:
    code = f"from importlib.metadata import version; print(version({dist!r}))"
    done = run([str(python), "-c", code], capture_output=True)
    return done.stdout.strip() or "?"


def check(
    bridge: Bridge,
    cache: Path,
    examples: int,
    out: Path,
    properties: tuple[str, ...] = (),
    reuse: bool = False,
    together: bool = False,
) -> dict[str, dict[str, object]]:
    """Run the contract for one bridge (or with `reuse`, read the report of an earlier run); its verdicts by column
    label, each with its seconds and examples. `properties`: these only (default every one). `together`: other
    bridges run at the same time, so the run's output is printed in one block when it ends."""
    if reuse:  # the bridge's environment as the earlier run left it, for its version
        python = cache / bridge.key / "bin" / "python" if bridge.kind == "extra" else Path(sys.executable)
        driver = None
    else:
        python, driver = prepare(bridge, cache)
    target = ["--driver", driver] if driver else list(bridge.specs)
    report = out / f"{bridge.key}.json"
    started = time.perf_counter()
    # The handshake era, which every bridge here speaks, and 2026-07-28 for those that speak it; `check` keys each
    # verdict `P1@handshake` or `P1@stateless`.
    era = ",".join(bridge.eras)
    options = ["--transport", "socket", "--era", era, "--examples", str(examples), "--json", str(report)]
    for pid in properties:
        options += ["--property", pid]
    if not reuse:
        done = run(
            [str(python), "-m", "mcp_testkit", "check", *target, *options],
            cwd=ROOT,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=together,
        )
        block = f"{done.stdout or ''}{done.stderr or ''}" if together else ""
        print(f"{block}::: {bridge.key}: {time.perf_counter() - started:.1f} s", flush=True)
    verdicts = by_era(json.loads(report.read_text()))
    if bridge.dist and bridge.kind != "toolkit":
        suffix = f"@{version_of(python, bridge.dist)}"
        verdicts = {_versioned(label, suffix): value for label, value in verdicts.items()}
    elif bridge.kind == "toolkit":
        suffix = f" (mcp {version_of(python, 'mcp')})"
        verdicts = {_versioned(label, suffix): value for label, value in verdicts.items()}
    for label, value in verdicts.items():  # published: no paths of this machine
        value["spec"] = str(value["spec"]).replace(f"{ROOT}/", "").replace(str(cache), "$CACHE")
        print(f"::: {label}: the referee found {referee_cell(value)}", flush=True)
    return verdicts


def referee_cell(column: dict[str, object]) -> str:
    """What the referee found in a column's traffic (docs/referee.md), over all its cells: `none`, the rules broken
    with how many messages broke each (`version-header 212, schema 3`), or `not judged` for cells published before
    the contract reported it; where only some cells were judged, which (`none, in P19 only`): nothing is said of the
    traffic of the others."""
    cells = column["properties"]  # type: ignore[index]
    judged = {pid: cell["violations"] for pid, cell in cells.items() if "violations" in cell}  # type: ignore[attr-defined]
    if not judged:
        return "not judged"
    counts: dict[str, int] = {}
    for found in judged.values():
        for rule, count in found.items():
            counts[rule] = counts.get(rule, 0) + count
    said = ", ".join(f"{rule} {counts[rule]}" for rule in sorted(counts, key=lambda rule: -counts[rule])) or "none"
    if len(judged) < len(cells):
        said += f", in {', '.join(sorted(judged, key=property_order))} only"
    return said


def by_era(report: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    """`check --json`'s verdicts (cells keyed `P1@handshake`, `P1@stateless`) as one column per bridge and era: the
    stateless era's named with STATELESS_COLUMN. Only verdicts: a cell n/a in its era (P5s in the handshake era, P5
    in the stateless one, P8/P9 without the capability) is left out and reads as n/a; a column in which the bridge
    fell back to the handshake era in every cell (the SDK client in legacy mode) is left out, and said so."""
    columns: dict[str, dict[str, object]] = {}
    for label, value in report.items():
        for era, suffix in (("handshake", ""), ("stateless", STATELESS_COLUMN)):
            cells = {
                key.removesuffix(f"@{era}"): cell
                for key, cell in value["properties"].items()  # type: ignore[attr-defined]
                if key.endswith(f"@{era}") and cell["status"] != "not_applicable"
            }
            if not cells:
                continue
            if all(cell["status"] == "fell_back" for cell in cells.values()):
                print(f"::: {label}: fell back to the handshake era in the {era} era: no column", flush=True)
                continue
            columns[f"{label}{suffix}"] = {**value, "properties": cells}
    return columns


def _versioned(label: str, suffix: str) -> str:
    """`label` with the version `suffix` after the bridge's name, before the era mark of a stateless column."""
    if label.endswith(STATELESS_COLUMN):
        return f"{label.removesuffix(STATELESS_COLUMN)}{suffix}{STATELESS_COLUMN}"
    return f"{label}{suffix}"


def era_of(label: str) -> str:
    """The era a column was checked in, as the matrix shows it."""
    return "2026-07-28" if label.endswith(STATELESS_COLUMN) else "handshake"


def headline(counterexample: str) -> str:
    """What went wrong, in the counterexample's words: its first line after the example's inputs."""
    lines = counterexample.splitlines()
    said = lines[lines.index(")") + 1] if ")" in lines[:-1] else (lines[0] if lines else "")
    said = said.strip()
    return said[:1].upper() + said[1:]


def column(label: str) -> str:
    """The column without its version (`@1.2`, or ` (mcp 2.3.0)` for the toolkit's): what the expected-verdict
    file keys on. A column's own words in parentheses stay: `sdk-client (auto)` and `sdk-client (legacy)`; so does
    the era mark of a stateless column (`fastmcp [2026-07-28]`)."""
    era = STATELESS_COLUMN if label.endswith(STATELESS_COLUMN) else ""
    name = re.sub(r" \(mcp [^)]*\)$", "", label.removesuffix(STATELESS_COLUMN))
    return (name.rsplit("@", 1)[0] if "@" in name[1:] else name) + era


def owner(spec: str) -> int | None:
    """The index in BRIDGES of the bridge whose run gave a column, from the column's spec."""
    for index, bridge in enumerate(BRIDGES):
        if spec in bridge.specs or (bridge.driver and bridge.driver in spec):
            return index
    return None


def merged(
    fresh: dict[str, dict[str, object]], path: Path, properties: tuple[str, ...] = ()
) -> dict[str, dict[str, object]]:
    """The published verdicts of `path` with the cells run now in place of theirs, in the order of BRIDGES.

    Without `properties` (every property run), the bridges run now replace all their published columns. With
    `properties` (the run checked these only), only those cells are replaced: a column run now keeps its published
    cells of the other properties, and so does a published column of a bridge run now that the run left out (each
    cell run now is n/a in it, e.g. P14 of a bridge without a tool cache); a published column at another version of
    a bridge than the one run now (`fastmcp@4.2.3` when 4.3.0 ran) is another release's verdicts and stays whole."""
    published: dict[str, dict[str, object]] = json.loads(path.read_text()) if path.exists() else {}
    rerun = {owner(str(value["spec"])) for value in fresh.values()}
    fresh_columns = {column(label) for label in fresh}
    kept: dict[str, dict[str, object]] = {}
    for label, value in published.items():
        if owner(str(value["spec"])) not in rerun:
            kept[label] = value
        elif properties and label not in fresh:
            if column(label) in fresh_columns:  # the bridge ran now at another version
                kept[label] = value
            elif others := _other_cells(value, properties):
                kept[label] = {**value, "properties": others}
    if properties:
        fresh = {
            label: {**value, "properties": {**_other_cells(published.get(label), properties), **value["properties"]}}  # type: ignore[dict-item]
            for label, value in fresh.items()
        }
    every = {**kept, **fresh}

    def place(label: str) -> tuple[int, int, bool]:
        spec = str(every[label]["spec"])
        index = owner(spec)
        specs = BRIDGES[index].specs if index is not None else ()
        # A spec's handshake column before its stateless one, whichever of them the run kept or ran.
        at = (len(BRIDGES) if index is None else index, specs.index(spec) if spec in specs else 0)
        return (*at, label.endswith(STATELESS_COLUMN))

    return {label: every[label] for label in sorted(every, key=place)}


def _other_cells(column: dict[str, object] | None, properties: tuple[str, ...]) -> dict[str, object]:
    """A published column's cells of the properties not in `properties`, in property order."""
    cells: dict[str, object] = dict(column["properties"]) if column else {}  # type: ignore[call-overload]
    return {pid: cell for pid, cell in cells.items() if pid not in properties}


def changed_cells(before: dict[str, dict[str, object]], after: dict[str, dict[str, object]]) -> list[str]:
    """What a merge did to the published cells: a line per cell replaced, added or removed (a cell the run found
    n/a), then the count of the cells left as they were."""

    def cells(verdicts: dict[str, dict[str, object]]) -> dict[tuple[str, str], dict[str, object]]:
        return {
            (label, pid): cell
            for label, value in verdicts.items()
            for pid, cell in value["properties"].items()  # type: ignore[attr-defined]
        }

    old, new = cells(before), cells(after)
    lines, kept = [], 0
    for key in sorted(old.keys() | new.keys(), key=lambda key: (key[0], property_order(key[1]))):
        label, pid = key
        if key not in new:
            lines.append(f"removed {label} {pid} (was {old[key]['status']}, n/a now)")
        elif key not in old:
            lines.append(f"added {label} {pid}: {new[key]['status']}")
        elif new[key] != old[key]:
            lines.append(f"replaced {label} {pid}: {old[key]['status']} -> {new[key]['status']}")
        else:
            kept += 1
    return [*lines, f"kept {kept} published cells as they were"]


def property_order(pid: str) -> tuple[int, str]:
    """P1, P2, ..., P5, P5s, ..., P10: by number, then suffix (a plain sort puts P10 before P2)."""
    digits = re.match(r"P(\d+)(.*)", pid)
    return (int(digits.group(1)), digits.group(2)) if digits else (1 << 30, pid)


def published_text(path: Path) -> tuple[int | None, str | None]:
    """A published matrix.md's example count and its Changes section, as reviewed (perhaps edited by hand): what a
    partial run keeps, since it ran only some cells and has no word on the others' changes."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    count = re.search(r"at (\d+) examples per property", text)
    changes = re.search(r"\n## Changes\n\n(.*?)\n\n## ", text, re.DOTALL)
    return (int(count.group(1)) if count else None, changes.group(1) if changes else None)


def markdown_mark(marks: dict[str, str], cell: dict[str, object]) -> str:
    """A cell as docs/matrix.md shows it: its status's mark, with the declaration a pass rests on (P19's per-call
    sessions: `holds (per-call sessions declared)`)."""
    mark = marks[str(cell["status"])]
    return f"{mark} ({cell['held_as']})" if cell["status"] == "passed" and cell.get("held_as") else mark


def write_markdown(verdicts: dict[str, dict[str, object]], examples: int, path: Path, changes: str = CHANGES) -> None:
    labels = list(verdicts)
    mark = {
        "passed": "holds",
        "failed": "**FAILS**",
        "error": "ERROR",
        "not_applicable": "n/a",
        "fell_back": "fell back",
        "hung": "**HANGS**",
        "blocked": "blocked",
        "not_run": "blocked",  # a cell published before P0 (issue 36): the same block, under its old name
    }
    lines = [
        "# The guarantee matrix",
        "",
        f"The resilience contract ([the contract](contract.md)) at {examples} examples per property, over",
        "127.0.0.1, against each bridge as its adapter or driver runs it. Regenerate with",
        "`python scripts/matrix.py`; CI checks the bridges installable alongside the toolkit and the",
        "TypeScript driver against `.ci/matrix-expected.json`. Each adapter's module docstring (or each",
        "driver's header) says how the bridge is driven: its session model, its retries, how its errors map.",
        "Each verdict was also checked by hand once, with a one-fault probe: [the matrix, checked by",
        "hand](matrix-probes.md) (`python scripts/probe_matrix.py`).",
        "P0 (the bridge connects to a valid server of unusual but legal tools) comes first: a bridge that fails it",
        "in an era is **blocked** there for every other property (not checked: no verdict, never held).",
        "P8, P9, P14 and P15 apply only to a bridge whose adapter declares approvals, a tool cache or OAuth: n/a",
        "elsewhere. P10",
        "and P13 apply unless the contract structurally cannot abandon or overlap the bridge's calls (a bridge run",
        "by a driver, whose protocol carries one request at a time; or, for P13, a session per call). P11 and P12",
        "judge the waits and size limit each adapter and driver declares from its bridge's source",
        "([adapters](adapters.md)), and where none is declared the contract's defaults: never n/a.",
        "The whole matrix can also be browsed as [one page](matrix.html), each cell opening its counterexample.",
        "Each column is checked in one protocol era, shown in the `era` row: the handshake era against a server",
        "from before 2026-07-28, and, for the bridges that speak 2026-07-28 (the SDK client in auto mode, fastmcp,",
        "pydantic-ai, openai-agents, langchain.mcp), the stateless era (columns marked",
        f"`{STATELESS_COLUMN.strip()}`) against a server of both eras.",
        "P5 has no meaning in the stateless era and P5s none in the handshake era: n/a there; P18 (era negotiation)",
        "is judged in the stateless columns only, a bridge of 2026-07-28 meeting older servers, and P19 (session",
        "affinity) in the handshake columns only, 2026-07-28 having no sessions. The SDK client in",
        "legacy mode never speaks 2026-07-28 (it falls back), so it has no stateless column.",
        "The `referee` row is what [the referee](referee.md) found in each column's traffic over all its examples: the",
        "rules the bridge's messages broke and how many messages broke each, beside the verdicts and never part of",
        "them (`not judged`: cells published before the contract reported it; `in P19 only`: only those cells of",
        "the column were run since, and the others' traffic was not judged).",
        "",
        "| property | " + " | ".join(f"`{label}`" for label in labels) + " |",
        "| --- | " + " | ".join("---" for _ in labels) + " |",
        "| era | " + " | ".join(era_of(label) for label in labels) + " |",
    ]
    properties = sorted({pid for result in verdicts.values() for pid in result["properties"]}, key=property_order)  # type: ignore[attr-defined]
    for pid in properties:
        cells = [
            markdown_mark(mark, verdicts[label]["properties"].get(pid, {"status": "not_applicable"}))  # type: ignore[attr-defined]
            for label in labels
        ]
        lines.append(f"| {pid} | " + " | ".join(cells) + " |")
    lines.append("| referee | " + " | ".join(referee_cell(verdicts[label]) for label in labels) + " |")
    lines += ["", "## Changes", "", *changes.strip().splitlines()]
    lines += ["", "## Run time", "", "| bridge | seconds | examples | examples per second |"]
    lines.append("| --- | --- | --- | --- |")
    for label in labels:
        props = verdicts[label]["properties"].values()  # type: ignore[attr-defined]
        seconds = sum(p["seconds"] for p in props)
        count = sum(p["examples"] for p in props)
        lines.append(f"| `{label}` | {seconds:.1f} | {count} | {count / seconds if seconds else 0:.1f} |")
    notes = [(label, NOTES[column(label)]) for label in labels if column(label) in NOTES]
    if notes:
        lines += ["", "## Notes on the bridges", ""]
        for label, note in notes:
            lines += [f"**`{label}`**. {note}", ""]
        lines.pop()
    lines += ["", "## The failures, shrunk", ""]
    for label in labels:
        cells = verdicts[label]["properties"]  # by property, whatever order a merge or JSON left them in
        for pid, result in sorted(cells.items(), key=lambda item: property_order(item[0])):  # type: ignore[attr-defined]
            if result["status"] in ("passed", "blocked", "not_run"):  # a blocked cell: P0's counterexample, under P0
                continue
            lines += [f"### `{label}`: {pid} {mark[result['status']].strip('*').lower()}", ""]
            if result["status"] == "failed":
                lines += [f"{headline(result['counterexample'] or '')}. For an application: {MEANING[pid]}", ""]
            elif result["status"] == "hung":
                lines += [f"{headline(result['counterexample'] or '')}.", ""]

            else:
                lines += ["The adapter or driver raised: no verdict on the bridge.", ""]
            lines += ["```text", *(result["counterexample"] or "").splitlines()[:40], "```", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def compare(verdicts: dict[str, dict[str, object]], expected_path: Path) -> list[str]:
    """Each cell that differs from the expected-verdict file, said as a line."""
    expected = json.loads(expected_path.read_text())
    wrong = []
    for label, result in verdicts.items():
        want = expected.get(column(label)) if not column(label).startswith("_") else None
        if want is None:
            wrong.append(f"{label}: no expected verdicts in {expected_path.name}")
            continue
        for pid, cell in result["properties"].items():  # type: ignore[attr-defined]
            if cell["status"] != want.get(pid):
                wrong.append(f"{label} {pid}: {cell['status']}, expected {want.get(pid)}")
    return wrong


def parser() -> argparse.ArgumentParser:
    """The command line (the docs' CI example names only options it has: a test checks)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument(
        "--only",
        action="append",
        choices=[b.key for b in BRIDGES],
        help="run one bridge (repeatable); its columns replace theirs in docs/matrix.md, the others stay",
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "mcp-testkit-matrix")
    parser.add_argument("--check", type=Path, metavar="EXPECTED.json", help="assert each cell against this file")
    parser.add_argument("--ci", action="store_true", help="the CI bridges, 10 examples, --check the expected file")
    parser.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="run N bridges at a time (default 1; each prints when it ends)"
    )
    parser.add_argument("--no-write", action="store_true", help="do not write docs/matrix.md")
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write the matrix as a page (docs/matrix.html)")
    parser.add_argument(
        "--property",
        action="append",
        dest="properties",
        default=[],
        metavar="P10",
        help="only this property (repeatable); its cells replace theirs in docs/matrix.json, the others stay",
    )
    parser.add_argument(
        "--reuse", action="store_true", help="run nothing: read each chosen bridge's report of an earlier run"
    )
    parser.add_argument(
        "--docs",
        type=Path,
        default=ROOT / "docs",
        metavar="DIR",
        help="the folder whose matrix.md and matrix.json are read and written (default: this repository's docs/)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        metavar="SHARD.json",
        help="a shard: write the chosen bridges' cells, the toolkit's version and the run's settings to this file "
        "and nothing else (one job per bridge; --merge publishes them)",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="SHARD.json",
        help="run nothing: merge these shards (--json) and write docs/matrix.md, matrix.json and --html as one run "
        "of their bridges would; shards of another toolkit version or other settings are refused",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.merge:
        try:
            run_now = merge_shards(args.merge)
        except ShardError as error:
            print(f"matrix.py --merge: {error}", file=sys.stderr)
            return 2
        return publish(args, run_now)
    properties = tuple(args.properties)
    chosen = [b for b in BRIDGES if (b.in_ci if args.ci else (not args.only or b.key in args.only))]
    examples = 10 if args.ci else args.examples
    out = args.cache / "reports"
    out.mkdir(parents=True, exist_ok=True)
    by_bridge: dict[str, dict[str, dict[str, object]]] = {}
    jobs = max(1, min(args.jobs, len(chosen)))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        # The bridges' runs mostly wait on their declared timeouts over the socket: side by side they share the
        # cores well. Their verdicts are merged in the table's order, whichever ends first.
        runs = [
            pool.submit(check, bridge, args.cache, examples, out, properties, args.reuse, jobs > 1) for bridge in chosen
        ]
        for bridge, done in zip(chosen, runs, strict=True):
            by_bridge[bridge.key] = done.result()
    run_now = Run(by_bridge, examples, properties, ci=args.ci, partial=bool(args.only or properties))
    if args.json is not None:
        write_shard(args.json, run_now)
        print(f"::: shard of {', '.join(by_bridge)} written to {args.json}")
        print_cells(run_now.verdicts)
        return 0
    return publish(args, run_now)


@dataclass(frozen=True)
class Run:
    """The columns of a run by bridge key (in the order of BRIDGES) and the settings they were run with."""

    by_bridge: dict[str, dict[str, dict[str, object]]]
    examples: int
    properties: tuple[str, ...] = ()
    ci: bool = False
    """The CI run's bridges and example count (--ci): the expected file checks it, nothing is written."""
    partial: bool = False
    """Whether the run chose bridges or properties (--only, --property): its cells are merged into the published
    ones instead of replacing them."""

    @property
    def verdicts(self) -> dict[str, dict[str, object]]:
        return {label: value for columns in self.by_bridge.values() for label, value in columns.items()}


def publish(args: argparse.Namespace, run_now: Run) -> int:
    """Write docs/matrix.md and matrix.json (and the --html page) from a run's cells, print them, and check them
    against the expected file: what a run does after its bridges, and what a merge of its shards does."""
    verdicts, examples, properties = run_now.verdicts, run_now.examples, run_now.properties
    expected = EXPECTED if run_now.ci else args.check
    published = args.docs / "matrix.json"
    write = not (run_now.ci or args.no_write)
    # A partial run (some bridges, some properties) merges its cells into the published ones and says which it
    # replaced: it never drops the others.
    whole = verdicts
    if run_now.partial and (write or args.html):
        whole = merged(verdicts, published, properties)
        before = json.loads(published.read_text()) if published.exists() else {}
        for line in changed_cells(before, whole):
            print(f"::: {'merged into' if write else 'merged for the page (not written):'} {published}: {line}")
    if write:
        count, changes = published_text(args.docs / "matrix.md") if whole is not verdicts else (None, None)
        if count is not None and count != examples:
            print(f"::: the cells run now ran {examples} examples; the page still says {count}, as most did")
        write_markdown(whole, count or examples, args.docs / "matrix.md", changes or CHANGES)
        published.write_text(json.dumps(whole, indent=2, sort_keys=True) + "\n")
    if args.html:
        from mcp_testkit.contract._cli._matrix_html import write_matrix_page

        write_matrix_page(args.html, whole)
    print_cells(verdicts)
    if expected is not None:
        wrong = compare(verdicts, expected)
        for line in wrong:
            print(f"UNEXPECTED {line}")
        cells = sum(len(r["properties"]) for r in verdicts.values())  # type: ignore[arg-type]
        print(f"matrix: {cells - len(wrong)} passed, {len(wrong)} failed")
        return 1 if wrong else 0
    return 0


def print_cells(verdicts: dict[str, dict[str, object]]) -> None:
    for label, result in verdicts.items():
        properties = result["properties"].items()  # type: ignore[attr-defined]
        cells = " ".join(f"{pid}={cell['status']}" for pid, cell in properties)
        print(f"{label}: {cells}")


SHARD_FORMAT = 1


class ShardError(Exception):
    """A shard that cannot be merged with the others, said in one line."""


def toolkit_version() -> dict[str, str]:
    """The toolkit a shard was run with: its version, and the commit of this checkout when it is one."""
    from mcp_testkit import __version__

    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    commit = done.stdout.strip() if done.returncode == 0 else ""
    return {"version": __version__, **({"commit": commit} if commit else {})}


def write_shard(path: Path, run_now: Run) -> None:
    """One job's part of the matrix: its bridges' columns, the toolkit's version and the settings they ran with."""
    shard = {
        "format": SHARD_FORMAT,
        "toolkit": toolkit_version(),
        "settings": {"examples": run_now.examples, "properties": list(run_now.properties), "ci": run_now.ci},
        "bridges": run_now.by_bridge,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(shard, indent=2, sort_keys=True) + "\n")


def read_shard(path: Path) -> dict[str, object]:
    try:
        shard = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise ShardError(f"cannot read shard {path}: {error}") from None
    if not isinstance(shard, dict) or shard.get("format") != SHARD_FORMAT or not isinstance(shard.get("bridges"), dict):
        raise ShardError(f"{path} is not a shard of this script (write one with --only BRIDGE --json {path.name})")
    return shard


def merge_shards(paths: list[Path]) -> Run:
    """The run the shards are parts of: every shard of one toolkit (version and commit) and one set of settings,
    each bridge in one shard only; its columns in the order of BRIDGES, as one run of those bridges gives them."""
    first, shards = paths[0], [read_shard(path) for path in paths]
    by_bridge: dict[str, dict[str, dict[str, object]]] = {}
    found_in: dict[str, Path] = {}
    for path, shard in zip(paths, shards, strict=True):
        for key, what in (("toolkit", "toolkit"), ("settings", "settings")):
            if shard[key] != shards[0][key]:
                raise ShardError(
                    f"{path} was run with {what} {_said(shard[key])}, but {first} with {_said(shards[0][key])}: "  # type: ignore[arg-type]
                    "merge only shards of one run (one commit, one --examples and --property)"
                )
        for key, columns in shard["bridges"].items():  # type: ignore[attr-defined]
            if key in found_in:
                raise ShardError(f"bridge {key!r} is in two shards, {found_in[key]} and {path}: give each bridge once")
            if key not in {b.key for b in BRIDGES}:
                raise ShardError(f"{path} has bridge {key!r}, which this script does not know")
            found_in[key], by_bridge[key] = path, columns
    settings: dict[str, Any] = shards[0]["settings"]  # type: ignore[assignment]
    order = [b.key for b in BRIDGES]
    every = {b.key for b in BRIDGES if b.in_ci or not settings["ci"]}
    properties = tuple(settings["properties"])
    return Run(
        {key: by_bridge[key] for key in sorted(by_bridge, key=order.index)},
        int(settings["examples"]),
        properties,
        ci=bool(settings["ci"]),
        partial=bool(properties) or set(by_bridge) != every,  # as --only of these bridges, unless they are all
    )


def _said(value: dict[str, Any]) -> str:
    """A shard's toolkit or settings as the refusal says them: `version 0.9.0, commit 1a2b3c4d5e6f` or
    `--examples 10, every property` (with `--ci` when it was the CI run)."""
    if "version" in value:
        return ", ".join(
            [f"version {value['version']}", *([f"commit {value['commit'][:12]}"] if "commit" in value else [])]
        )
    chosen = " ".join(f"--property {pid}" for pid in value.get("properties", ())) or "every property"
    return ", ".join([f"--examples {value.get('examples')}", chosen, *(["--ci"] if value.get("ci") else [])])


if __name__ == "__main__":
    sys.exit(main())
