"""What a `TestMcpServer` is built from, checked once: `ServerSettings`, the keywords of its constructor, and the
settings a test may change while it serves (`LiveSetting`), checked by the same rules.

Every fresh state (the first, and each `reset()`) starts from the settings: `ServerSettings.fresh_state()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from mcp_testkit._wire.eras import ERAS, named_eras
from mcp_testkit._wire.runner import MAX_HEADER_LINE, MAX_HEADERS
from mcp_testkit.journal import Journal
from mcp_testkit.server._state import ServerState
from mcp_testkit.server._state._sessions import SessionTable

if TYPE_CHECKING:
    from mcp_testkit.auth import AuthServer
    from mcp_testkit.journal import Record
    from mcp_testkit.server._current import CurrentState
    from mcp_testkit.server._recording import Recording

__all__ = [
    "MAX_BODY",
    "LiveSetting",
    "ServerSettings",
    "auth_checked",
    "cache_ttl_checked",
    "get_stream_checked",
    "input_timeout_checked",
    "page_size_checked",
    "response_mode_checked",
]

T = TypeVar("T")
MAX_BODY = 4 * 1024 * 1024
"""The default `max_body`: 4 MiB, as the SDK's server allows."""
_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
_RESPONSE_MODES = ("json", "sse")


# Each check returns the value it was given (converted where the state keeps another type), or raises ValueError
# naming the keyword, in the words of the constructor and of the setter alike.


def auth_checked(auth: Any, scopes: Any) -> tuple[AuthServer | None, tuple[str, ...]]:
    """`auth=` and `scopes=` (of the server, or of `protect()`) as the state holds them: an `AuthServer` (True: a
    default one; a mapping: a scenario's keywords of one) or None, and a tuple of scope names; ValueError naming the
    keyword otherwise."""
    from mcp_testkit.auth import AuthServer

    if auth is True:
        auth = AuthServer()
    elif isinstance(auth, Mapping):  # a scenario's: the keywords of an AuthServer
        auth = AuthServer(**auth)
    elif auth is False:
        auth = None
    elif auth is not None and not isinstance(auth, AuthServer):
        raise ValueError(f"auth must be an AuthServer (mcp_testkit.auth), True or None, not {auth!r}")
    if isinstance(scopes, str) or not all(isinstance(scope, str) and scope for scope in scopes):
        raise ValueError(f"scopes must be a list of scope names, such as ['tickets:read'], not {scopes!r}")
    if scopes and auth is None:
        raise ValueError("scopes= needs auth=: give TestMcpServer(auth=AuthServer(), scopes=[...])")
    return auth, tuple(scopes)


def page_size_checked(value: Any) -> Any:
    if value is not None and (not isinstance(value, int) or value < 1):
        raise ValueError(f"page_size must be a positive int or None (one page), not {value!r}")
    return value


def response_mode_checked(value: Any) -> Any:
    if not callable(value) and value not in _RESPONSE_MODES:
        raise ValueError(f"response_mode must be 'json', 'sse' or a callable, not {value!r}")
    return value


