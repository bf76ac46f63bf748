"""Per-server configuration and credentials, which hold environment variable names, never values."""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from mcp_testkit.bridge._approval import ApprovalRule, normalize_approval
from mcp_testkit.bridge._errors import MCPAuthError
from mcp_testkit.bridge._oauth import OAuth
from mcp_testkit.bridge._tool import Kind

__all__ = ["BearerToken", "Era", "Headers", "Kind", "ServerConfig", "positive_seconds", "read_credentials"]

Era = Literal["auto", "handshake", "stateless"]


def positive_seconds(value: object) -> bool:
    """Whether ``value`` is a positive, finite number of seconds (a bool is not a number here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


@dataclass(frozen=True)
class BearerToken:
    """Send ``Authorization: Bearer <value of env>``, read from the environment at each connect."""

    env: str


@dataclass(frozen=True)
class Headers:
    """Send arbitrary headers whose values are read from environment variables at each connect."""

    env: Mapping[str, str]

    def __post_init__(self) -> None:
        object.__setattr__(self, "env", dict(self.env))

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.env.items())))


def _redacted(url: str) -> str:
    """Drop userinfo and the query string, the two places a URL can carry a credential."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, host, parts.path, "…" if parts.query else "", ""))


@dataclass(frozen=True)
class ServerConfig:
    """One MCP server the pool connects to, and the limits and classification rules applied to it."""

    name: str
    url: str | None = None
    """The Streamable HTTP endpoint; give it, or `command` for a server the bridge runs over stdio."""
    auth: BearerToken | Headers | OAuth | None = None
    """The credentials: a bearer token or headers read from the environment, or got with OAuth (`OAuth`)."""
    timeout_s: float = 30.0
    retry: int = 2
    connect_timeout_s: float = 10.0
    connect_retries: int = 3
    connect_backoff_s: float = 0.5
    max_tool_pages: int = 100
    allow: Collection[str] | None = None
    deny: Collection[str] | None = None
    overrides: Mapping[str, Kind] = field(default_factory=dict)
    require_approval: ApprovalRule = "never"
    defer: bool = False
    era: Era = "auto"
    """'auto' probes with server/discover and speaks 2026-07-28 when offered, else the handshake;
    'handshake' or 'stateless' speak that era only."""
    command: str | None = None
    """A server the bridge starts and speaks to over stdio (newline-delimited JSON-RPC), in place of `url`."""
    args: Sequence[str] = ()
    env: Mapping[str, str] | None = None
    """The command's whole environment; None inherits this process's (`os.environ`)."""
    read_timeout_s: float = 30.0
    """For a command server: the bound of the whole answer to each request (handshake, each page, each
    call); a server that misses it is stopped, process group and all."""
    max_result_bytes: int = 16 * 1024 * 1024
    """The largest answer read over HTTP (16 MiB): a call whose result is larger raises `MCPResultTooLarge`
    (the tool ran; its result is not given), and the session goes on."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("ServerConfig.name must not be empty")
        self._check_transport()
        if self.era not in ("auto", "handshake", "stateless"):
            raise ValueError(f"server {self.name!r}: era must be 'auto', 'handshake' or 'stateless', not {self.era!r}")
        for option in ("timeout_s", "connect_timeout_s"):
            if getattr(self, option) <= 0:
                raise ValueError(f"server {self.name!r}: {option} must be positive")
        for option in ("retry", "connect_retries", "connect_backoff_s"):
            if getattr(self, option) < 0:
                raise ValueError(f"server {self.name!r}: {option} must not be negative")
        limit = self.max_result_bytes
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError(f"server {self.name!r}: max_result_bytes must be an int >= 1, not {limit!r}")
        if self.max_tool_pages < 1:
            raise ValueError(f"server {self.name!r}: max_tool_pages must be at least 1")
        bad = {tool: kind for tool, kind in self.overrides.items() if kind not in ("read", "write")}
        if bad:
            raise ValueError(f"server {self.name!r}: overrides must be 'read' or 'write', got {bad!r}")
        object.__setattr__(self, "overrides", dict(self.overrides))
        for option in ("allow", "deny"):
            names = getattr(self, option)
            if isinstance(names, str):
                raise TypeError(f"server {self.name!r}: {option} takes a collection of tool names")
            if names is not None:
                object.__setattr__(self, option, frozenset(names))
        object.__setattr__(self, "require_approval", normalize_approval(self.name, self.require_approval))
        if not isinstance(self.defer, bool):
            raise TypeError(f"server {self.name!r}: defer must be True or False, not {self.defer!r}")

    def _check_transport(self) -> None:
        """Exactly one of `url` and `command`, and for a command its arguments, environment and read timeout."""
        if (self.url is None) == (self.command is None):
            raise ValueError(
                f"server {self.name!r}: give url= (Streamable HTTP) or command= (a server run over stdio), "
                f"{'not both' if self.url is not None else 'one of them'}"
            )
        if not positive_seconds(self.read_timeout_s):
            raise ValueError(
                f"server {self.name!r}: read_timeout_s must be a positive, finite number of seconds, "
                f"not {self.read_timeout_s!r}"
            )
        if self.command is None:
            if self.args or self.env is not None:
                raise ValueError(f"server {self.name!r}: args= and env= belong to a command server, not to url=")
            parts = urlsplit(self.url) if isinstance(self.url, str) else None
            if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(
                    f"server {self.name!r}: url must be an http:// or https:// URL with a host "
                    f"(e.g. http://127.0.0.1:8000/mcp), not {_redacted(str(self.url))!r}"
                )
            return
        if not isinstance(self.command, str) or not self.command:
            raise ValueError(f"server {self.name!r}: command must be the executable to run, not {self.command!r}")
        if isinstance(self.args, str) or not all(isinstance(arg, str) for arg in self.args):
            raise TypeError(f"server {self.name!r}: args takes a list of strings, not {self.args!r}")
        object.__setattr__(self, "args", tuple(self.args))
        if self.env is not None:
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in self.env.items()):
                raise TypeError(f"server {self.name!r}: env maps variable names to string values")
            object.__setattr__(self, "env", dict(self.env))
        if self.auth is not None:
            raise ValueError(
                f"server {self.name!r}: auth= sends HTTP headers, which a command server has none of; "
                "give its credentials in env="
            )
        if self.era == "stateless":
            raise ValueError(f"server {self.name!r}: a command server is spoken to in the handshake era only")

    @property
    def stdio(self) -> bool:
        """Whether the bridge runs this server itself and speaks to it over stdio."""
        return self.command is not None

    def __hash__(self) -> int:
        return hash((self.name, self.url, self.command))

    def __repr__(self) -> str:
        allow = sorted(self.allow) if self.allow is not None else None
        deny = sorted(self.deny) if self.deny is not None else None
        if self.command is not None:
            # The environment's values may be credentials: only its names are shown.
            env = None if self.env is None else dict.fromkeys(sorted(self.env), "…")
            where = (
                f"command={self.command!r}, args={list(self.args)!r}, env={env!r}, "
                f"read_timeout_s={self.read_timeout_s!r}"
            )
        else:
            where = f"url={_redacted(self.url or '')!r}"
        return (
            f"ServerConfig(name={self.name!r}, {where}, auth={self.auth!r}, "
            f"timeout_s={self.timeout_s!r}, retry={self.retry!r}, "
            f"connect_timeout_s={self.connect_timeout_s!r}, connect_retries={self.connect_retries!r}, "
            f"connect_backoff_s={self.connect_backoff_s!r}, max_tool_pages={self.max_tool_pages!r}, "
            f"allow={allow!r}, deny={deny!r}, overrides={dict(sorted(self.overrides.items()))!r}, "
            f"require_approval={_approval_repr(self.require_approval)}, defer={self.defer!r}, era={self.era!r})"
        )


def _approval_repr(rule: ApprovalRule) -> str:
    if isinstance(rule, Mapping):
        return repr({key: sorted(names) for key, names in rule.items()})
    return repr(rule)


def _header_safe(value: str) -> bool:
    """Whether a value can go in a header; checked here so that httpx2 never quotes it in an error."""
    return all(" " <= char <= "~" or char == "\t" for char in value)


def read_credentials(config: ServerConfig, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers carrying the server's credentials, read from the environment now."""
    environ = os.environ if environ is None else environ
    if config.auth is None or isinstance(config.auth, OAuth):
        return {}  # OAuth's tokens are added to each request by its flow (`_oauth.py`)
    wanted = {"Authorization": config.auth.env} if isinstance(config.auth, BearerToken) else dict(config.auth.env)
    headers: dict[str, str] = {}
    for header, variable in wanted.items():
        value = environ.get(variable, "")
        if not value:
            raise MCPAuthError(config.name, f"environment variable {variable!r} is not set or is empty")
        if not _header_safe(value):
            raise MCPAuthError(
                config.name,
                f"environment variable {variable!r} holds characters not allowed in an HTTP header",
            )
        headers[header] = f"Bearer {value}" if isinstance(config.auth, BearerToken) else value
    return headers
