"""Per-call data projection: tool output + :class:`~.plan.Plan` → the surface's data model.

This is the only work done per tool call once a plan and a component tree are cached. The data
model holds only what the hints reference, capped at ``max_items`` (lists) and at fixed string
sizes, with values shaped for the A2UI v0.9 basic-catalog functions the tree calls:

* number / percent / currency: a JSON number (percent times 100); ``currency_path`` codes under
  ``<key>-cur``. ``formatNumber``/``formatCurrency`` reject a missing value (``@a2ui/web_core``
  zod ``z.coerce.number()`` gives NaN → "Validation failed"), so when any shown item lacks a
  usable number the field is put in the *fallback* set: the tree then binds that field to a
  server-formatted string instead, for every item (a template cannot differ per item).
* date / datetime / time: an ISO 8601 string ``formatDate`` parses (date-only values become
  local midnight, times get a 1970-01-01 date); missing → ``null`` (renders empty). A string
  that is not ISO puts the field in the fallback set (shown as given).
* enum / bool: the server-resolved label. text / markdown / email / url: a string.

Values that make the UI unusable or unsafe raise :class:`UiDataError` with a ``reason``:
``data_not_found`` (the ``data`` pointer selects nothing), ``data_mismatch`` (a list where a
record is expected, ...), ``unsafe_url`` (a ``javascript:`` or other non-http(s) link or image),
``too_many_items`` (an array or object of :data:`MAX_SOURCE_ITEMS` or more entries),
``too_large`` (the projected strings exceed :data:`MAX_DATA_CHARS`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import orjson

from .plan import FieldPlan, Plan
from .pointer import MISSING, resolve

__all__ = [
    "MAX_CODE_CHARS",
    "MAX_DATA_CHARS",
    "MAX_SOURCE_ITEMS",
    "MAX_TEXT_CHARS",
    "Projection",
    "UiDataError",
    "project",
]

MAX_SOURCE_ITEMS: Final = 10_000
"""An array (or key_value object) with this many entries or more gets no UI."""
MAX_TEXT_CHARS: Final = 2_000
"""Longer text values are cut and end with ``…``."""
MAX_CODE_CHARS: Final = 20_000
"""Longer code / diff text is cut and ends with a ``…`` line."""
MAX_DATA_CHARS: Final = 256 * 1024
"""Upper bound on the characters of all projected strings of one surface."""

_NUMERIC: Final = frozenset({"number", "percent", "currency"})
_DATES: Final = frozenset({"date", "datetime", "time"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_STRIP = "".join(chr(c) for c in range(0x21))  # C0 controls and space, as the URL parser does
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$"
)
_TIME = re.compile(r"^\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$")
_CURRENCY = re.compile(r"^[A-Z]{3}$")
_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$")
_BACKTICKS = re.compile(r"`+")
_TEXT_LINK_SCHEMES: Final = frozenset({"http", "https", "mailto", "tel"})

_ICONS: Final[Mapping[str, str]] = {
    **dict.fromkeys(
        (
            "ok",
            "success",
            "succeeded",
            "done",
            "complete",
            "completed",
            "active",
            "approved",
            "paid",
            "delivered",
            "resolved",
            "passed",
            "healthy",
            "up",
            "confirmed",
            "true",
        ),
        "check",
    ),
    **dict.fromkeys(
        (
            "error",
            "failed",
            "failure",
            "fail",
            "rejected",
            "down",
            "unhealthy",
            "critical",
            "false",
        ),
        "error",
    ),
    **dict.fromkeys(
        ("warning", "warn", "degraded", "partial", "blocked", "overdue", "expired"), "warning"
    ),
    **dict.fromkeys(
        (
            "pending",
            "running",
            "in_progress",
            "in progress",
            "processing",
            "queued",
            "waiting",
            "scheduled",
            "started",
        ),
        "refresh",
    ),
    **dict.fromkeys(("cancelled", "canceled", "stopped", "aborted"), "close"),
}


class UiDataError(Exception):
    """The tool output does not fit the hints (the run goes on; the UI is dropped).

    Attributes:
        reason: stable snake_case reason (see the module docstring), used as counter label.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Projection:
    """The per-call part of a surface.

    Attributes:
        data: the data model (``updateDataModel.value`` at path ``/``).
        variant: (empty, truncated, fallback field keys): selects the cached component tree.
        url: the link target for ``link`` surfaces (the basic catalog's ``openUrl`` takes a
            literal URL, so it is set on the cached tree per call), else None.
    """

    data: dict[str, Any]
    variant: tuple[bool, bool, tuple[str, ...]]
    url: str | None = None


