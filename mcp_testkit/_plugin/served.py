"""The servers one test used: the check that fails the test on a handler's error, and the journal sections
of its report, with every credential hidden."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from mcp_testkit._plugin.options import ALLOW_KEY, FIRED_KEY, STRICT_KEY, assert_all_fired, referee_of

if TYPE_CHECKING:
    from mcp_testkit.server import TestMcpServer

__all__ = [
    "Served",
    "Used",
    "add_secret",
    "check",
    "journal_text",
    "mark_checked",
    "secrets_of",
    "serve",
    "served_of",
    "used_by",
]


@dataclass(eq=False)
class Served:
    """A server one test used: the title of its journal section, what to send it, what to hide."""

    server: TestMcpServer
    title: str
    path: str
    headers: dict[str, str]
    checked: bool = False


@dataclass(eq=False)
class Used:
    """What the plugin knows about one test's servers and secrets, kept in the item's stash."""

    served: list[Served] = field(default_factory=list)
    secrets: set[str] = field(default_factory=set)
    secret_headers: set[str] = field(default_factory=set)
    journal_on_failure: bool = False


_USED = pytest.StashKey[Used]()


def used_by(item: pytest.Item, *, create: bool = True) -> Used | None:
    """What `item` used so far (made on first use; None if nothing yet and not `create`)."""
    used = item.stash.get(_USED, None)
    if used is None and create:
        used = item.stash[_USED] = Used()
    return used


def _used(item: pytest.Item) -> Used:
    used = used_by(item)
    assert used is not None
    return used


def serve(item: pytest.Item, server: TestMcpServer, title: str, path: str, headers: dict[str, str]) -> Served:
    """Note that `item` uses `server` (its journal section titled `title`) and the credentials it requires."""
    served = Served(server, title, path, headers)
    used = _used(item)
    used.served.append(served)
    for name, value in headers.items():
        used.secrets.add(value)
        used.secret_headers.add(name.lower())
    return served


def served_of(item: pytest.Item, server: TestMcpServer) -> Served:
    """How `item` uses `server`; LookupError for a server no fixture of ours handed out."""
    for served in _used(item).served:
        if served.server is server:
            return served
    raise LookupError(f"server {server.name!r} was not handed out by mcp-testkit's fixtures")


def add_secret(item: pytest.Item, header: str, secret: str) -> None:
    """Hide `secret`, and any value of `header`, in `item`'s reports."""
    used = _used(item)
    used.secrets.add(secret)
    used.secret_headers.add(header.lower())


def mark_checked(item: pytest.Item) -> None:
    """Check none of `item`'s servers at teardown: the test failed already, its report lists their errors."""
    used = used_by(item, create=False)
    for served in used.served if used is not None else ():
        served.checked = True


def check(item: pytest.Item, served: list[Served]) -> None:
    """Raise the first handler error of these servers (the rest are in the journal section), then, unless the
    test's marker or the ini keys relax them, fail on the referee's violations (the client broke MCP's rules)
    and on a scripted fault that never fired: such a test proved nothing."""
    __tracebackhide__ = True
    for one in served:
        one.checked = True
    for one in served:
        try:
            one.server.check()
        except AssertionError as exc:
            # The cause (the handler's own traceback) is what the reader needs, not check()'s frame.
            raise exc.with_traceback(None) from exc.__cause__
    _check_conformant(item, served)
    if not served or not assert_all_fired(item):
        return
    for one in served:
        try:
            one.server.check(unused_faults=True)
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}\nThe test never reached what its faults script, so it proved nothing; if a fault may "
                f"stay unfired, mark the test @pytest.mark.mcp_server({FIRED_KEY}=False)."
            ) from None


def _check_conformant(item: pytest.Item, served: list[Served]) -> None:
    """Fail the test if a client broke a referee rule the test does not allow, naming how to allow it."""
    __tracebackhide__ = True
    referee = referee_of(item)
    if not referee.strict:
        return
    for one in served:
        try:
            one.server.journal.assert_conformant(allow=referee.allow)
        except AssertionError as exc:
            rules = sorted({v.rule for v in one.server.journal.violations} - referee.allow)
            relax = f"{ALLOW_KEY}={rules!r}"
            raise AssertionError(
                f"{one.title}: {exc}\nIf the test's client may break these rules, mark the test "
                f"@pytest.mark.mcp_server({relax}) (or {STRICT_KEY}=False for every rule)."
            ) from None


def journal_text(served: Served, used: Used, limit: int) -> str:
    """The server, then one line a request (at most `limit`), then handler errors; credentials hidden."""
    server = served.server
    journal = server.journal
    where = server.url if server.started else f"in-process at {served.path}"
    lines = [f"server {server.name!r} {where}: {len(journal)} request{'s' * (len(journal) != 1)}"]
    lines.append(journal.format(limit=limit))
    if journal.auth:  # a protected server: its exchanges with the authorization server, redacted at the source
        lines.append(journal.auth.format())
    broken = journal.violations
    if broken:  # what the client sent that breaks MCP's rules, whether or not the test fails for it
        lines.append(f"the client broke MCP's rules {len(broken)} time{'s' * (len(broken) != 1)} (docs/referee.md):")
        lines.extend(f"  {violation}" for violation in broken[:5])
    errors = server.errors
    if errors:
        lines.append(f"tool handlers raised {len(errors)} exception{'s' * (len(errors) != 1)}:")
        lines.extend(f"  {type(error).__name__}: {error}" for error in errors[:5])
    return _redact("\n".join(lines), secrets_of(served, used))


def secrets_of(served: Served, used: Used) -> set[str]:
    """Values never to print: credentials the test configured and credential headers the server received."""
    values = set(used.secrets)
    from mcp_testkit.journal import is_secret_header

    hidden = served.server.journal.writer.hidden_headers()  # a server's required headers; a chaos proxy has none
    names = used.secret_headers | {name.lower() for name in served.headers} | hidden
    for record in served.server.journal:
        values.update(value for name, value in record.headers.items() if is_secret_header(name, names))
    found: set[str] = set()
    for value in values:
        found.add(value)
        credential = value.partition(" ")[2]
        if credential:
            found.add(credential)
    return {value for value in found if len(value) >= 4}


def _redact(text: str, secrets: set[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