def _seconds_at_least_zero(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < float("inf")


def cache_ttl_checked(value: Any) -> Any:
    if not _seconds_at_least_zero(value):
        raise ValueError(f"cache_ttl_s must be a number of seconds >= 0, not {value!r}")
    return value


def _bool_checked(label: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{label} must be True or False, not {value!r}")
    return value


def get_stream_checked(value: Any) -> bool:
    return _bool_checked("get_stream", value)


def input_timeout_checked(value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value < float("inf"):
        raise ValueError(f"input_timeout_s must be a number of seconds > 0, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class ServerSettings:
    """The keywords of `TestMcpServer(...)`, each checked here (ValueError naming the keyword)."""

    name: str = "test"
    _: KW_ONLY
    page_size: int | None = None
    response_mode: str | Callable[[Record], str] = "json"
    path: str = "/mcp"
    host: str = "127.0.0.1"
    port: int = 0
    get_stream: bool = False
    allow_delete: bool = True
    allowed_hosts: Sequence[str] = ()
    preset: str | None = None
    version: str = "0.1.0"
    max_body: int = MAX_BODY
    max_headers: int = MAX_HEADERS
    max_header_line: int = MAX_HEADER_LINE
    journal_limit: int | None = None
    session_limit: int | None = None
    session_idle_timeout_s: float | None = None
    header_timeout_s: float = 60.0
    body_timeout_s: float = 60.0
    idle_timeout_s: float = 75.0
    eras: Sequence[str] = ERAS
    cache_ttl_s: float = 0
    cache_scope: str = "public"
    resumable: bool = False
    retry_s: float | None = None
    allow_remote: bool = False
    replaying: Recording | None = None
    auth: AuthServer | bool | Mapping[str, Any] | None = None
    scopes: Sequence[str] = ()
    referee: str = "observe"

    def __post_init__(self) -> None:
        self._check_auth()
        if self.referee not in ("observe", "refuse"):
            raise ValueError(
                f"referee must be 'observe' (answer as ever, note violations in the journal) or 'refuse' "
                f"(answer a violation with its JSON-RPC error), not {self.referee!r}"
            )
        chosen = named_eras(self.eras)
        object.__setattr__(self, "eras", tuple(era for era in ERAS if era in chosen))
        _bool_checked("resumable", self.resumable)
        if self.retry_s is not None and not _seconds_at_least_zero(self.retry_s):
            raise ValueError(f"retry_s must be a number of seconds >= 0 or None, not {self.retry_s!r}")
        cache_ttl_checked(self.cache_ttl_s)
        if self.cache_scope not in ("public", "private"):
            raise ValueError(f"cache_scope must be 'public' or 'private', not {self.cache_scope!r}")
        page_size_checked(self.page_size)
        response_mode_checked(self.response_mode)
        if not self.path.startswith("/"):
            raise ValueError(f"path must start with '/', not {self.path!r}")
        self._check_preset()
        for label in ("max_body", "max_headers", "max_header_line"):
            size = getattr(self, label)
            if not isinstance(size, int) or isinstance(size, bool) or size < 1:
                raise ValueError(f"{label} must be a positive number of bytes, not {size!r}")
        for label in ("header_timeout_s", "body_timeout_s", "idle_timeout_s"):
            seconds = getattr(self, label)
            if not isinstance(seconds, (int, float)) or seconds <= 0:
                raise ValueError(f"{label} must be a positive number of seconds, not {seconds!r}")
            object.__setattr__(self, label, float(seconds))
        Journal(limit=self.journal_limit)  # checks the value now, not at the first reset
        SessionTable(limit=self.session_limit, idle_timeout_s=self.session_idle_timeout_s)

    def _check_auth(self) -> None:
        auth, scopes = auth_checked(self.auth, self.scopes)
        object.__setattr__(self, "auth", auth)
        object.__setattr__(self, "scopes", scopes)

    def _check_preset(self) -> None:
        if self.preset is not None:
            from mcp_testkit.server._presets import PRESETS

            if self.preset not in PRESETS:
                raise ValueError(f"unknown preset {self.preset!r}; choose one of {', '.join(sorted(PRESETS))}")

    def fresh_state(self) -> ServerState:
        """The state a server built with these settings starts from, and every `reset()` returns to."""
        return ServerState(
            name=self.name,
            version=self.version,
            path=self.path,
            page_size=self.page_size,
            response_mode=self.response_mode,
            get_stream=self.get_stream,
            allow_delete=self.allow_delete,
            allowed_hosts=frozenset(name.lower() for name in (*_LOOPBACK_NAMES, self.host, *self.allowed_hosts)),
            max_body=self.max_body,
            body_timeout_s=self.body_timeout_s,
            eras=tuple(self.eras),
            cache_ttl_ms=round(self.cache_ttl_s * 1000),
            cache_scope=self.cache_scope,
            resumable=self.resumable,
            retry_ms=None if self.retry_s is None else round(self.retry_s * 1000),
            journal=Journal(limit=self.journal_limit),
            sessions=SessionTable(limit=self.session_limit, idle_timeout_s=self.session_idle_timeout_s),
            auth=self.auth,
            auth_scopes=tuple(self.scopes),
            referee=self.referee,
        )


class LiveSetting(Generic[T]):
    """A setting of the state a server answers from, which a test may change while it serves: read there, checked
    before it is written, and lasting until the next `reset()`.

    `stored` and `shown` convert between the test's units and the state's (seconds and the wire's milliseconds).
    """

    def __init__(
        self,
        attribute: str,
        checked: Callable[[Any], Any],
        doc: str,
        *,
        stored: Callable[[Any], Any] = lambda value: value,
        shown: Callable[[Any], T] = lambda value: value,
    ) -> None:
        self._attribute = attribute
        self.__doc__ = doc
        self._checked = checked
        self._stored = stored
        self._shown = shown

    @overload
    def __get__(self, server: None, kind: type) -> LiveSetting[T]: ...
    @overload
    def __get__(self, server: object, kind: type) -> T: ...
    def __get__(self, server: object, kind: type) -> LiveSetting[T] | T:
        if server is None:
            return self
        current: CurrentState = server._current  # type: ignore[attr-defined]
        return self._shown(getattr(current.state, self._attribute))

    def __set__(self, server: object, value: T) -> None:
        current: CurrentState = server._current  # type: ignore[attr-defined]
        setattr(current.state, self._attribute, self._stored(self._checked(value)))