class _Budget:
    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left = MAX_DATA_CHARS

    def text(self, value: Any) -> str:
        if isinstance(value, str):
            s = value
        elif value is None or value is MISSING:
            return ""
        elif isinstance(value, bool):
            s = "true" if value else "false"
        elif isinstance(value, (int, float)):
            s = str(value)
        else:
            try:
                s = orjson.dumps(value).decode()
            except TypeError:
                s = str(value)
        if len(s) > MAX_TEXT_CHARS:
            s = s[: MAX_TEXT_CHARS - 1] + "…"
        self.spend(len(s))
        return s

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            raise UiDataError("too_large", f"projected text exceeds {MAX_DATA_CHARS} characters")


def _clean_url(value: str) -> tuple[str, str]:
    cleaned = value.strip(_STRIP).replace("\t", "").replace("\n", "").replace("\r", "")
    m = _SCHEME.match(cleaned)
    return cleaned, (m.group(1).lower() if m else "")


def web_url(value: Any, what: str) -> str:
    """An absolute http(s) URL for links and images.

    Raises:
        UiDataError: ``unsafe_url`` for another scheme (``javascript:``, ``data:``, ...),
            ``data_mismatch`` for a non-string or a relative URL.
    """
    if not isinstance(value, str):
        raise UiDataError("data_mismatch", f"{what} is not a URL string")
    cleaned, scheme = _clean_url(value)
    if scheme in ("http", "https"):
        return cleaned
    if scheme:
        raise UiDataError("unsafe_url", f"{what} has scheme {scheme!r}; only http(s) is allowed")
    raise UiDataError("data_mismatch", f"{what} is not an absolute http(s) URL")


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str) and len(value) < 64 and _DECIMAL.match(value.strip()):
        f = float(value)
        return f if math.isfinite(f) else None
    return None


def _fmt_number(n: float | int, decimals: int | None) -> str:
    if decimals is not None:
        return f"{n:,.{decimals}f}"
    if isinstance(n, int) or float(n).is_integer():
        return f"{int(n):,}"
    return f"{n:,.3f}".rstrip("0").rstrip(".")


def _iso(value: Any, fmt: str) -> str | bool | None:
    """ISO string for formatDate; None when missing; False when not parseable."""
    if value is None or value is MISSING or value == "":
        return None
    if not isinstance(value, str):
        return False
    v = value.strip()
    if _DATE.match(v):
        return v + "T00:00:00"
    if _DATETIME.match(v):
        return v.replace(" ", "T", 1)
    if fmt == "time" and _TIME.match(v):
        return "1970-01-01T" + (v if v.count(":") == 2 else v + ":00")
    return False


