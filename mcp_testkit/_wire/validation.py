"""Checking a tool's arguments against its `inputSchema`, safely for a server anyone on loopback can call.

Two bounds that plain `jsonschema` does not set. No `$ref` is ever fetched: validators use a
registry that retrieves nothing (the schema's own `$defs` and the JSON Schema meta-schemas still
resolve), and a `$ref` that does not resolve is refused when the tool is defined. And validation
runs on the event loop under a time budget per call (`VALIDATION_BUDGET_S`), so that no call can
stall another session: every keyword application checks the budget (a chain of `anyOf` through
`$ref` grows exponentially), `uniqueItems` runs in linear time instead of jsonschema's quadratic
one, and pattern matching (`pattern`, `patternProperties`, `additionalProperties`) runs on the
`regex` engine with the budget's remainder as its timeout, since Python's `re` holds the GIL
through a whole match.
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

__all__ = ["VALIDATION_BUDGET_S", "argument_problem", "build_validator"]

VALIDATION_BUDGET_S = 0.1
"""The time validating one call's arguments may take, in seconds, pattern matching included; read at each
call, so a test may set it (`monkeypatch.setattr(mcp_testkit._wire.validation, "VALIDATION_BUDGET_S", 1.0)`)."""


class _PatternTooSlow(Exception):
    def __init__(self, pattern: str) -> None:
        super().__init__(pattern)
        self.pattern = pattern


class _OverBudget(Exception):
    """The budget ran out when `keyword` was about to be applied."""

    def __init__(self, keyword: str) -> None:
        super().__init__(keyword)
        self.keyword = keyword

    def culprit(self) -> str:
        """The keyword to name: the outermost combinator on the way in (whose branches multiplied), else the last.

        Read off the traceback's frames of keyword functions, so that applying a keyword costs no frame of its own.
        """
        found = []
        trace = self.__traceback__
        while trace is not None:
            keyword = _KEYWORD_OF.get(trace.tb_frame.f_code)
            if keyword is not None:
                found.append(keyword)
            trace = trace.tb_next
        combinators = [keyword for keyword in found if keyword in _COMBINATORS]
        return combinators[0] if combinators else self.keyword


_COMBINATORS = frozenset({"anyOf", "oneOf", "allOf", "not", "if", "contains", "uniqueItems"})


class _Budget(threading.local):
    deadline: float | None = None


_budget = _Budget()


def _search(pattern: str, text: str) -> bool:
    import regex

    deadline = _budget.deadline
    remaining = VALIDATION_BUDGET_S if deadline is None else deadline - time.monotonic()
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


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not (unique and validator.is_type(instance, "array")):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:
            yield ValidationError(f"{_shown(instance)} has non-unique elements")
            return
        seen.add(key)


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values: 1 and 1.0 alike, true and 1 not, object keys in any order."""
    if value is True or value is False:
        return ("bool", value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return ("object", frozenset((key, _canonical(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_canonical(item) for item in value))
    return value


def _shown(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_BOUNDED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "uniqueItems": _unique_items,
}
_classes: dict[type[Any], type[Any]] = {}


def _timed(keyword: str, check: Any) -> Any:
    """`check` that first spends a step of the call's budget (a check of the clock), naming `keyword` when none is left.

    It returns what `check` returns, so the errors' generator runs without a frame of this wrapper: validating
    arguments 128 levels deep stays far from the recursion limit.
    """

    def timed(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        deadline = _budget.deadline
        if deadline is not None and time.monotonic() > deadline:
            raise _OverBudget(keyword)
        return check(validator, value, instance, schema)

    return timed


_KEYWORD_OF: dict[Any, str] = {}
"""The keyword each keyword function's code applies, to name keywords from a traceback."""


def _bounded_class(schema: Mapping[str, Any]) -> type[Any]:
    from jsonschema import validators

    base = validators.validator_for(schema)
    bounded = _classes.get(base)
    if bounded is None:
        checks = {**base.VALIDATORS, **{name: check for name, check in _BOUNDED.items() if name in base.VALIDATORS}}
        keywords = {name: _timed(name, check) for name, check in checks.items()}
        _KEYWORD_OF.update((check.__code__, name) for name, check in checks.items() if hasattr(check, "__code__"))
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
    """Why `arguments` break the tool's input schema, or None when they fit; bounded in time (`VALIDATION_BUDGET_S`)."""
    from referencing.exceptions import Unresolvable

    budget = VALIDATION_BUDGET_S
    _budget.deadline = time.monotonic() + budget
    try:
        error = next(iter(validator.iter_errors(arguments)), None)
    except _PatternTooSlow as exc:
        return (
            f"invalid arguments for tool {name!r}: matching the pattern {exc.pattern!r} took longer than "
            f"{budget} s, the bound mcp-testkit sets on validating one call"
        )
    except _OverBudget as exc:
        return (
            f"invalid arguments for tool {name!r}: validating the keyword {exc.culprit()!r} of the input schema took "
            f"longer than {budget} s, the bound mcp-testkit sets on validating one call"
        )
    except RecursionError:
        return f"invalid arguments for tool {name!r}: the input schema refers to itself too deeply for these arguments"
    except Unresolvable as exc:
        return f"invalid arguments for tool {name!r}: the input schema's reference {exc.ref!r} does not resolve"
    finally:
        _budget.deadline = None
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"invalid arguments for tool {name!r}{' at ' + where if where else ''}: {error.message}"
