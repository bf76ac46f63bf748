"""`mcp-testkit client URL`: the reference bridge as a command-line MCP client.

It connects one `ToolPool` to the server at URL, prints the tools it loaded, calls the tools named
with `--call`, prints what a model would read, and exits 0 when everything worked, 1 when the bridge
raised (its message printed), 2 for a command line it cannot run.

It also speaks the command contract of the MCP conformance suite's client mode
(`conformance client --command "mcp-testkit client" --scenario NAME`): the suite appends the URL of
its scenario server and names the scenario in `MCP_CONFORMANCE_SCENARIO`; without `--call`, the
client then makes the calls that scenario expects.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from mcp_testkit._wire.strict_json import loads

if TYPE_CHECKING:
    from mcp_testkit.bridge import ToolPool

__all__ = ["CONFORMANCE_SCENARIOS", "add_parser", "run"]

SCENARIO_VARIABLE = "MCP_CONFORMANCE_SCENARIO"
CONFORMANCE_SCENARIOS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "initialize": [],
    "tools_call": [("add_numbers", {"a": 5, "b": 3})],
    "sse-retry": [("test_reconnection", {})],
}
"""The calls each client scenario of the conformance suite expects, after the connect and the listing."""
SERVER_NAME = "server"


def add_parser(commands: Any) -> None:
    """Register `client` on the CLI's subcommands."""
    client = commands.add_parser(
        "client",
        help="connect the reference bridge to an MCP server, list its tools and call some",
        description=(
            "Connects the reference bridge (mcp_testkit.bridge) to the Streamable HTTP server at URL, prints "
            "the tools it loaded and calls those named with --call. Exits 0 when all went well, 1 when the "
            "bridge raised. With MCP_CONFORMANCE_SCENARIO set (the conformance suite's client mode) and no "
            f"--call, it makes the calls of that scenario ({', '.join(CONFORMANCE_SCENARIOS)})."
        ),
    )
    client.add_argument("url", help="the server's MCP endpoint, e.g. http://127.0.0.1:8000/mcp")
    client.add_argument(
        "--call",
        action="append",
        default=[],
        metavar="TOOL",
        help="call this tool (its bare name; repeatable), with --arguments",
    )
    client.add_argument(
        "--arguments", default="{}", metavar="JSON", help="the arguments of every --call, a JSON object (default {})"
    )
    client.add_argument(
        "--era", choices=["auto", "handshake", "stateless"], default="auto", help="the protocol era (default auto)"
    )
    client.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds a call may take (30)")


def _plan(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The calls to make: those of --call, or those of the conformance scenario named in the environment."""
    if args.call:
        try:
            arguments = loads(args.arguments.encode("utf-8", "surrogatepass"), "value")  # no NaN: not JSON
        except ValueError as exc:
            raise ValueError(f"--arguments is not JSON: {exc}") from None
        if not isinstance(arguments, dict):
            raise ValueError(f"--arguments must be a JSON object, not {args.arguments!r}")
        return [(tool, arguments) for tool in args.call]
    scenario = os.environ.get(SCENARIO_VARIABLE)
    if scenario is None:
        return []
    if scenario not in CONFORMANCE_SCENARIOS:
        known = ", ".join(CONFORMANCE_SCENARIOS)
        raise ValueError(f"{SCENARIO_VARIABLE}={scenario!r} is not a scenario this client plays (it plays {known})")
    return CONFORMANCE_SCENARIOS[scenario]


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Connect, list, call; the exit status. Output goes to `out` and `err` (the current stdout and stderr)."""
    import anyio

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err

    from mcp_testkit.bridge import MCPBridgeError, ServerConfig

    try:
        plan = _plan(args)
        config = ServerConfig(name=SERVER_NAME, url=args.url, era=args.era, timeout_s=args.timeout)
    except (TypeError, ValueError) as exc:
        print(f"mcp-testkit client: {exc}", file=err)
        return 2

    async def main() -> int:
        from mcp_testkit.bridge import ToolPool

        async with ToolPool([config], cache=False) as pool:
            _list(pool, out)
            for tool, arguments in plan:
                text = await pool.call(f"{SERVER_NAME}.{tool}", arguments)
                print(f"{tool}: {text}", file=out, flush=True)
        return 0

    try:
        return anyio.run(main)
    except MCPBridgeError as exc:
        print(f"mcp-testkit client: {type(exc).__name__}: {exc}", file=err)
        return 1
    except KeyError as exc:  # a --call of a tool the server does not offer
        print(f"mcp-testkit client: {exc.args[0] if exc.args else exc}", file=err)
        return 1


def _list(pool: ToolPool, out: TextIO) -> None:
    tools = pool.tools()
    print(f"{len(tools)} tool{'s' * (len(tools) != 1)} ({pool.era(SERVER_NAME)} era)", file=out)
    for tool in tools:
        summary = tool.description.splitlines()[0] if tool.description else ""
        print(f"  {tool.bare_name} [{tool.kind}]" + (f": {summary}" if summary else ""), file=out, flush=True)
