"""A small JSON Schema interpreter with zod semantics: strip unknown material, then validate.

The real clients validate with zod. The AG-UI event schemas are generated from the zod schemas
``@ag-ui/client`` 1.0.0 runs (``data/agui-1.0.0.schema.json``, see
``tests/conformance/tools/gen_agui_schema.mjs``); the AI SDK chunk schemas are written by hand
in :mod:`conformance.ai_sdk_schema` in the same form. Only the keywords zod's
``toJSONSchema`` emits are understood: ``type``, ``properties``, ``required``,
``additionalProperties`` (a record when there are no ``properties``), ``items``, ``minItems``,
``const``, ``enum``, ``pattern``, ``minimum``, ``maximum``, ``oneOf`` (a discriminated union),
``anyOf`` (a structural union), plus two annotations zod cannot express: ``x-not-null`` (a
``.refine(value => value !== null)``) and ``{"type": "object"}`` without ``properties`` (a
plain-object ``z.custom``).

:func:`strip_unknown` follows ``@ag-ui/client`` 1.0.0 ``src/enforce/strip.ts``: unknown keys of
a described object are removed (unless the object is ``specOpen``), a discriminated-union member
with an unknown tag is removed from its array or optional slot. :func:`validate` follows zod's
parse: numbers are JavaScript numbers (``1.0`` is an integer), ``null`` is a value like any
other (an optional field does not accept it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

__all__ = ["Issue", "strip_and_validate", "strip_unknown", "validate", "validate_cached"]

Schema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Issue:
    """One validation failure.

    Attributes:
        path: JSON-pointer-like path of the offending value (``/outcome/type``).
        kind: ``"null"`` (null where the field does not accept it), ``"missing"`` (a required
            key is absent) or ``"invalid"`` (wrong type or value).
        message: one line.
    """

    path: str
    kind: Literal["null", "missing", "invalid"]
    message: str


class _Drop:
    """Marks a value the schema cannot recognise at all (an unknown union member)."""


_DROP = _Drop()


def _is_object_schema(schema: Schema) -> bool:
    return "properties" in schema


def _is_record_schema(schema: Schema) -> bool:
    extra = schema.get("additionalProperties")
    return schema.get("type") == "object" and "properties" not in schema and bool(extra)


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


_DISCRIMINATORS: dict[int, tuple[list[Schema], str | None]] = {}  # holds the list: ids stay unique


def _discriminator(schemas: list[Schema]) -> str | None:
    """The property whose ``const`` tells the members of a ``oneOf`` apart (cached per list)."""
    cached = _DISCRIMINATORS.get(id(schemas))
    if cached is not None:
        return cached[1]
    found = None
    for key, sub in schemas[0].get("properties", {}).items():
        if "const" not in sub:
            continue
        values = [s.get("properties", {}).get(key, {}).get("const", _DROP) for s in schemas]
        if _DROP not in values and len(set(map(repr, values))) == len(values):
            found = key
            break
    _DISCRIMINATORS[id(schemas)] = (schemas, found)
    return found


def _union_member(schema: Schema, value: Any) -> Schema | _Drop | None:
    """For a ``oneOf``: the member ``value`` selects, ``_DROP`` for an unknown tag, ``None`` when
    ``value`` is not an object (the validator reports it)."""
    options: list[Schema] = schema["oneOf"]
    if not isinstance(value, dict):
        return None
    key = _discriminator(options)
    if key is None:
        return None
    for option in options:
        if option.get("properties", {}).get(key, {}).get("const") == value.get(key, _DROP):
            return option
    return _DROP


def _nullable_inner(schema: Schema) -> Schema | None:
    options = schema.get("anyOf")
    if isinstance(options, list) and len(options) == 2:
        rest: list[Schema] = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            return rest[0]
    return None


def _strip(value: Any, schema: Schema, path: str, out: list[tuple[str, str]]) -> Any:
    inner = _nullable_inner(schema)
    if inner is not None:
        return value if value is None else _strip(value, inner, path, out)
    if "oneOf" in schema:
        member = _union_member(schema, value)
        if isinstance(member, _Drop):
            return _DROP
        return value if member is None else _strip(value, member, path, out)
    if "anyOf" in schema:
        options = schema["anyOf"]
        objects = [o for o in options if _is_object_schema(o)]
        if isinstance(value, dict) and len(objects) > 1:
            return value
        for option in options:
            if option.get("type") == "array" and isinstance(value, list):
                return _strip(value, option, path, out)
            if _is_object_schema(option) and isinstance(value, dict):
                return _strip(value, option, path, out)
        return value
    if _is_object_schema(schema):
        if not isinstance(value, dict):
            return value
        props: dict[str, Schema] = schema["properties"]
        required = set(schema.get("required", ()))
        result: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            if sub is None:
                if schema.get("specOpen"):
                    result[key] = item
                else:
                    out.append((f"{path}/{key}", "field"))
                continue
            mark = len(out)
            child = _strip(item, sub, f"{path}/{key}", out)
            if isinstance(child, _Drop):
                del out[mark:]
                if key in required:
                    return _DROP
                out.append((f"{path}/{key}", "member"))
                continue
            result[key] = child
        return result
    if schema.get("type") == "array" and isinstance(value, list):
        items: Schema = schema.get("items", {})
        kept = []
        for index, entry in enumerate(value):
            mark = len(out)
            child = _strip(entry, items, f"{path}/{index}", out)
            if isinstance(child, _Drop):
                del out[mark:]
                out.append((f"{path}/{index}", "member"))
                continue
            kept.append(child)
        return kept
    if _is_record_schema(schema) and isinstance(value, dict):
        result = {}
        for key, item in value.items():
            child = _strip(item, schema["additionalProperties"], f"{path}/{key}", out)
            if isinstance(child, _Drop):
                out.append((f"{path}/{key}", "member"))
                continue
            result[key] = child
        return result
    return value


def strip_unknown(value: Any, schema: Schema) -> tuple[Any, list[tuple[str, str]]]:
    """Remove what ``schema`` does not describe.

    Returns ``(value, removed)`` where ``removed`` lists ``(path, what)``: ``what`` is
    ``"field"`` for an unknown key, ``"member"`` for a union member with an unknown tag.
    ``value`` is not modified. A value that is unrecognisable as a whole (an unknown union tag
    at the top) is returned unchanged with nothing removed: the validator rejects it.
    """
    removed: list[tuple[str, str]] = []
    result = _strip(value, schema, "", removed)
    if isinstance(result, _Drop):
        return value, []
    return result, removed


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return kind == "number" or float(value).is_integer()


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _validate(value: Any, schema: Schema, path: str, out: list[Issue]) -> None:
    where = path or "/"
    if schema.get("x-not-null") and value is None:
        out.append(Issue(where, "null", f"{where} is null"))
        return
    if "oneOf" in schema:
        member = _union_member(schema, value)
        if member is None or isinstance(member, _Drop):
            out.append(Issue(where, "invalid", f"{where} matches no member of its union"))
        else:
            _validate(value, member, path, out)
        return
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            trial: list[Issue] = []
            _validate(value, option, path, trial)
            if not trial:
                return
        kind: Literal["null", "invalid"] = "null" if value is None else "invalid"
        out.append(Issue(where, kind, f"{where} ({_describe(value)}) matches no allowed shape"))
        return
    expected = schema.get("type")
    if expected is not None and not _type_ok(value, expected):
        kind = "null" if value is None else "invalid"
        out.append(Issue(where, kind, f"{where} is {_describe(value)}, expected {expected}"))
        return
    if "const" in schema and value != schema["const"]:
        out.append(Issue(where, "invalid", f"{where} is {value!r}, expected {schema['const']!r}"))
    elif "enum" in schema and value not in schema["enum"]:
        out.append(Issue(where, "invalid", f"{where} is {value!r}, not one of {schema['enum']}"))
    if isinstance(value, str) and "pattern" in schema:
        if not _pattern(schema["pattern"]).search(value):
            out.append(Issue(where, "invalid", f"{where} does not match {schema['pattern']}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < schema.get("minimum", -math.inf) or value > schema.get("maximum", math.inf):
            out.append(Issue(where, "invalid", f"{where} = {value} is out of range"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(Issue(where, "invalid", f"{where} has too few items"))
        items = schema.get("items")
        if items is not None:
            for index, entry in enumerate(value):
                _validate(entry, items, f"{path}/{index}", out)
    if isinstance(value, dict):
        if _is_object_schema(schema):
            for key in schema.get("required", ()):
                if key not in value:
                    out.append(Issue(f"{path}/{key}", "missing", f"{path}/{key} is required"))
            for key, sub in schema["properties"].items():
                if key in value:
                    _validate(value[key], sub, f"{path}/{key}", out)
        elif _is_record_schema(schema):
            for key, item in value.items():
                _validate(item, schema["additionalProperties"], f"{path}/{key}", out)


def validate(value: Any, schema: Schema) -> list[Issue]:
    """Return every :class:`Issue` of ``value`` against ``schema`` (empty when valid)."""
    issues: list[Issue] = []
    _validate(value, schema, "", issues)
    return issues


_PURE_KEYS = frozenset({"type", "minimum", "maximum"})
_CONST_KEYS = frozenset({"type", "const", "enum"})
_VALID: dict[tuple[int, tuple[Any, ...]], Schema] = {}
"""Shapes of flat objects already found valid, per schema (the schema is kept in the value so
that its id stays unique); bounded by :data:`_VALID_MAX`."""
_VALID_MAX = 4096
_PLANS: dict[int, tuple[Schema, dict[str, tuple[Any, ...]]]] = {}


def _plan(schema: Schema) -> dict[str, tuple[Any, ...]]:
    """Per described property: ``("c",)`` (const / enum: the value decides), ``("p", low,
    high)`` (a plain type check, with a numeric range) or nothing (not cacheable)."""
    cached = _PLANS.get(id(schema))
    if cached is not None:
        return cached[1]
    plan: dict[str, tuple[Any, ...]] = {}
    for name, sub in schema["properties"].items():
        if ("const" in sub or "enum" in sub) and sub.keys() <= _CONST_KEYS:
            plan[name] = ("c",)
        elif sub.keys() <= _PURE_KEYS:
            plan[name] = ("p", sub.get("minimum", -math.inf), sub.get("maximum", math.inf))
    _PLANS[id(schema)] = (schema, plan)
    return plan


def _flat_key(value: Any, schema: Schema) -> tuple[Any, ...] | None:
    """A hashable shape of ``value`` that decides its validity against ``schema`` when no
    stripping applies, or ``None`` (nested values, patterns, unknown keys, open objects)."""
    if type(value) is not dict or "properties" not in schema or schema.get("specOpen"):
        return None
    plan = _plan(schema)
    key: list[Any] = []
    for name, item in value.items():
        step = plan.get(name)
        if step is None:
            return None
        kind = type(item)
        if step[0] == "c":
            if kind is dict or kind is list:
                return None
            key.append((name, kind, item))
        elif kind is str or kind is bool or item is None:
            key.append((name, kind))
        elif kind is int or kind is float:
            finite = math.isfinite(item)
            whole = finite and float(item).is_integer()
            key.append((name, whole, finite, step[1] <= item <= step[2]))
        else:
            return None
    return tuple(key)


def strip_and_validate(
    value: Any, schema: Schema
) -> tuple[Any, list[tuple[str, str]], list[Issue]]:
    """:func:`strip_unknown` then :func:`validate` (``(value, removed, issues)``).

    A flat object (only primitive values, every key described by a plain type, const or enum
    schema) whose shape was already found valid against the same schema is valid again: the
    result is returned without walking the schema. That keeps the per-event cost of the
    delta events that make up most of a stream small; the verdict is the same.
    """
    key = _flat_key(value, schema)
    cache_key = (id(schema), key) if key is not None else None
    if cache_key is not None and _VALID.get(cache_key) is schema:
        return value, [], []
    stripped, removed = strip_unknown(value, schema)
    issues = validate(stripped, schema)
    if cache_key is not None and not removed and not issues:
        if len(_VALID) >= _VALID_MAX:
            _VALID.clear()
        _VALID[cache_key] = schema
    return stripped, removed, issues


def validate_cached(value: Any, schema: Schema) -> list[Issue]:
    """:func:`validate` with the flat-shape cache of :func:`strip_and_validate` (no stripping:
    for the AI SDK's loose objects)."""
    key = _flat_key(value, schema)
    cache_key = (-id(schema), key) if key is not None else None
    if cache_key is not None and _VALID.get(cache_key) is schema:
        return []
    issues = validate(value, schema)
    if cache_key is not None and not issues:
        if len(_VALID) >= _VALID_MAX:
            _VALID.clear()
        _VALID[cache_key] = schema
    return issues
