"""The placeholder a redacted value becomes in a cassette (`<redacted:1>`, `<redacted:authorization>`): one shape
that redaction writes, and matching and verifying recognise."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PLACEHOLDER", "is_placeholder_text"]

PLACEHOLDER = re.compile(r"<redacted:[^<>\s]+>")


def is_placeholder_text(value: Any) -> bool:
    """Whether `value` is a string holding a redaction placeholder such as `<redacted:1>`."""
    return isinstance(value, str) and PLACEHOLDER.search(value) is not None
