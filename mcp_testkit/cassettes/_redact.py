"""Keeping secrets out of cassettes: credential headers by name, `--redact` patterns, known token shapes and URL
passwords in bodies by stable placeholders, and a scan of the text before it is written.

Which headers carry credentials is the journal's one redaction policy, `journal.is_secret_header`.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcp_testkit.cassettes._format import Cassette, CassetteError
from mcp_testkit.cassettes._inputs import link_inputs
from mcp_testkit.cassettes._placeholders import PLACEHOLDER
from mcp_testkit.journal import is_secret_header
from mcp_testkit.upstream import Exchange

__all__ = [
    "KNOWN_SHAPES",
    "Redactor",
    "placeholder_count",
    "redacted",
    "save",
]

_MIN_SECRET = 4
"""Shorter values are never treated as secrets: replacing every 'abc' in a file would say nothing."""
_MIN_SUBSTRING = 12
"""Shorter secrets are replaced only where they stand as a whole value: replacing `ticket` inside the tool name
`create_ticket` would rewrite what was recorded, not hide a secret."""
_MIN_ELSEWHERE = 8
"""Shorter secrets, and single words of letters shorter than `_MIN_SUBSTRING` (`demo`, `ticketing`), are replaced
only where they stand as the secret: the header that carries one, the value of its secret-named key, the password of
a URL. A credential `Bearer demo` is not the server named `demo`."""
_SECRET_KEY = re.compile(
    r"(?i)(?:^|[_\-.])(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|"
    r"client[_\-]?secret|credentials?|authorization|cookie|dpop)$"
)
"""A JSON key whose string value is a secret wherever it appears (arguments `password`, `api_key`, `token`...)."""

Scrub = Callable[[dict[str, Any]], dict[str, Any]]
"""A user's hook: takes a JSON-RPC message (a request, an answer or an event) about to be written, returns the
message to write instead (vcrpy's `before_record_response`, for data no pattern can know, such as an env dump)."""

KNOWN_SHAPES: tuple[re.Pattern[str], ...] = tuple(
    re.compile(pattern)
    for pattern in (
        r"\bgh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
        r"\bgithub_pat_[A-Za-z0-9_]{22,}",
        r"\bglpat-[A-Za-z0-9_\-]{20,}",  # GitLab
        r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
        r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key id
        r"\bAIza[0-9A-Za-z_\-]{35}",  # Google API key
        r"\bsk-[A-Za-z0-9_\-]{20,}",  # OpenAI, Anthropic
        r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
        r"\bnpm_[A-Za-z0-9]{36}\b",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}",
    )
)
"""Token shapes redacted in bodies even when no `--redact` pattern names them."""

_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/?#@:\"'<>\\]*:)([^\s/?#@\"'<>\\]+)@")
"""A URL's user info with a password (`postgres://app:pw@host/db`, `redis://:pw@host`): the password is redacted,
the user kept. A known shape too."""


