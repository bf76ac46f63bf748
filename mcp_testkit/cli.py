"""The `mcp-testkit` command: `serve` runs a scripted MCP server (HTTP or stdio) until stopped;
`check` runs the resilience contract against bridges; `diff` runs one example through several bridges; `client` is
the reference bridge as a client; `record` and `verify` make and check cassettes; `proxy` puts faults in front of a
live server.

The composition root: each command lives in its package (`standalone/_cli.py`, `contract/_cli/`,
`bridge/_cli.py`, `cassettes/_cli.py`, `proxy/_cli.py`); this module assembles their parsers and dispatches.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with every mistake on one line of stderr: the command, the problem (and what was probably meant),
    and where its usage is; exit 2. A usage of twenty options is a screenful, so it is named, not printed."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}{self._did_you_mean(message)}; see '{self.prog} --help'\n")

    def _did_you_mean(self, message: str) -> str:
        choice = re.search(r"invalid choice: '([^']*)' \(choose from ([^)]*)\)", message)
        if choice is not None:
            offered = [name.strip().strip("'") for name in choice[2].split(",")]  # quoted or not, by Python version
            close = difflib.get_close_matches(choice[1], offered, n=1)
            return f" (did you mean {close[0]!r}?)" if close else ""
        unknown = re.match(r"unrecognized arguments: (\S+)", message)
        if unknown is None or not unknown[1].startswith("--"):
            return ""
        options = [option for action in self._actions for option in action.option_strings]
        close = difflib.get_close_matches(unknown[1].partition("=")[0], options, n=1)
        return f" (did you mean {close[0]}?)" if close else ""


def _overview(parser: argparse.ArgumentParser, commands: dict[str, _Parser]) -> str:
    """What a bare `mcp-testkit` prints: each command with its one-line help, and where to read more."""
    helps = {
        action.dest: action.help or ""
        for group in parser._subparsers._group_actions  # type: ignore[union-attr]
        for action in getattr(group, "_choices_actions", [])
    }
    width = max(map(len, commands)) + 2
    lines = [f"{parser.prog}: {parser.description}", "", "commands:"]
    lines += [f"  {name.ljust(width)}{helps.get(name, '')}" for name in commands]
    prog = parser.prog
    lines += ["", f"Run '{prog} COMMAND --help' for a command's options; '{prog} --version' for the version."]
    return "\n".join(lines) + "\n"


def _version() -> str:
    from mcp_testkit._version import __version__

    return __version__


def _parser(only: str | None = None) -> tuple[_Parser, dict[str, _Parser]]:
    """The top-level parser, and the parser of each subcommand by name: of ``only`` if it names a command, else of
    every command."""
    parser = _Parser(prog="mcp-testkit", description="Test MCP client bridges.")
    parser.add_argument("--version", action="version", version=f"mcp-testkit {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    adders = [_ADDERS[only]] if only in _ADDERS else list(dict.fromkeys(_ADDERS.values()))
    for add in adders:
        add(commands)
    return parser, commands.choices


def _add_serve(commands: Any) -> None:
    from mcp_testkit.cassettes import _cli as cassettes
    from mcp_testkit.standalone import _cli as serve

    cassettes.add_serve_options(serve.add_parser(commands))


def _add_check(commands: Any) -> None:
    from mcp_testkit.contract import _cli as check

    check.add_parser(commands)


def _add_diff(commands: Any) -> None:
    from mcp_testkit.contract._cli import _diff

    _diff.add_parser(commands)


def _add_cassettes(commands: Any) -> None:
    from mcp_testkit.cassettes import _cli as cassettes

    cassettes.add_parsers(commands)


def _add_proxy(commands: Any) -> None:
    from mcp_testkit.proxy import _cli as proxy

    proxy.add_parser(commands)


def _add_client(commands: Any) -> None:
    from mcp_testkit.bridge import _cli as client

    client.add_parser(commands)


_ADDERS: dict[str, Callable[[Any], None]] = {
    "serve": _add_serve,
    "check": _add_check,
    "diff": _add_diff,
    "record": _add_cassettes,
    "verify": _add_cassettes,
    "proxy": _add_proxy,
    "client": _add_client,
}
"""Each command and what adds its parser, in the order the overview lists them. A command line that names its
command imports that command's package only: `serve --stdio` as a bridge's command server starts in a fraction of
the time the whole toolkit (the contract, Hypothesis, pytest) takes to import, which a bridge's handshake timeout
counts."""


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line, parsed; an unknown argument is reported by its subcommand, with that usage."""
    given = list(sys.argv[1:] if argv is None else argv)
    parser, commands = _parser(only=given[0] if given else None)
    if not given:
        sys.stdout.write(_overview(parser, commands))
        raise SystemExit(0)
    args, extras = parser.parse_known_args(argv)
    if extras:
        commands[args.command].error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    if args.command == "serve":
        from mcp_testkit.standalone import _cli as serve

        return serve.run(args)
    if args.command == "check":
        from mcp_testkit.contract import _cli as check

        return check.run(args)
    if args.command == "diff":
        from mcp_testkit.contract._cli import _diff

        return _diff.run(args)
    if args.command in ("record", "verify"):
        from mcp_testkit.cassettes import _cli as cassettes

        return cassettes.run_record(args) if args.command == "record" else cassettes.run_verify(args)
    if args.command == "proxy":
        from mcp_testkit.proxy import _cli as proxy
        from mcp_testkit.standalone._admin import ProxyAdminApp

        return proxy.run(args, admin_app=ProxyAdminApp)
    if args.command == "client":
        from mcp_testkit.bridge import _cli as client

        return client.run(args)
    return 2  # pragma: no cover - argparse requires a command
