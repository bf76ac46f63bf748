"""Text bound for a terminal: control characters that came from a server or a file are shown escaped, never run.

A tool name holding `ESC [ 2 J` would clear the screen, and a bidirectional override would reorder what a
reader sees; printed through `printable`, each is the visible `\\x1b` or `\\u202e`.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with C0 and C1 control characters, DEL and bidirectional marks escaped, as Python writes them."""
    return _CONTROLS.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
