"""Caching: trees built and validated once per (hints, locale, profile, catalogId, variant)."""

from __future__ import annotations

from typing import Any

from agui_codecs.ui import UiSchemaCompiler, parse_hints

from .examples import CALENDAR, ORDERS, SPEC_LINK


def _components(ui: dict[str, Any] | None) -> list[dict[str, Any]]:
    assert ui is not None
    components: list[dict[str, Any]] = ui["messages"][1]["updateComponents"]["components"]
    return components


def test_tree_is_validated_once_per_cache_key() -> None:
    compiler = UiSchemaCompiler()
    hints, output = CALENDAR
    for i in range(5):
        events = [dict(e, summary=f"{e['summary']} #{i}") for e in output["events"]]
        assert compiler.compile(hints, {"events": events}, tool_call_id=f"c{i}") is not None
    assert compiler.stats.validations == 1
    assert (compiler.stats.cache_misses, compiler.stats.cache_hits) == (1, 4)
    compiler.compile(hints, output, tool_call_id="x", locale="de")  # new locale
    compiler.compile(hints, output, tool_call_id="y", profile="a2ui")  # new profile + catalogId
    compiler.compile(hints, {"events": []}, tool_call_id="z")  # new variant (empty)
    assert compiler.stats.validations == 4
    assert compiler.stats.compiled == 8


def test_per_call_work_shares_the_cached_component_list() -> None:
    compiler = UiSchemaCompiler()
    a = compiler.compile(*ORDERS, tool_call_id="a")
    b = compiler.compile(*ORDERS, tool_call_id="b")
    assert _components(a) is _components(b)
    assert a is not None and b is not None
    assert a["messages"][2] is not b["messages"][2]


def test_equal_hints_in_any_key_order_share_the_cache() -> None:
    compiler = UiSchemaCompiler()
    hints, output = CALENDAR
    reordered = dict(reversed(list(hints.items())))
    compiler.compile(hints, output, tool_call_id="a")
    compiler.compile(reordered, output, tool_call_id="b")
    compiler.compile(parse_hints(hints), output, tool_call_id="c")  # route-config hints
    assert compiler.stats.validations == 1


def test_link_url_is_set_per_call_without_touching_the_cached_tree() -> None:
    compiler = UiSchemaCompiler()
    hints, output = SPEC_LINK
    first = compiler.compile(hints, output, tool_call_id="a")
    second = compiler.compile(
        hints, dict(output, url="https://example.org/other"), tool_call_id="b"
    )
    third = compiler.compile(hints, output, tool_call_id="c")

    def url(ui: dict[str, Any] | None) -> str:
        button = next(c for c in _components(ui) if c["id"] == "link_btn")
        value: str = button["action"]["functionCall"]["args"]["url"]
        return value

    assert url(first) == url(third) == "https://a2ui.org/specification/v0_9/"
    assert url(second) == "https://example.org/other"
    assert compiler.stats.validations == 1


def test_lru_cache_is_bounded() -> None:
    compiler = UiSchemaCompiler(cache_size=2)
    hints, output = CALENDAR
    for locale in ("en", "de", "fr", "en"):
        compiler.compile(hints, output, tool_call_id="c", locale=locale)
    assert compiler.stats.validations == 4  # "en" was evicted by "fr"
    assert len(compiler._trees) == 2
