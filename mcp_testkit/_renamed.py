"""Old spellings of renamed public arguments, kept working for one release with a `DeprecationWarning`.

The toolkit speaks one vocabulary (every duration in seconds with an `_s` suffix, `transport=` for an httpx2
transport only); a call that still uses an old name gets the value it meant and a warning naming the new one.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["renamed"]

_UNSET: Any = object()


def renamed(
    given: MutableMapping[str, Any],
    old: str,
    new: str,
    value: Any,
    *,
    where: str,
    convert: Callable[[Any], Any] | None = None,
    default: Any = None,
) -> Any:
    """The value of `new`: `value` as given, or the old argument popped from `given` (converted), with a warning.

    `value` is the new argument as the caller received it (`default` when it was not given); giving both
    spellings is an error, since they may disagree.
    """
    if old not in given:
        return value
    old_value = given.pop(old)
    if value is not default:
        raise TypeError(f"{where}: give {new}= only ({old}= is its old spelling)")
    how = " (converted to seconds)" if convert is not None else ""
    warnings.warn(
        f"{where}: {old}= is deprecated, use {new}={how}; the old spelling goes away in the next release",
        DeprecationWarning,
        stacklevel=3,
    )
    return convert(old_value) if convert is not None else old_value
