"""Checking a tool's arguments against its `inputSchema`, safely for a server anyone on loopback can call.

Two bounds that plain `jsonschema` does not set. No `$ref` is ever fetched: validators use a
registry that retrieves nothing (the schema's own `$defs` and the JSON Schema meta-schemas still
resolve), and a `$ref` that does not resolve is refused when the tool is defined. Pattern
matching (`pattern`, `patternProperties`, `additionalProperties`) runs on the `regex` engine
under a time budget per call, since Python's `re` holds the GIL through a whole match and a
catastrophic pattern would stall every session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from referencing import Resource
    from referencing._core import Resolver

__all__ = ["PATTERN_BUDGET_S", "argument_problem", "build_validator"]

PATTERN_BUDGET_S = 0.1
"""The time all pattern matching of one call's arguments may take, in seconds."""


class _PatternTooSlow(Exception):
    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern


class _Budget(threading.local):
    deadline: float | None = None


_budget = _Budget()


def _search(pattern: str, text: str) -> bool:
    import regex

    deadline = _budget.deadline
    remaining = PATTERN_BUDGET_S if deadline is None else deadline - time.monotonic()
    if remaining <= 0:
        raise _PatternTooSlow(pattern)
    try:
        return regex.search(pattern, text, timeout=remaining) is not None
    except TimeoutError:
        raise _PatternTooSlow(pattern) from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        name
        for name in instance
        if name not in properties and not any(_search(pattern, name) for pattern in patterns)
    ]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(extra) for extra in sorted(extras, key=str))
        if patterns:
            yield ValidationError(f"{names} do not match any of the regexes: {', '.join(map(repr, sorted(patterns)))}")
        else:
            yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")


_BOUNDED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}
_classes: dict[type[Any], type[Any]] = {}


def _bounded_class(schema: Mapping[str, Any]) -> type[Any]:
    from jsonschema import validators

    base = validators.validator_for(schema)
    bounded = _classes.get(base)
    if bounded is None:
        keywords = {name: check for name, check in _BOUNDED.items() if name in base.VALIDATORS}
        bounded = _classes[base] = validators.extend(base, keywords)  # type: ignore[no-untyped-call]
    return bounded


def build_validator(name: str, schema: Mapping[str, Any]) -> Validator:
    """A validator for a tool's input schema; ValueError naming the problem for a schema it cannot serve safely."""
    from jsonschema.exceptions import SchemaError
    from referencing import Registry

    cls = _bounded_class(schema)
    try:
        cls.check_schema(dict(schema))
    except SchemaError as exc:
        raise ValueError(f"tool {name!r}: input_schema is not a valid JSON Schema: {exc.message}") from None
    if _uses(schema, "unevaluatedProperties") and _uses(schema, "patternProperties"):
        raise ValueError(
            f"tool {name!r}: input_schema combines unevaluatedProperties with patternProperties, whose matching "
            "mcp-testkit cannot bound in time; use additionalProperties instead"
        )
    validator: Validator = cls(dict(schema), registry=Registry())
    _check_refs(name, validator)
    return validator


def _uses(schema: Any, keyword: str) -> bool:
    if isinstance(schema, Mapping):
        return keyword in schema or any(_uses(value, keyword) for value in schema.values())
    if isinstance(schema, list):
        return any(_uses(value, keyword) for value in schema)
    return False


def _check_refs(name: str, validator: Any) -> None:
    """Resolve every reference of the schema now (nothing is fetched); ValueError naming one that does not resolve."""
    from jsonschema_specifications import REGISTRY  # type: ignore[import-untyped]
    from referencing import Specification
    from referencing.jsonschema import specification_with

    cls = type(validator)
    dialect = cls.ID_OF(cls.META_SCHEMA) or "urn:unknown-dialect"
    root = specification_with(dialect, default=Specification.OPAQUE).create_resource(validator.schema)
    _walk_refs(name, REGISTRY.resolver_with_root(root), root)


def _walk_refs(name: str, resolver: Resolver[Any], resource: Resource[Any]) -> None:
    from referencing.exceptions import NoSuchResource, Unresolvable

    contents = resource.contents
    if isinstance(contents, Mapping):
        for keyword in ("$ref", "$dynamicRef", "$recursiveRef"):
            ref = contents.get(keyword)
            if not isinstance(ref, str):
                continue
            try:
                resolver.lookup(ref)
            except (Unresolvable, NoSuchResource):
                raise ValueError(
                    f"tool {name!r}: input_schema has a {keyword} {ref!r} that cannot be resolved: mcp-testkit never "
                    "fetches schemas (from the network or from files); put the definition in the schema's own $defs"
                ) from None
    for subresource in resource.subresources():
        _walk_refs(name, resolver.in_subresource(subresource), subresource)


def argument_problem(name: str, validator: Validator, arguments: Mapping[str, Any]) -> str | None:
    """Why `arguments` break the tool's input schema, or None when they fit; pattern matching is time-bounded."""
    from referencing.exceptions import Unresolvable

    _budget.deadline = time.monotonic() + PATTERN_BUDGET_S
    try:
        error = next(iter(validator.iter_errors(arguments)), None)
    except _PatternTooSlow as exc:
        return (
            f"invalid arguments for tool {name!r}: matching the pattern {exc.pattern!r} took longer than "
            f"{PATTERN_BUDGET_S} s, the bound mcp-testkit sets on pattern matching"
        )
    except Unresolvable as exc:
        return f"invalid arguments for tool {name!r}: the input schema's reference {exc.ref!r} does not resolve"
    finally:
        _budget.deadline = None
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"invalid arguments for tool {name!r}{' at ' + where if where else ''}: {error.message}"
