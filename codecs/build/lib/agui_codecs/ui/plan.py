"""A compile plan: validated hints with every label resolved for one locale.

Built once per (hints, locale) and cached by the compiler; both the per-call data projection
(:mod:`.project`) and the component tree builder (:mod:`.layout`) read it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from .hints import FieldHint, UiHints
from .locale import date_pattern, message, pick_label

__all__ = ["MAX_TABLE_COLUMNS", "FieldPlan", "Plan", "build_plan"]

logger = logging.getLogger("agui_codecs.ui")

MAX_TABLE_COLUMNS: Final = 6
"""A table keeps its first six fields; the rest are dropped with a warning."""

_DEFAULT_FIELDS: Final[Mapping[str, tuple[tuple[str, str], ...]]] = {
    "status": (("status", "enum"), ("message", "text")),
    "link": (("title", "text"), ("url", "url"), ("description", "text")),
    "image": (("url", "image"), ("caption", "text")),
}


@dataclass(frozen=True, slots=True)
class FieldPlan:
    """A field with its label resolved.

    Attributes:
        labels: value → label for ``enum`` and ``bool`` (bool keys ``"true"``/``"false"``,
            defaulting to the built-in Yes/No); empty for other formats.
        pattern: the TR35 ``formatDate`` pattern for ``date``/``datetime``/``time``.
    """

    key: str
    tokens: tuple[str, ...]
    label: str
    format: str
    currency: str | None
    currency_tokens: tuple[str, ...] | None
    decimals: int | None
    labels: Mapping[str, str]
    pattern: str | None


@dataclass(frozen=True, slots=True)
class Plan:
    """Hints resolved for one locale.

    Attributes:
        fields: the fields to show (a table's first :data:`MAX_TABLE_COLUMNS`; defaults for
            status, link and image when the hints declare none).
        role: kind-specific field roles: ``state`` (status), ``url`` and ``label`` (link),
            ``url`` and ``caption`` (image); each a field key.
        showing: the built-in "Showing {shown} of {total}" template.
    """

    hints: UiHints
    locale: str
    kind: str
    title: str | None
    subtitle: str | None
    empty: str
    fields: tuple[FieldPlan, ...]
    role: Mapping[str, str]
    max_items: int
    language: str
    icons: Mapping[str, str]
    confirm_label: str
    cancel_label: str
    open_label: str
    showing: str
    dropped: tuple[str, ...]


def _field_plan(f: FieldHint, locale: str) -> FieldPlan:
    labels: dict[str, str] = {}
    if f.format == "bool":
        labels = {"true": message("yes", locale), "false": message("no", locale)}
    if f.format in ("enum", "bool") and f.enum:
        for value, label in f.enum.items():
            resolved = pick_label(label, locale)
            if resolved is not None:
                labels[value] = resolved
    return FieldPlan(
        key=f.key,
        tokens=f.tokens,
        label=pick_label(f.label, locale) or f.key,
        format=f.format,
        currency=f.currency,
        currency_tokens=f.currency_tokens,
        decimals=f.decimals,
        labels=labels,
        pattern=date_pattern(f.format, locale)
        if f.format in ("date", "datetime", "time")
        else None,
    )


def _default_fields(kind: str) -> tuple[FieldHint, ...]:
    return tuple(
        FieldHint(
            key=k,
            tokens=(k,),
            label=None,
            format=fmt,
            currency=None,
            currency_tokens=None,
            decimals=None,
            enum=None,
        )
        for k, fmt in _DEFAULT_FIELDS.get(kind, ())
    )


def _roles(kind: str, fields: tuple[FieldPlan, ...]) -> dict[str, str]:
    role: dict[str, str] = {}
    if not fields:
        return role
    if kind == "status":
        role["state"] = fields[0].key
    elif kind in ("link", "image"):
        target = "url" if kind == "link" else "image"
        url = next(f.key for f in fields if f.format == target)
        role["url"] = url
        text = next(
            (f.key for f in fields if f.key != url and f.format in ("text", "markdown")), None
        )
        if text is not None:
            role["label" if kind == "link" else "caption"] = text
    return role


def build_plan(hints: UiHints, locale: str) -> Plan:
    """Resolve ``hints`` for ``locale``.

    A table with more than :data:`MAX_TABLE_COLUMNS` fields keeps the first ones; the dropped
    keys are in :attr:`Plan.dropped` and logged once per plan (plans are cached).
    """
    source = hints.fields or _default_fields(hints.kind)
    dropped: tuple[str, ...] = ()
    if hints.kind == "table" and len(source) > MAX_TABLE_COLUMNS:
        dropped = tuple(f.key for f in source[MAX_TABLE_COLUMNS:])
        source = source[:MAX_TABLE_COLUMNS]
        logger.warning(
            "ui_hints table has %d fields; only the first %d are shown, dropped: %s",
            len(hints.fields),
            MAX_TABLE_COLUMNS,
            ", ".join(dropped),
        )
    if hints.kind == "status" and hints.fields and hints.fields[0].format not in ("enum", "bool"):
        # The state is shown as a label: a plain-text first field is treated as enum.
        source = (replace(source[0], format="enum"), *source[1:])
    fields = tuple(_field_plan(f, locale) for f in source)
    language = hints.language or ("diff" if hints.kind == "diff" else "")
    return Plan(
        hints=hints,
        locale=locale,
        kind=hints.kind,
        title=pick_label(hints.title, locale),
        subtitle=pick_label(hints.subtitle, locale),
        empty=pick_label(hints.empty, locale) or message("no_items", locale),
        fields=fields,
        role=_roles(hints.kind, fields),
        max_items=hints.max_items,
        language=language,
        icons=hints.icons,
        confirm_label=pick_label(hints.confirm_label, locale) or message("confirm", locale),
        cancel_label=pick_label(hints.cancel_label, locale) or message("cancel", locale),
        open_label=message("open_link", locale),
        showing=message("showing", locale),
        dropped=dropped,
    )
