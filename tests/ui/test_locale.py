"""Request locale resolution (forwardedProps.locale, Accept-Language, en) and label choice."""

from __future__ import annotations

from typing import Any

import pytest

from agui_codecs.ui import UiSchemaCompiler, normalize_locale, pick_label, resolve_locale

from .examples import CALENDAR, ORDERS


@pytest.mark.parametrize(
    ("tag", "expected"),
    [
        ("de", "de"),
        ("de_at", "de-AT"),
        ("DE-at", "de-AT"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("es-419", "es-419"),
        ("en-US-x-private", "en-US"),
        ("*", None),
        ("", None),
        ("12", None),
        (None, None),
        (3, None),
    ],
)
def test_locale_tags_are_normalized(tag: Any, expected: str | None) -> None:
    assert normalize_locale(tag) == expected


def test_forwarded_props_locale_wins_over_accept_language() -> None:
    assert resolve_locale({"locale": "fr-CA"}, "de-DE,de;q=0.9") == "fr-CA"


def test_accept_language_highest_q_wins_and_ties_keep_header_order() -> None:
    assert resolve_locale(None, "fr;q=0.5, de-CH;q=0.9, en;q=0.8") == "de-CH"
    assert resolve_locale(None, "it, es") == "it"
    assert resolve_locale({}, "*;q=1, nl;q=0.3") == "nl"


@pytest.mark.parametrize(
    ("props", "header"),
    [(None, None), ({"locale": 42}, None), (None, "*"), (None, "de;q=0"), (None, ";;,,")],
)
def test_locale_falls_back_to_en(props: Any, header: str | None) -> None:
    assert resolve_locale(props, header) == "en"


@pytest.mark.parametrize(
    ("locale", "expected"),
    [
        ("de-AT", "Servus"),  # exact
        ("de-DE", "Hallo"),  # language prefix
        ("de", "Hallo"),
        ("fr", "Hello"),  # en fallback
        ("pt-BR", "Hello"),
    ],
)
def test_label_maps_resolve_exact_then_language_then_en(locale: str, expected: str) -> None:
    label = {"en": "Hello", "de": "Hallo", "de_AT": "Servus"}
    assert pick_label(label, locale) == expected


def test_label_map_without_en_falls_back_to_an_en_region_then_first_entry() -> None:
    assert pick_label({"fr": "Bonjour", "en-GB": "Hello"}, "ja") == "Hello"
    assert pick_label({"fr": "Bonjour", "it": "Ciao"}, "ja") == "Bonjour"
    assert pick_label("plain", "ja") == "plain"


def _texts_of(ui_schema: dict[str, Any]) -> list[str]:
    components = ui_schema["messages"][1]["updateComponents"]["components"]
    return [
        c["text"] for c in components if c["component"] == "Text" and isinstance(c["text"], str)
    ]


def test_compiled_surface_uses_the_request_locale_for_labels() -> None:
    compiler = UiSchemaCompiler()
    hints, output = CALENDAR
    de = compiler.compile(hints, output, tool_call_id="c1", locale="de-AT")
    ja = compiler.compile(hints, output, tool_call_id="c2", locale="ja")
    assert de is not None and ja is not None
    assert "Anstehende Termine" in _texts_of(de) and "Beginn" in _texts_of(de)
    assert "Upcoming events" in _texts_of(ja) and "Starts" in _texts_of(ja)
    # built-in vocabulary: bool labels are server-side and localized
    items = de["messages"][2]["updateDataModel"]["value"]["items"]
    assert [i["all_day"] for i in items] == ["Nein", "Ja", "Nein"]


def test_dates_use_numeric_patterns_outside_english() -> None:
    # formatDate runs date-fns without a locale in @a2ui/web_core: month names are English.
    compiler = UiSchemaCompiler()
    hints, output = ORDERS
    de = compiler.compile(hints, output, tool_call_id="c1", locale="de")
    assert de is not None
    components = de["messages"][1]["updateComponents"]["components"]
    placed = next(c for c in components if c["id"] == "c_placed")
    assert placed["text"]["args"]["format"] == "dd.MM.yyyy"