class Redactor:
    """Replaces secrets with placeholders: a credential header's value by its name (`<redacted:authorization>`),
    a body value matching a pattern or a known token shape by `<redacted:N>`, the same value always the same N."""

    def __init__(
        self,
        patterns: Iterable[str] = (),
        *,
        known_shapes: bool = True,
        secrets: Iterable[str] = (),
        first_placeholder: int = 1,
        scrub: Scrub | None = None,
    ) -> None:
        self.scrub = scrub
        self.pattern_texts = list(patterns)
        compiled = []
        for text in self.pattern_texts:
            try:
                compiled.append(re.compile(text))
            except re.error as exc:
                raise CassetteError(f"--redact {text!r} is not a regular expression: {exc}") from None
        self.known_shapes = known_shapes
        self._patterns = compiled + (list(KNOWN_SHAPES) if known_shapes else [])
        self._placeholders: dict[str, str] = {}
        """Secrets replaced wherever they appear, with their placeholders."""
        self._whole: dict[str, str] = {}
        """Secrets too short to replace inside other text: replaced only where a string is exactly one."""
        self._in_place: dict[str, str] = {}
        """Secrets too short (or too much a word) to look for anywhere: replaced only where they stand as the secret
        (their header, their secret-named key, a URL's password)."""
        self._next = first_placeholder
        self.header_names: set[str] = set()
        for value in secrets:
            self.secret(value)

    @property
    def values(self) -> dict[str, str]:
        """Every secret seen, with its placeholder (never written anywhere)."""
        return {**self._in_place, **self._whole, **self._placeholders}

    def secret(self, value: str, placeholder: str | None = None) -> str:
        """Remember `value` as a secret, with the forms a body may repeat it in: the credential after a scheme
        such as 'Bearer', a Basic credential decoded and its password, and base64 encodings; its placeholder."""
        if len(value) < _MIN_SECRET or PLACEHOLDER.fullmatch(value):
            return placeholder or value
        known = self._placeholders.get(value) or self._whole.get(value) or self._in_place.get(value)
        if known is not None:
            return known
        if placeholder is None:
            placeholder = f"<redacted:{self._next}>"
            self._next += 1
        self._remember(value, placeholder)
        scheme, _, credential = value.partition(" ")
        if credential and scheme.isalpha() and len(credential) >= _MIN_SECRET:
            self._remember(credential, placeholder)
            if scheme.lower() == "basic":
                decoded = _unbase64(credential)
                if decoded is not None:
                    self._remember(decoded, placeholder)
                    self._remember(decoded.partition(":")[2], placeholder)
        return placeholder

    def _remember(self, value: str, placeholder: str) -> None:
        if len(value) < _MIN_SECRET:
            return
        if len(value) < _MIN_ELSEWHERE or (len(value) < _MIN_SUBSTRING and value.isalpha()):
            self._in_place.setdefault(value, placeholder)
            return
        if len(value) < _MIN_SUBSTRING:
            self._whole.setdefault(value, placeholder)
            return
        self._placeholders.setdefault(value, placeholder)
        raw = value.encode()
        for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
            text = encoded.decode("ascii")
            self._placeholders.setdefault(text, placeholder)
            self._placeholders.setdefault(text.rstrip("="), placeholder)

    def header(self, name: str, value: str) -> str:
        """A header value as written: a credential's value becomes a placeholder naming the header (and each
        cookie's value is a secret on its own, since a body may echo one alone)."""
        if not is_secret_header(name):
            return self.text(value)
        lowered = name.lower()
        self.header_names.add(lowered)
        if lowered in ("cookie", "set-cookie"):
            for pair in value.split(";"):
                _, equals, cookie = pair.strip().partition("=")
                if equals:
                    self._remember(cookie.strip('"'), f"<redacted:{lowered}>")
        return self.secret(value, f"<redacted:{lowered}>")

    def text(self, text: str) -> str:
        """`text` with every known secret, pattern match and token shape replaced; placeholders are left alone."""
        if not text:
            return text
        if self.known_shapes:  # first, so that the password is known where the same text repeats it
            text = _outside_placeholders(text, functools.partial(_URL_PASSWORD.sub, self._url_password))
        text = _outside_placeholders(text, self._known)
        for pattern in self._patterns:
            text = _outside_placeholders(text, functools.partial(pattern.sub, self._match))
        return text

    def _known(self, text: str) -> str:
        for value in sorted(self._placeholders, key=len, reverse=True):
            if value in text:
                text = text.replace(value, self._placeholders[value])
        return text

    def _match(self, match: re.Match[str]) -> str:
        return self.secret(match.group(0))

    def _url_password(self, match: re.Match[str]) -> str:
        password = match.group(2)
        placeholder = self.secret(password)
        return f"{match.group(1)}{placeholder if placeholder != password else '<redacted:password>'}@"

    def json(self, value: Any) -> Any:
        """A JSON value with `text` applied to every string and object key; the string under a secret-named key
        (`password`, `api_key`, `token`...) is a secret itself."""
        if isinstance(value, str):
            whole = self._whole.get(value)
            return whole if whole is not None else self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key): self._under(key, item) for key, item in value.items()}
        return value

    def _under(self, key: str, item: Any) -> Any:
        """A value of an object as written: a string under a secret-named key is its secret's placeholder."""
        if isinstance(item, str) and _SECRET_KEY.search(key):
            placeholder = self.values.get(item)
            if placeholder is not None:
                return placeholder
        return self.json(item)

    def collect(self, value: Any) -> None:
        """Remember the string under every secret-named key of a JSON value (`password`, `api_key`, `token`...)
        and the password of every URL in its strings, so that each is replaced wherever it appears, in this message
        or any other."""
        if isinstance(value, str):
            if self.known_shapes:
                for found in _URL_PASSWORD.finditer(value):
                    self.secret(found.group(2))
        elif isinstance(value, list):
            for item in value:
                self.collect(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, str) and _SECRET_KEY.search(key):
                    self.secret(item)
                else:
                    self.collect(item)

    def scrubbed(self, message: Any) -> Any:
        """A JSON-RPC message (or a batch of them) as the user's `scrub` hook returns it."""
        if self.scrub is None or message is None:
            return message
        if isinstance(message, list):
            return [self.scrubbed(item) for item in message]
        if not isinstance(message, dict):
            return message
        result = self.scrub(message)
        if not isinstance(result, dict):
            raise CassetteError(f"the scrub hook returned {type(result).__name__}, not the message (a dict)")
        return result

    def url(self, url: str) -> str:
        """A URL with its user info and the values of credential-named query parameters replaced."""
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, host = netloc.rpartition("@")
            netloc = f"{self.secret(userinfo, '<redacted:userinfo>')}@{host}"
        query = parts.query
        if query:
            pairs = [
                (name, self.secret(value, f"<redacted:{name.lower()}>") if is_secret_header(name) else value)
                for name, value in parse_qsl(query, keep_blank_values=True)
            ]
            query = urlencode(pairs, safe="<>:")
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

    def scan(self, text: str) -> list[str]:
        """The placeholders whose secret value still appears in `text` (as is, or JSON-escaped)."""
        import json

        leaked = []
        for value, placeholder in self._placeholders.items():
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            if value in text or escaped in text:
                leaked.append(placeholder)
        for value, placeholder in self._whole.items():  # a short secret counts only as a whole JSON value
            bare = re.search(rf"[:\[,]\s*{re.escape(value)}\s*[,\]}}]", text)  # e.g. a number
            if json.dumps(value, ensure_ascii=False) in text or bare is not None:
                leaked.append(placeholder)
        return sorted(set(leaked))

    def summary(self) -> dict[str, Any]:
        """What was redacted, for the cassette's `redactions` key: names and patterns, never a value."""
        numbered = {p for p in self._placeholders.values() if p[len("<redacted:") : -1].isdigit()}
        return {
            "headers": sorted(self.header_names),
            "patterns": list(self.pattern_texts),
            "known_shapes": self.known_shapes,
            "placeholders": len(numbered),
        }


