"""An example's inputs as Python source, for the file a kept failure is: fault values and rules as the calls that make
them (`Drop(after_execution=True)`, only the fields that differ from their defaults), the `mcp` SDK's models as
`Model.model_validate({...})`, plain data as its literal. `inputs_source` checks that the source evaluates back to
inputs equal to those given, so a kept file never replays another example than the one that failed."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["UnwritableInputs", "inputs_source", "namespace_of"]


class UnwritableInputs(ValueError):
    """Inputs with a value that has no source that evaluates back to it; the message names the input."""


def inputs_source(inputs: Mapping[str, Any], indent: str = "    ") -> tuple[str, dict[str, set[str]]]:
    """The source of a dict literal equal to `inputs`, one input a line, and the names it needs by module.

    `UnwritableInputs` when a value has no such source (a value of a class outside the toolkit's faults and the
    SDK's models, say), naming the input."""
    imports: dict[str, set[str]] = {}
    lines = ["{"]
    for name, value in inputs.items():
        text = _source(value, imports)
        back = eval(text, namespace_of(imports))  # the source was written by `_source` just above, from values
        if back != value:
            raise UnwritableInputs(
                f"input {name!r} = {value!r} has no source that evaluates back to it ({text} gives {back!r}): a "
                "kept failure would replay another example"
            )
        lines.append(f"{indent}{name!r}: {text},")
    lines.append("}")
    return "\n".join(lines), imports


def namespace_of(imports: Mapping[str, set[str]]) -> dict[str, Any]:
    """The names `imports` lists, imported: what the source evaluates in."""
    import importlib

    namespace: dict[str, Any] = {}
    for module, names in imports.items():
        loaded = importlib.import_module(module)
        namespace.update({name: getattr(loaded, name) for name in names})
    return namespace


def _source(value: Any, imports: dict[str, set[str]]) -> str:
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, list):
        return "[" + ", ".join(_source(item, imports) for item in value) + "]"
    if isinstance(value, tuple):
        items = [_source(item, imports) for item in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_source(k, imports)}: {_source(v, imports)}" for k, v in value.items()) + "}"
    kind = type(value)
    if dataclasses.is_dataclass(value) and kind.__module__.startswith("mcp_testkit.faults"):
        imports.setdefault("mcp_testkit.faults", set()).add(kind.__name__)
        return f"{kind.__name__}({_fields(value, imports)})"
    if hasattr(value, "model_dump") and hasattr(kind, "model_validate"):
        imports.setdefault(_public_module(kind), set()).add(kind.__name__)
        dumped = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        return f"{kind.__name__}.model_validate({_source(dumped, imports)})"
    raise UnwritableInputs(
        f"{value!r} is a {kind.__module__}.{kind.__qualname__}, which a kept failure cannot write as source (it "
        "writes plain data, the values of mcp_testkit.faults and the mcp SDK's models)"
    )


def _public_module(kind: type) -> str:
    """The shortest leading part of `kind`'s module that offers it (`mcp_types` for `mcp_types._types`)."""
    import importlib

    parts = kind.__module__.split(".")
    for end in range(1, len(parts)):
        try:
            module = importlib.import_module(".".join(parts[:end]))
        except ImportError:
            continue
        if getattr(module, kind.__name__, None) is kind:
            return module.__name__
    return kind.__module__


def _fields(value: Any, imports: dict[str, set[str]]) -> str:
    """The keyword arguments that make `value`: its init fields that differ from their defaults."""
    given = []
    for field in dataclasses.fields(value):
        if not field.init:
            continue
        current = getattr(value, field.name)
        default = field.default
        if default is dataclasses.MISSING and field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        if default is not dataclasses.MISSING and _same(current, default):
            continue
        given.append(f"{field.name}={_source(current, imports)}")
    return ", ".join(given)


def _same(current: Any, default: Any) -> bool:
    try:
        return type(current) is type(default) and bool(current == default)
    except Exception:
        return False
