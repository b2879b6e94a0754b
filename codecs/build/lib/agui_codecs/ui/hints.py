"""``ui_hints`` v1: the model, its validation, and where hints come from.

The format is published as a JSON Schema shipped in this package
(``ui_hints.v1.schema.json``, :func:`hints_schema`); the same schema validates hints declared in
the route config (at start-up, :func:`validate_route_hints`) and hints returned by a tool call
(per call, once per distinct hints object: the compiler caches the parsed result).

Hints come from, in order of preference:

1. the route config, per tool name (validated at start-up; a bad hint is a config error naming
   the tool and the JSON Pointer of the offending value);
2. a ``ui_hints`` key in a JSON object tool result (:func:`hints_from_output`);
3. ``metadata.tool_agent_output.ui_hints`` on the TOOL_CALL_RESULT, as in the seed protocol
   (:func:`hints_from_metadata`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

import orjson

from .pointer import escape_token, parse_pointer

if TYPE_CHECKING:  # jsonschema is imported on first validation, not with the codecs
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

__all__ = [
    "FORMATS",
    "KINDS",
    "FieldHint",
    "Label",
    "UiHints",
    "UiHintsConfigError",
    "UiHintsError",
    "canonical_key",
    "hints_from_metadata",
    "hints_from_output",
    "hints_schema",
    "parse_hints",
    "validate_route_hints",
]

KINDS: Final = frozenset(
    {
        "record",
        "record_list",
        "table",
        "key_value",
        "status",
        "link",
        "code",
        "diff",
        "image",
        "confirm",
    }
)
"""The ``kind`` values of ui_hints v1."""

FORMATS: Final = frozenset(
    {
        "text",
        "number",
        "percent",
        "currency",
        "date",
        "datetime",
        "time",
        "bool",
        "enum",
        "url",
        "email",
        "image",
        "markdown",
    }
)
"""The field ``format`` values of ui_hints v1."""

Label = str | Mapping[str, str]
"""A label: a plain string or a ``{BCP 47 locale: string}`` map."""

_SCHEMA_FILE: Final = "ui_hints.v1.schema.json"


class UiHintsError(ValueError):
    """Hints that do not follow ui_hints v1.

    Attributes:
        code: ``"UI_HINTS_INVALID"``.
        pointer: RFC 6901 JSON Pointer of the offending value inside the hints (``""`` for the
            hints object itself).
        message: one-line description.
    """

    code = "UI_HINTS_INVALID"

    def __init__(self, message: str, *, pointer: str = "") -> None:
        super().__init__(f"{message} (at {pointer or '/'})")
        self.message = message
        self.pointer = pointer


class UiHintsConfigError(UiHintsError):
    """A route config declares invalid hints for a tool (raised at start-up).

    Attributes:
        tool: the tool name the hints are declared for.
    """

    code = "UI_HINTS_CONFIG_INVALID"

    def __init__(self, message: str, *, tool: str, pointer: str = "") -> None:
        super().__init__(message, pointer=pointer)
        self.tool = tool
        self.args = (f"ui_hints for tool {tool!r}: {message} (at {pointer or '/'})",)


@dataclass(frozen=True, slots=True)
class FieldHint:
    """One ``fields[]`` entry. ``tokens`` is ``path`` parsed (default ``/<key>``)."""

    key: str
    tokens: tuple[str, ...]
    label: Label | None
    format: str
    currency: str | None
    currency_tokens: tuple[str, ...] | None
    decimals: int | None
    enum: Mapping[str, Label] | None


@dataclass(frozen=True, slots=True)
class UiHints:
    """Validated ui_hints v1.

    Attributes:
        cache_key: canonical JSON of the source hints (sorted keys); equal hints share compiled
            trees.
        data_tokens: ``data`` parsed into JSON Pointer tokens.
    """

    cache_key: bytes
    kind: str
    data_tokens: tuple[str, ...]
    title: Label | None
    subtitle: Label | None
    empty: Label | None
    fields: tuple[FieldHint, ...]
    max_items: int
    language: str | None
    icons: Mapping[str, str]
    confirm_label: Label | None
    cancel_label: Label | None


@functools.cache
def hints_schema() -> dict[str, Any]:
    """The ui_hints v1 JSON Schema (draft 2020-12) shipped with the package, as a dict."""
    text = resources.files(__package__).joinpath(_SCHEMA_FILE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(hints_schema())


def _error_pointer(error: ValidationError) -> str:
    return "".join("/" + escape_token(str(p)) for p in error.absolute_path)


def canonical_key(raw: Any) -> bytes:
    """Canonical JSON bytes of ``raw`` (sorted keys), the cache identity of a hints object.

    Raises:
        UiHintsError: ``raw`` is not JSON-serializable.
    """
    try:
        return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)
    except TypeError as exc:
        raise UiHintsError(f"hints are not JSON: {exc}") from exc


def parse_hints(raw: Any, *, cache_key: bytes | None = None) -> UiHints:
    """Validate ``raw`` (decoded JSON) against ui_hints v1 and return the model.

    Beyond the schema: field keys must be unique.

    Raises:
        UiHintsError: with the JSON Pointer of the first (most relevant) problem.
    """
    from jsonschema.exceptions import best_match

    key = cache_key if cache_key is not None else canonical_key(raw)
    error = best_match(_validator().iter_errors(raw))
    if error is not None:
        raise UiHintsError(error.message, pointer=_error_pointer(error))
    fields: list[FieldHint] = []
    seen: set[str] = set()
    for index, f in enumerate(raw.get("fields") or ()):
        name = f["key"]
        if name in seen:
            raise UiHintsError(f"duplicate field key {name!r}", pointer=f"/fields/{index}/key")
        seen.add(name)
        currency_path = f.get("currency_path")
        fields.append(
            FieldHint(
                key=name,
                tokens=parse_pointer(f["path"]) if "path" in f else (name,),
                label=f.get("label"),
                format=f.get("format", "text"),
                currency=f.get("currency"),
                currency_tokens=parse_pointer(currency_path) if currency_path is not None else None,
                decimals=f.get("decimals"),
                enum=f.get("enum"),
            )
        )
    return UiHints(
        cache_key=key,
        kind=raw["kind"],
        data_tokens=parse_pointer(raw.get("data", "")),
        title=raw.get("title"),
        subtitle=raw.get("subtitle"),
        empty=raw.get("empty"),
        fields=tuple(fields),
        max_items=raw.get("max_items", 25),
        language=raw.get("language"),
        icons=raw.get("icons") or {},
        confirm_label=raw.get("confirm_label"),
        cancel_label=raw.get("cancel_label"),
    )


def validate_route_hints(tool_hints: Mapping[str, Any]) -> dict[str, UiHints]:
    """Validate the hints a route config declares per tool name (call at start-up).

    Args:
        tool_hints: ``{tool name: hints object}``.

    Returns:
        ``{tool name: UiHints}``, ready to pass to the compiler.

    Raises:
        UiHintsConfigError: the first tool (in mapping order) with invalid hints; ``tool`` and
            ``pointer`` say where.
    """
    out: dict[str, UiHints] = {}
    for tool, raw in tool_hints.items():
        try:
            out[tool] = parse_hints(raw)
        except UiHintsError as exc:
            raise UiHintsConfigError(exc.message, tool=tool, pointer=exc.pointer) from exc
    return out


def hints_from_output(output: Any) -> Any | None:
    """The ``ui_hints`` value of a decoded JSON tool result, or None.

    Only a JSON object with a ``ui_hints`` key qualifies; the value is returned unvalidated.
    """
    if isinstance(output, Mapping):
        return output.get("ui_hints")
    return None


def hints_from_metadata(metadata: Mapping[str, Any] | None) -> Any | None:
    """``metadata.tool_agent_output.ui_hints`` of a TOOL_CALL_RESULT (seed protocol), or None."""
    if not isinstance(metadata, Mapping):
        return None
    tool_agent_output = metadata.get("tool_agent_output")
    if isinstance(tool_agent_output, Mapping):
        return tool_agent_output.get("ui_hints")
    return None
