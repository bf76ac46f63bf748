"""`ChaosProxy`: faults in front of a real MCP server, over Streamable HTTP or a stdio process."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from mcp_testkit import faults
from mcp_testkit._wire.binding import warn_if_remote
from mcp_testkit._wire.lifecycle import RunnerLifecycle
from mcp_testkit._wire.origin import LOOPBACK_NAMES
from mcp_testkit._wire.signatures import keywords_of
from mcp_testkit.journal import Journal
from mcp_testkit.proxy._applies import refusal
from mcp_testkit.proxy._endpoint import ProxyEndpoint
from mcp_testkit.proxy._forward import HttpForwarder
from mcp_testkit.upstream import (
    MAX_PROCESSES,
    MAX_UPSTREAM_BODY,
    MAX_UPSTREAM_HEAD,
    MAX_UPSTREAM_HEADERS,
    START_TIMEOUT_S,
    Tape,
    check_startable,
)

if TYPE_CHECKING:
    from mcp_testkit._wire.runner import Runner

__all__ = ["ChaosProxy"]


def _upstream_name(url: str | None, command: Sequence[str] | None) -> str:
    from urllib.parse import urlsplit, urlunsplit

    if command is not None:
        import shlex

        return shlex.join(command)
    parts = urlsplit(url or "")
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class ChaosProxy(RunnerLifecycle):
    """A proxy on 127.0.0.1 in front of a live MCP server that journals every request and applies a fault plan.

    `upstream` is a Streamable HTTP URL, or `upstream_command` runs a stdio server (the proxy serves Streamable
    HTTP in front of it, one process per session, at most `max_processes`). `headers` go to the upstream on every
    request (the journal redacts them as any credential). Faults take the values `TestMcpServer.inject` takes;
    those that mean nothing in front of a real server are refused by `inject`, with the reason.
    """

    __test__ = False

    def __init__(
        self,
        upstream: str | None = None,
        *,
        upstream_command: Sequence[str] | None = None,
        headers: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/mcp",
        timeout_s: float = 30.0,
        start_timeout_s: float = START_TIMEOUT_S,
        upstream_stderr: TextIO | None = None,
        max_processes: int = MAX_PROCESSES,
        journal_limit: int | None = None,
        allow_remote: bool = False,
        recording: Any = None,
        max_upstream_head: int = MAX_UPSTREAM_HEAD,
        max_upstream_headers: int = MAX_UPSTREAM_HEADERS,
        max_upstream_body: int = MAX_UPSTREAM_BODY,
    ) -> None:
        """A `host` that is not loopback warns (`RemoteHostWarning`) unless `allow_remote`.

        `recording` keeps every exchange as a cassette's recorder does (`mcp_testkit.cassettes` passes one: it has
        the forwarder's `begin` and `keep`, and the `tape` a stdio server's exchanges go on). With `upstream_command`,
        `start` first runs the command and sends it `initialize` (nothing recorded or journaled), and raises
        `UpstreamError` when it exits or does not answer within `start_timeout_s`. Its stderr is kept off the
        terminal (a tail errors quote), or passed through to `upstream_stderr` (e.g. `sys.stderr`) when given.

        What comes from the upstream is bounded as what comes from clients is: `max_upstream_head` bytes of an HTTP
        answer's head and `max_upstream_headers` header lines, `max_upstream_body` bytes of one message (a JSON
        answer's body, an SSE event, a stdio server's stdout line). An answer past one gets the client a 502 naming
        it, and its connection (or process) is closed.
        """
        warn_if_remote(host, "the chaos proxy", allow_remote=allow_remote)
        if (upstream is None) == (upstream_command is None):
            raise ValueError("ChaosProxy needs exactly one upstream: upstream='http://...' or upstream_command=[...]")
        self.upstream = _upstream_name(upstream, upstream_command)
        limits = {"max_upstream_head": max_upstream_head, "max_upstream_headers": max_upstream_headers,
                  "max_upstream_body": max_upstream_body}  # fmt: skip
        for label, value in limits.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{label} must be a whole number of at least 1, not {value!r}")
        link: Any
        self._stdio: Any = None
        if upstream is not None:
            if not upstream.startswith(("http://", "https://")):
                raise ValueError(f"the upstream must be an http:// or https:// URL, not {self.upstream!r}")
            link = HttpForwarder(
                upstream, headers=headers, timeout_s=timeout_s, recorder=recording, max_head=max_upstream_head,
                max_headers=max_upstream_headers, max_body=max_upstream_body,
            )  # fmt: skip
        else:
            from mcp_testkit.proxy._stdio import StdioGateway

            command = list(upstream_command or [])
            check_startable(command)
            if start_timeout_s <= 0:
                raise ValueError(f"start_timeout_s must be more than 0 seconds, not {start_timeout_s:g}")
            tape = recording.tape if recording is not None else _Discarded(Tape)
            link = self._stdio = StdioGateway(
                command, tape, path=path, max_processes=max_processes, stderr=upstream_stderr
            )
            link.max_line = max_upstream_body
        self._link = link
        self._plan = faults.FaultPlan()
        self._journal = Journal(limit=journal_limit)
        self._endpoint = ProxyEndpoint(link, self._journal, self._plan, path=path)
        self._endpoint.allowed_hosts = frozenset({*LOOPBACK_NAMES, host.lower()})
        self._host, self._port, self._path = host, port, path
        self._start_timeout_s = start_timeout_s
        self._app: Any = None

    # -- faults --------------------------------------------------------------------------------------------------

    @keywords_of(faults.placed_rule)
    def inject(self, fault: faults.Fault, **placement: Any) -> faults.Rule:
        """Add a rule as `TestMcpServer.inject` does (`probability` and `seed` too, for soak runs that replay);
        ValueError naming the fault and why when the proxy cannot apply it in front of a real server."""
        why = refusal(fault) if isinstance(fault, faults.Fault) else None
        if why is not None:
            raise ValueError(why)
        return self._plan.add(faults.placed_rule(fault, **placement))

    def check_rule(self, rule: faults.Rule) -> None:
        """ValueError naming the fault and why, when the proxy cannot apply the rule's fault."""
        why = refusal(rule.fault)
        if why is not None:
            raise ValueError(why)

    def add_rule(self, rule: faults.Rule) -> faults.Rule:
        """Add a rule made elsewhere (a scenario file, the admin API), checked as `inject` checks its fault."""
        self.check_rule(rule)
        return self._plan.add(rule)

    def reset(self) -> None:
        """Forget the journal and every rule; keeps serving."""
        self._journal.clear()
        self._plan = faults.FaultPlan()
        self._endpoint.plan = self._plan
        self._endpoint.errors.clear()

    def fail_next_call(self, fault: faults.Fault, *, tool: str | None = None) -> faults.Rule:
        """The next call of `tool` (of any tool when None) meets `fault`."""
        return self.inject(fault, method="tools/call", tool=tool)

    def pending_faults(self) -> list[faults.Rule]:
        """Rules that can still fire."""
        return self._plan.pending()

    def check(self, *, unused_faults: bool = False) -> None:
        """Raise for a fault that hit a request of an era it means nothing in; with `unused_faults`, also for a
        scripted fault that never fired (such a test proved nothing)."""
        errors = self._endpoint.errors
        if errors:
            raise AssertionError(f"chaos proxy in front of {self.upstream}: {errors[0]}")
        if unused_faults:
            unfired = self._plan.unfired()
            if unfired:
                listed = faults.describe(unfired)
                raise AssertionError(f"chaos proxy: {len(unfired)} scripted fault(s) never fired:\n{listed}")

    @property
    def name(self) -> str:
        """How reports name the proxy: by its upstream."""
        return f"chaos proxy to {self.upstream}"

    @property
    def errors(self) -> list[BaseException]:
        """Faults that hit a request of an era they mean nothing in (`check()` raises the first)."""
        return list(self._endpoint.errors)

    @property
    def journal(self) -> Journal:
        """Every request the proxy received, with the fault applied to it (credentials redacted when shown)."""
        return self._journal

    # -- serving -------------------------------------------------------------------------------------------------

    @property
    def asgi_app(self) -> ProxyEndpoint:
        """The proxy's endpoint as an ASGI app (the CLI mounts the admin API in front of it)."""
        return self._endpoint

    @property
    def url(self) -> str:
        """The proxy's endpoint, e.g. `http://127.0.0.1:PORT/mcp`: point the client here."""
        if self._runner is None:
            raise RuntimeError("the chaos proxy is not started")
        return f"http://{self._host}:{self._runner.port}{self._path}"

    @property
    def base_url(self) -> str:
        """The proxy's origin, e.g. `http://127.0.0.1:PORT`."""
        return self.url[: -len(self._path)] if self.url.endswith(self._path) else self.url

    def start(self, app: Any = None) -> None:
        """Serve `app` (the proxy's endpoint unless given) from a background thread; returns once the proxy accepts
        connections. In front of a command, first `UpstreamError` unless the command starts and answers
        `initialize` (the stdio gateway's `probe`)."""
        self._app = app
        super().start()

    def _new_runner(self) -> Runner:
        from mcp_testkit._wire.runner import Runner

        if self._runner is not None:
            raise RuntimeError(f"the chaos proxy is already started at {self.url}")
        if self._stdio is not None:
            self._stdio.probe(self._start_timeout_s)
        return Runner(
            self._app or self._endpoint, self._host, self._port, header_timeout_s=60.0, body_timeout_s=60.0,
            idle_timeout_s=75.0,
        )  # fmt: skip

    def _runner_name(self) -> str:
        return "chaos-proxy"

    def _closing(self, *, started: bool) -> None:
        """DELETE upstream the sessions still open there (best effort, at most a few seconds), and close the pooled
        upstream connections."""
        if isinstance(self._link, HttpForwarder):
            self._link.close(first=self._endpoint.end_all_upstream)

    def _closed(self) -> None:
        """Stop the stdio server processes."""
        if self._stdio is not None:
            self._stdio.close()

    def __repr__(self) -> str:
        where = self.url if self._runner is not None else "not started"
        return f"ChaosProxy({self.upstream!r}, {where}, {len(self._journal)} requests)"


def _Discarded(tape_class: Any) -> Any:
    """A tape that keeps nothing: the proxy journals, and records only when asked to."""

    class Discarded(tape_class):  # type: ignore[misc]
        def add(self, exchange: Any) -> None:
            return None

    return Discarded()
