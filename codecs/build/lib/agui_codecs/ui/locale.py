"""Request locale resolution and per-locale labels for compiled UI.

The locale of a request comes from ``RunAgentInput.forwardedProps.locale`` (AG-UI; wins), else
the HTTP ``Accept-Language`` header (RFC 9110 §12.5.4, q-values honoured), else ``en``. Tags
are normalized BCP 47 (RFC 5646) spellings limited to language[-script][-region]
(``de_at`` → ``de-AT``, ``zh-hant-tw`` → ``zh-Hant-TW``); anything unparsable is ignored.

A hint label is a string or a ``{locale: string}`` map; :func:`pick_label` chooses the exact tag,
then each shorter prefix (``zh-Hant-TW`` → ``zh-Hant`` → ``zh``), then ``en`` (or any ``en-*``),
then the map's first entry. The small built-in vocabulary (Yes/No, Confirm/Cancel, ...) and the
date patterns follow the same fallback.

Date patterns are Unicode TR35 patterns for the A2UI v0.9 ``formatDate`` function. Renderers
format them with date-fns without a locale (``@a2ui/web_core`` 0.10/0.11
``basic_functions.js``), so ``MMM`` is always an English month name: only ``en`` patterns use
month names, the others are numeric.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "DEFAULT_LOCALE",
    "date_pattern",
    "message",
    "normalize_locale",
    "pick_label",
    "resolve_locale",
]

DEFAULT_LOCALE: Final = "en"

_TAG = re.compile(
    r"^([A-Za-z]{2,3})(?:[-_]([A-Za-z]{4}))?(?:[-_]([A-Za-z]{2}|[0-9]{3}))?(?:[-_].*)?$"
)
_MAX_HEADER = 1024  # an Accept-Language longer than this is truncated before parsing


def normalize_locale(tag: object) -> str | None:
    """Return the normalized ``language[-Script][-REGION]`` form of ``tag``, or None.

    Extensions and variants after the region are dropped; ``*`` and junk give None.
    """
    if not isinstance(tag, str) or len(tag) > 64:
        return None
    m = _TAG.match(tag.strip())
    if m is None:
        return None
    lang, script, region = m.groups()
    out = lang.lower()
    if script:
        out += "-" + script.title()
    if region:
        out += "-" + region.upper()
    return out


def _accept_language(header: str) -> str | None:
    best: tuple[float, int, str] | None = None
    for index, part in enumerate(header[:_MAX_HEADER].split(",")):
        pieces = part.strip().split(";")
        tag = normalize_locale(pieces[0])
        if tag is None:
            continue
        q = 1.0
        for param in pieces[1:]:
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q <= 0:
            continue
        key = (q, -index, tag)
        if best is None or key[:2] > best[:2]:
            best = key
    return best[2] if best else None


def resolve_locale(
    forwarded_props: Mapping[str, Any] | None = None, accept_language: str | None = None
) -> str:
    """Return the request locale: ``forwardedProps.locale``, else ``Accept-Language``, else en.

    Args:
        forwarded_props: ``RunAgentInput.forwardedProps`` (any mapping; non-string ``locale``
            values are ignored).
        accept_language: the raw ``Accept-Language`` header value.
    """
    if forwarded_props:
        tag = normalize_locale(forwarded_props.get("locale"))
        if tag:
            return tag
    if accept_language:
        tag = _accept_language(accept_language)
        if tag:
            return tag
    return DEFAULT_LOCALE


def _candidates(locale: str) -> list[str]:
    parts = locale.split("-")
    return ["-".join(parts[:n]) for n in range(len(parts), 0, -1)]


def pick_label(label: str | Mapping[str, str] | None, locale: str) -> str | None:
    """Resolve a hint label for ``locale`` (see the module docstring for the fallback order).

    Map keys are compared after :func:`normalize_locale`, so ``de_DE`` and ``de-de`` match.
    """
    if label is None or isinstance(label, str):
        return label
    if not label:
        return None
    table: dict[str, str] = {}
    for key, value in label.items():
        norm = normalize_locale(key)
        if norm is not None and norm not in table:
            table[norm] = value
    for candidate in [*_candidates(locale), DEFAULT_LOCALE]:
        if candidate in table:
            return table[candidate]
    for key, value in table.items():
        if key.startswith(DEFAULT_LOCALE + "-"):
            return value
    return next(iter(label.values()))


# Built-in vocabulary. "showing" takes {shown} and {total}.
_MESSAGES: Final[dict[str, dict[str, str]]] = {
    "yes": {
        "en": "Yes",
        "de": "Ja",
        "fr": "Oui",
        "es": "Sí",
        "it": "Sì",
        "pt": "Sim",
        "nl": "Ja",
        "ja": "はい",
        "zh": "是",
    },
    "no": {
        "en": "No",
        "de": "Nein",
        "fr": "Non",
        "es": "No",
        "it": "No",
        "pt": "Não",
        "nl": "Nee",
        "ja": "いいえ",
        "zh": "否",
    },
    "confirm": {
        "en": "Confirm",
        "de": "Bestätigen",
        "fr": "Confirmer",
        "es": "Confirmar",
        "it": "Conferma",
        "pt": "Confirmar",
        "nl": "Bevestigen",
        "ja": "確認",
        "zh": "确认",
    },
    "cancel": {
        "en": "Cancel",
        "de": "Abbrechen",
        "fr": "Annuler",
        "es": "Cancelar",
        "it": "Annulla",
        "pt": "Cancelar",
        "nl": "Annuleren",
        "ja": "キャンセル",
        "zh": "取消",
    },
    "open_link": {
        "en": "Open link",
        "de": "Link öffnen",
        "fr": "Ouvrir le lien",
        "es": "Abrir enlace",
        "it": "Apri link",
        "pt": "Abrir link",
        "nl": "Link openen",
        "ja": "リンクを開く",
        "zh": "打开链接",
    },
    "no_items": {
        "en": "No items",
        "de": "Keine Einträge",
        "fr": "Aucun élément",
        "es": "Sin elementos",
        "it": "Nessun elemento",
        "pt": "Nenhum item",
        "nl": "Geen items",
        "ja": "項目はありません",
        "zh": "没有项目",
    },
    "showing": {
        "en": "Showing {shown} of {total}",
        "de": "{shown} von {total} angezeigt",
        "fr": "{shown} sur {total} affichés",
        "es": "Mostrando {shown} de {total}",
        "it": "{shown} di {total} mostrati",
        "pt": "Mostrando {shown} de {total}",
        "nl": "{shown} van {total} getoond",
        "ja": "{total} 件中 {shown} 件を表示",
        "zh": "显示 {total} 项中的 {shown} 项",
    },
}

# (date, datetime, time) TR35 patterns per language.
_DATE_PATTERNS: Final[dict[str, tuple[str, str, str]]] = {
    "en": ("MMM d, yyyy", "MMM d, yyyy, h:mm a", "h:mm a"),
    "en-GB": ("d MMM yyyy", "d MMM yyyy, HH:mm", "HH:mm"),
    "de": ("dd.MM.yyyy", "dd.MM.yyyy, HH:mm", "HH:mm"),
    "fr": ("dd/MM/yyyy", "dd/MM/yyyy HH:mm", "HH:mm"),
    "es": ("dd/MM/yyyy", "dd/MM/yyyy, HH:mm", "HH:mm"),
    "it": ("dd/MM/yyyy", "dd/MM/yyyy, HH:mm", "HH:mm"),
    "pt": ("dd/MM/yyyy", "dd/MM/yyyy, HH:mm", "HH:mm"),
    "nl": ("dd-MM-yyyy", "dd-MM-yyyy HH:mm", "HH:mm"),
    "ja": ("yyyy/MM/dd", "yyyy/MM/dd HH:mm", "HH:mm"),
    "zh": ("yyyy/MM/dd", "yyyy/MM/dd HH:mm", "HH:mm"),
}


def message(name: str, locale: str) -> str:
    """A built-in UI string (``yes``, ``no``, ``confirm``, ``cancel``, ``open_link``,
    ``no_items``, ``showing``) in ``locale``, falling back to English.

    Raises:
        KeyError: unknown ``name``.
    """
    result = pick_label(_MESSAGES[name], locale)
    assert result is not None
    return result


def date_pattern(kind: str, locale: str) -> str:
    """The TR35 pattern for ``kind`` (``date``, ``datetime`` or ``time``) in ``locale``.

    Raises:
        KeyError: unknown ``kind``.
    """
    index = (
        ("date", "datetime", "time").index(kind) if kind in ("date", "datetime", "time") else None
    )
    if index is None:
        raise KeyError(kind)
    for candidate in _candidates(locale):
        if candidate in _DATE_PATTERNS:
            return _DATE_PATTERNS[candidate][index]
    return _DATE_PATTERNS[DEFAULT_LOCALE][index]