def _enum_key(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return str(int(value))
    return None


def _label(f: FieldPlan, value: Any, budget: _Budget) -> str:
    key = _enum_key(value)
    if f.format == "bool" and isinstance(value, str):
        key = value.strip().lower()
    if key is not None and key in f.labels:
        label = f.labels[key]
        budget.spend(len(label))
        return label
    return budget.text(value)


def _currency_code(f: FieldPlan, item: Any) -> str | None:
    if f.currency_tokens is not None:
        code = resolve(item, f.currency_tokens)
        if isinstance(code, str) and _CURRENCY.match(code.strip().upper()):
            return code.strip().upper()
        return None
    return f.currency


def _value(
    f: FieldPlan, item: Any, out: dict[str, Any], fallback: set[str], budget: _Budget
) -> None:
    raw = resolve(item, f.tokens)
    fmt = f.format
    if fmt in _NUMERIC:
        n = _number(raw)
        if n is None:
            fallback.add(f.key)
            return
        out[f.key] = n * 100 if fmt == "percent" else n
        if f.currency_tokens is not None:
            code = _currency_code(f, item)
            if code is None:
                fallback.add(f.key)
            else:
                out[f.key + "-cur"] = code
    elif fmt in _DATES:
        iso = _iso(raw, fmt)
        if iso is False:
            fallback.add(f.key)
        else:
            out[f.key] = iso
            if isinstance(iso, str):
                budget.spend(len(iso))
    elif fmt in ("enum", "bool"):
        out[f.key] = _label(f, raw, budget)
    elif fmt == "image":
        out[f.key] = "" if raw is None or raw is MISSING else web_url(raw, f"field {f.key!r}")
    elif fmt == "url" and isinstance(raw, str):
        cleaned, scheme = _clean_url(raw)
        if scheme and scheme not in _TEXT_LINK_SCHEMES:
            raise UiDataError("unsafe_url", f"field {f.key!r} has scheme {scheme!r}")
        out[f.key] = budget.text(cleaned)
    else:
        out[f.key] = budget.text(raw)


def _fallback_text(f: FieldPlan, item: Any, budget: _Budget) -> str:
    raw = resolve(item, f.tokens)
    if f.format in _NUMERIC:
        n = _number(raw)
        if n is None:
            return budget.text(raw)
        if f.format == "percent":
            return budget.text(
                _fmt_number(n * 100, f.decimals if f.decimals is not None else 0) + "%"
            )
        if f.format == "currency":
            code = _currency_code(f, item)
            amount = _fmt_number(n, f.decimals if f.decimals is not None else 2)
            return budget.text(f"{amount} {code}" if code else amount)
        return budget.text(_fmt_number(n, f.decimals))
    return budget.text(raw)


def _project_items(
    plan: Plan, items: list[Any], budget: _Budget
) -> tuple[list[dict[str, Any]], set[str]]:
    fields = plan.fields
    whole_item = any(not f.tokens for f in fields)
    fallback: set[str] = set()
    out: list[dict[str, Any]] = []
    for index, item in enumerate(items):
        if not whole_item and type(item) is not dict and not isinstance(item, Mapping):
            raise UiDataError(
                "data_mismatch", f"item {index} is a {type(item).__name__}, not an object"
            )
        row: dict[str, Any] = {}
        for f in fields:
            _value(f, item, row, fallback, budget)
        out.append(row)
    if fallback:
        for f in fields:
            if f.key in fallback:
                for row, item in zip(out, items, strict=True):
                    row[f.key] = _fallback_text(f, item, budget)
                    row.pop(f.key + "-cur", None)
    return out, fallback


def _expect_object(target: Any, kind: str) -> Mapping[str, Any]:
    if isinstance(target, Mapping):
        return target
    what = "a list" if isinstance(target, list) else f"a {type(target).__name__}"
    raise UiDataError("data_mismatch", f"{kind} expects an object, the data is {what}")


def _list(plan: Plan, target: Any, budget: _Budget) -> Projection:
    if not isinstance(target, list):
        what = "an object" if isinstance(target, Mapping) else f"a {type(target).__name__}"
        raise UiDataError("data_mismatch", f"{plan.kind} expects an array, the data is {what}")
    if len(target) >= MAX_SOURCE_ITEMS:
        raise UiDataError("too_many_items", f"{len(target)} items (limit {MAX_SOURCE_ITEMS - 1})")
    shown = target[: plan.max_items]
    rows, fallback = _project_items(plan, shown, budget)
    data: dict[str, Any] = {"items": rows}
    truncated = len(target) > len(shown)
    if truncated:
        data["more"] = plan.showing.format(shown=len(shown), total=len(target))
    return Projection(data, (not rows, truncated, tuple(sorted(fallback))))


def _key_value(plan: Plan, target: Any, budget: _Budget) -> Projection:
    obj = _expect_object(target, "key_value")
    if len(obj) >= MAX_SOURCE_ITEMS:
        raise UiDataError("too_many_items", f"{len(obj)} entries (limit {MAX_SOURCE_ITEMS - 1})")
    by_key = {f.key: f for f in plan.fields}
    skip_hints = not plan.hints.data_tokens
    rows: list[dict[str, str]] = []
    total = 0
    for key, value in obj.items():
        if skip_hints and key == "ui_hints":
            continue
        total += 1
        if len(rows) >= plan.max_items:
            continue
        f = by_key.get(key)
        label = f.label if f is not None else str(key)
        budget.spend(len(label))
        if f is not None and f.format in ("enum", "bool"):
            text = _label(f, value, budget)
        else:
            text = budget.text(value)
        rows.append({"label": label, "value": text})
    data: dict[str, Any] = {"rows": rows}
    truncated = total > len(rows)
    if truncated:
        data["more"] = plan.showing.format(shown=len(rows), total=total)
    return Projection(data, (not rows, truncated, ()))


def _record(plan: Plan, target: Any, budget: _Budget, tool_call_id: str) -> Projection:
    obj = _expect_object(target, plan.kind)
    item: dict[str, Any] = {}
    fallback: set[str] = set()
    for f in plan.fields:
        _value(f, obj, item, fallback, budget)
    for f in plan.fields:
        if f.key in fallback:
            item[f.key] = _fallback_text(f, obj, budget)
            item.pop(f.key + "-cur", None)
    data: dict[str, Any] = {"item": item}
    if plan.kind == "confirm":
        data["toolCallId"] = tool_call_id
    return Projection(data, (False, False, tuple(sorted(fallback))))


def _status(plan: Plan, target: Any, budget: _Budget) -> Projection:
    if isinstance(target, list):
        raise UiDataError(
            "data_mismatch", "status expects an object or a value, the data is a list"
        )
    state = plan.fields[0]
    obj = target if isinstance(target, Mapping) else {}
    raw = resolve(target, state.tokens) if isinstance(target, Mapping) else target
    if raw is None or raw is MISSING:
        raise UiDataError("data_mismatch", f"status value {state.key!r} is missing")
    item: dict[str, Any] = {state.key: _label(state, raw, budget)}
    fallback: set[str] = set()
    for f in plan.fields[1:]:
        _value(f, obj, item, fallback, budget)
    for f in plan.fields[1:]:
        if f.key in fallback:
            item[f.key] = _fallback_text(f, obj, budget)
            item.pop(f.key + "-cur", None)
    key = _enum_key(raw) or ""
    icon = (
        plan.icons.get(key)
        or plan.icons.get(key.lower())
        or _ICONS.get(key.strip().lower(), "info")
    )
    return Projection({"item": item, "icon": icon}, (False, False, tuple(sorted(fallback))))


def _url_item(plan: Plan, target: Any, budget: _Budget) -> Projection:
    url_key = plan.role["url"]
    url_field = next(f for f in plan.fields if f.key == url_key)
    if isinstance(target, str):
        obj: Mapping[str, Any] = {}
        raw: Any = target
    else:
        obj = _expect_object(target, plan.kind)
        raw = resolve(obj, url_field.tokens)
    url = web_url(raw, f"{plan.kind} {url_key!r}")
    budget.spend(len(url))
    item: dict[str, Any] = {url_key: url}
    fallback: set[str] = set()
    for f in plan.fields:
        if f.key != url_key:
            _value(f, obj, item, fallback, budget)
    for f in plan.fields:
        if f.key in fallback:
            item[f.key] = _fallback_text(f, obj, budget)
            item.pop(f.key + "-cur", None)
    label_key = plan.role.get("label")
    if plan.kind == "link" and label_key is not None and not item.get(label_key):
        item[label_key] = url
    return Projection(
        {"item": item},
        (False, False, tuple(sorted(fallback))),
        url if plan.kind == "link" else None,
    )


def _code(plan: Plan, target: Any, budget: _Budget) -> Projection:
    if not isinstance(target, str):
        what = "a list" if isinstance(target, list) else f"a {type(target).__name__}"
        raise UiDataError("data_mismatch", f"{plan.kind} expects a string, the data is {what}")
    text = target if len(target) <= MAX_CODE_CHARS else target[:MAX_CODE_CHARS] + "\n…"
    if text.endswith("\n"):
        text = text[:-1]  # the closing fence goes on the next line anyway
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    fenced = f"{fence}{plan.language}\n{text}\n{fence}"
    budget.spend(len(fenced))
    return Projection({"code": fenced}, (False, False, ()))


def project(plan: Plan, output: Any, *, tool_call_id: str) -> Projection:
    """Project ``output`` (the decoded tool output) for ``plan``.

    Raises:
        UiDataError: the output does not fit (see the module docstring for the reasons).
    """
    target = resolve(output, plan.hints.data_tokens)
    if target is MISSING:
        pointer = "".join("/" + t for t in plan.hints.data_tokens)
        raise UiDataError("data_not_found", f"data pointer {pointer!r} selects nothing")
    budget = _Budget()
    kind = plan.kind
    if kind in ("record_list", "table"):
        return _list(plan, target, budget)
    if kind in ("record", "confirm"):
        return _record(plan, target, budget, tool_call_id)
    if kind == "key_value":
        return _key_value(plan, target, budget)
    if kind == "status":
        return _status(plan, target, budget)
    if kind in ("link", "image"):
        return _url_item(plan, target, budget)
    return _code(plan, target, budget)
