"""`mcp-testkit client URL`: the reference bridge as a command-line MCP client.

It connects one `ToolPool` to the server at URL, prints the tools it loaded, calls the tools named
with `--call`, prints what a model would read, and exits 0 when everything worked, 1 when the bridge
raised (its message printed), 2 for a command line it cannot run.

It also speaks the command contract of the MCP conformance suite's client mode
(`conformance client --command "mcp-testkit client" --scenario NAME`): the suite appends the URL of
its scenario server and names the scenario in `MCP_CONFORMANCE_SCENARIO`; without `--call`, the
client then makes the calls that scenario expects, and in an auth scenario authorizes with OAuth
(`--oauth`, consenting without a browser) with the client the suite's `MCP_CONFORMANCE_CONTEXT` names.
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
    # Each auth scenario's server offers `test-tool`; a call is what meets a step-up's 403.
    **{
        f"auth/{name}": [("test-tool", {})]
        for name in (
            "metadata-default metadata-var1 metadata-var2 metadata-var3 basic-cimd scope-from-www-authenticate "
            "scope-from-scopes-supported scope-omitted-when-undefined scope-step-up scope-retry-limit "
            "token-endpoint-auth-basic token-endpoint-auth-post token-endpoint-auth-none pre-registration "
            "2025-03-26-oauth-metadata-backcompat 2025-03-26-oauth-endpoint-fallback resource-mismatch "
            "offline-access-scope offline-access-not-supported client-credentials-basic"
        ).split()
    },
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
            "--call, it makes the calls of that scenario (initialize, tools_call, sse-retry, and 20 auth/... "
            "scenarios, with --oauth)."
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
    oauth = client.add_argument_group(
        "OAuth",
        "authorize with OAuth 2.1 (docs/bridge.md#oauth), consenting without a browser: the client fetches the "
        "authorization URL and takes the code from its redirect, which only an authorization server that consents "
        "by itself gives (a test one: mcp_testkit.auth, the conformance suite's)",
    )
    oauth.add_argument("--oauth", action="store_true", help="authorize with OAuth when the server asks (a 401)")
    oauth.add_argument("--client-id", metavar="ID", help="a pre-registered client's id (no dynamic registration)")
    oauth.add_argument(
        "--client-secret-env", metavar="VAR", help="the environment variable holding that client's secret"
    )
    oauth.add_argument("--client-metadata-url", metavar="URL", help="a client ID metadata document's https URL")
    oauth.add_argument(
        "--grant",
        choices=["authorization_code", "client_credentials"],
        default="authorization_code",
        help="the grant (default authorization_code; client_credentials needs --client-id and --client-secret-env)",
    )
    oauth.add_argument("--scope", help="the scopes asked first (default: what the server's challenge names)")
    oauth.add_argument("--issuer", metavar="URL", help="with client_credentials: the authorization server's issuer")


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

    environ = dict(os.environ)
    try:
        plan = _plan(args)
        _conformance_oauth(args, environ)
        auth = _oauth(args)
        config = ServerConfig(name=SERVER_NAME, url=args.url, era=args.era, timeout_s=args.timeout, auth=auth)
    except (TypeError, ValueError) as exc:
        print(f"mcp-testkit client: {exc}", file=err)
        return 2

    async def main() -> int:
        from mcp_testkit.bridge import ToolPool

        async with ToolPool([config], cache=False, environ=environ) as pool:
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


def _oauth(args: argparse.Namespace) -> Any:
    """The `OAuth` of the command line's options, consenting without a browser; None without --oauth."""
    if not args.oauth:
        return None
    from mcp_testkit._wire.browserless import Browserless
    from mcp_testkit.bridge import OAuth

    browser = Browserless()
    return OAuth(
        redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler,
        grant=args.grant,
        client_id=args.client_id,
        client_secret_env=args.client_secret_env,
        client_metadata_url=args.client_metadata_url,
        issuer=args.issuer,
        scope=args.scope,
    )


CONFORMANCE_CONTEXT = "MCP_CONFORMANCE_CONTEXT"
CONFORMANCE_SECRET = "MCP_CONFORMANCE_CLIENT_SECRET"
CONFORMANCE_CIMD = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document URL the suite's auth/basic-cimd scenario expects a client to use."""


def _conformance_oauth(args: argparse.Namespace, environ: dict[str, str]) -> None:
    """In the conformance suite's client mode, an auth scenario: OAuth on, with the client its context names
    (`MCP_CONFORMANCE_CONTEXT`: a pre-registered client id and secret), the secret passed in `environ`."""
    scenario = os.environ.get(SCENARIO_VARIABLE, "")
    if args.call or not scenario.startswith("auth/"):
        return
    args.oauth = True
    context = loads(os.environ.get(CONFORMANCE_CONTEXT, "{}").encode(), "value")
    if not isinstance(context, dict):
        raise ValueError(f"{CONFORMANCE_CONTEXT} must hold a JSON object")
    if "client_id" in context and args.client_id is None:
        args.client_id = str(context["client_id"])
        if context.get("client_secret"):
            environ[CONFORMANCE_SECRET] = str(context["client_secret"])
            args.client_secret_env = CONFORMANCE_SECRET
    if scenario.startswith("auth/client-credentials"):
        args.grant = "client_credentials"
    if scenario == "auth/basic-cimd" and args.client_metadata_url is None:
        args.client_metadata_url = CONFORMANCE_CIMD


def _list(pool: ToolPool, out: TextIO) -> None:
    tools = pool.tools()
    print(f"{len(tools)} tool{'s' * (len(tools) != 1)} ({pool.era(SERVER_NAME)} era)", file=out)
    for tool in tools:
        summary = tool.description.splitlines()[0] if tool.description else ""
        print(f"  {tool.bare_name} [{tool.kind}]" + (f": {summary}" if summary else ""), file=out, flush=True)