def redacted(cassette: Cassette, redactor: Redactor) -> Cassette:
    """The cassette as it may be written: credential headers by name, bodies redacted, sessions as s1, s2..."""
    sessions: dict[str, str] = {}

    def session(value: str | None) -> str | None:
        if value is None:
            return None
        if value not in sessions:
            sessions[value] = f"s{len(sessions) + 1}"
        return sessions[value]

    scrubbed = [
        dataclasses.replace(
            exchange,
            request=redactor.scrubbed(exchange.request),
            response=redactor.scrubbed(exchange.response),
            events=[redactor.scrubbed(event) for event in exchange.events],
        )
        for exchange in cassette.exchanges
    ]
    # Every secret first (credential headers, the upstream's session ids, secret-named values), so that each is
    # replaced wherever a body repeats it, in an earlier exchange as well.
    for exchange in scrubbed:
        if exchange.http is not None:
            for name, value in [*exchange.http.request_headers.items(), *exchange.http.response_headers.items()]:
                if is_secret_header(name):
                    redactor.header(name, value)
        if exchange.session is not None:
            redactor.secret(exchange.session, f"<redacted:session-{session(exchange.session)}>")
        for message in (exchange.request, exchange.response, exchange.events):
            redactor.collect(message)
    exchanges = link_inputs([_exchange(exchange, redactor, session) for exchange in scrubbed])  # answers as redacted
    upstream = dict(cassette.upstream)
    if "url" in upstream:
        upstream["url"] = redactor.url(upstream["url"])
    if "command" in upstream:
        upstream["command"] = [redactor.text(part) for part in upstream["command"]]
    return dataclasses.replace(cassette, exchanges=exchanges, upstream=upstream, redactions=redactor.summary())


def _exchange(exchange: Exchange, redactor: Redactor, session: Any) -> Exchange:
    http = exchange.http
    if http is not None:
        http = dataclasses.replace(
            http,
            request_headers=_headers(http.request_headers, redactor, session),
            response_headers=_headers(http.response_headers, redactor, session),
        )
    return dataclasses.replace(
        exchange,
        session=session(exchange.session),
        http=http,
        request=redactor.json(exchange.request),
        response=redactor.json(exchange.response),
        events=redactor.json(exchange.events),
        body=redactor.text(exchange.body) if exchange.body is not None else None,
        error=redactor.text(exchange.error) if exchange.error is not None else None,
    )


def _headers(headers: Any, redactor: Redactor, session: Any) -> dict[str, str]:
    written = {}
    for name, value in headers.items():
        written[name] = session(value) if name.lower() == "mcp-session-id" else redactor.header(name, value)
    return written


def save(cassette: Cassette, path: str | Path, redactor: Redactor) -> Cassette:
    """Redact `cassette`, scan the text, and write it atomically; CassetteError (nothing written) on a leak."""
    path = Path(path)
    written = redacted(cassette, redactor)
    text = written.dumps()
    leaked = redactor.scan(text)
    if leaked:
        raise CassetteError(
            f"refusing to write cassette {path}: it still holds {len(leaked)} redacted value(s) "
            f"({', '.join(leaked)}) in a place redaction does not reach; nothing was written"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    written.source = str(path)
    return written


def placeholder_count(cassette: Cassette) -> int:
    """The highest `<redacted:N>` number a cassette uses, so that new placeholders continue after it."""
    numbers = [int(n) for n in re.findall(r"<redacted:(\d+)>", cassette.dumps())]
    return max(numbers, default=0)


def _unbase64(text: str) -> str | None:
    """A Basic credential decoded (`user:password`), or None when it is not base64 of UTF-8 text."""
    try:
        return base64.b64decode(text, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _outside_placeholders(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the parts of `text` between placeholders, so a placeholder is never redacted again."""
    kept = PLACEHOLDER.findall(text)
    if not kept:
        return change(text)
    parts = [change(part) for part in PLACEHOLDER.split(text)]
    return "".join(part + (kept[i] if i < len(kept) else "") for i, part in enumerate(parts))
