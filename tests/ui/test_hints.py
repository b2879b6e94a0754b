"""ui_hints v1: schema, validation errors with JSON Pointers, hint sources, RFC 6901 pointers."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agui_codecs.ui import (
    UiHintsConfigError,
    UiHintsError,
    hints_from_metadata,
    hints_from_output,
    hints_schema,
    parse_hints,
    validate_route_hints,
)
from agui_codecs.ui.pointer import MISSING, parse_pointer, resolve

from .examples import ALL


def test_shipped_hints_schema_is_a_valid_draft_2020_12_schema() -> None:
    Draft202012Validator.check_schema(hints_schema())


@pytest.mark.parametrize("name", sorted(ALL))
def test_every_example_hint_is_valid(name: str) -> None:
    hints = parse_hints(ALL[name][0])
    assert hints.kind == ALL[name][0]["kind"]


def test_equal_hints_with_different_key_order_have_one_cache_key() -> None:
    a = parse_hints({"kind": "record", "fields": [{"key": "a", "label": "A"}], "title": "T"})
    b = parse_hints({"title": "T", "fields": [{"label": "A", "key": "a"}], "kind": "record"})
    assert a.cache_key == b.cache_key


@pytest.mark.parametrize(
    ("raw", "pointer"),
    [
        ({"kind": "carousel"}, "/kind"),
        ({"kind": "table"}, ""),  # fields required for a table
        ({"kind": "record", "data": "orders", "fields": [{"key": "a"}]}, "/data"),
        ({"kind": "record", "fields": [{"key": "a", "format": "dollars"}]}, "/fields/0/format"),
        ({"kind": "record", "fields": [{"key": "a"}, {"key": "a"}]}, "/fields/1/key"),
        ({"kind": "record", "fields": [{"key": "bad-key"}]}, "/fields/0/key"),
        ({"kind": "record", "fields": [{"key": "a", "label": {"de": 3}}]}, "/fields/0/label/de"),
        ({"kind": "record", "titel": "typo", "fields": [{"key": "a"}]}, ""),
        ({"kind": "record_list", "max_items": 0, "fields": [{"key": "a"}]}, "/max_items"),
        ({"kind": "status", "icons": {"ok": "thumbsUp"}}, "/icons/ok"),
        ({"kind": "record", "fields": [{"key": "a", "format": "currency"}]}, "/fields/0"),
        ({"kind": "link", "fields": [{"key": "title"}]}, "/fields"),
        ([], ""),
    ],
)
def test_invalid_hints_report_the_json_pointer_of_the_problem(raw: Any, pointer: str) -> None:
    with pytest.raises(UiHintsError) as info:
        parse_hints(raw)
    assert info.value.pointer == pointer
    assert info.value.code == "UI_HINTS_INVALID"


def test_route_config_error_names_the_tool_and_the_pointer() -> None:
    config = {
        "list_events": {"kind": "record_list", "fields": [{"key": "summary"}]},
        "get_orders": {"kind": "table", "fields": [{"key": "id"}, {"key": "t", "format": "$"}]},
    }
    with pytest.raises(UiHintsConfigError) as info:
        validate_route_hints(config)
    err = info.value
    assert err.tool == "get_orders"
    assert err.pointer == "/fields/1/format"
    assert "get_orders" in str(err) and "/fields/1/format" in str(err)


def test_valid_route_config_returns_parsed_hints_per_tool() -> None:
    parsed = validate_route_hints({name: hints for name, (hints, _) in ALL.items()})
    assert set(parsed) == set(ALL)
    assert parsed["orders"].fields[3].currency == "EUR"


def test_hints_come_from_a_ui_hints_key_of_a_json_object_result() -> None:
    assert hints_from_output({"ui_hints": {"kind": "record"}, "x": 1}) == {"kind": "record"}
    assert hints_from_output([{"ui_hints": {}}]) is None
    assert hints_from_output("ui_hints") is None


def test_hints_come_from_seed_protocol_metadata() -> None:
    meta = {"tool_agent_output": {"ui_hints": {"kind": "status"}}}
    assert hints_from_metadata(meta) == {"kind": "status"}
    assert hints_from_metadata({"tool_agent_output": "x"}) is None
    assert hints_from_metadata(None) is None


# RFC 6901 §5 examples.
_RFC_DOC: dict[str, Any] = {
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    'k"l': 6,
    " ": 7,
    "m~n": 8,
}


@pytest.mark.parametrize(
    ("pointer", "expected"),
    [
        ("", _RFC_DOC),
        ("/foo", ["bar", "baz"]),
        ("/foo/0", "bar"),
        ("/", 0),
        ("/a~1b", 1),
        ("/c%d", 2),
        ("/e^f", 3),
        ("/g|h", 4),
        ("/i\\j", 5),
        ('/k"l', 6),
        ("/ ", 7),
        ("/m~0n", 8),
    ],
)
def test_json_pointer_rfc6901_examples(pointer: str, expected: Any) -> None:
    assert resolve(_RFC_DOC, parse_pointer(pointer)) == expected


@pytest.mark.parametrize("pointer", ["/foo/2", "/foo/01", "/foo/-", "/nope", "/foo/0/x"])
def test_json_pointer_selecting_nothing_is_missing(pointer: str) -> None:
    assert resolve(_RFC_DOC, parse_pointer(pointer)) is MISSING


@pytest.mark.parametrize("pointer", ["foo", "/a~2", "/~"])
def test_malformed_json_pointer_is_rejected(pointer: str) -> None:
    with pytest.raises(ValueError):
        parse_pointer(pointer)


def test_hint_icon_names_are_the_basic_catalog_icon_names() -> None:
    from agui_codecs.ui.a2ui import icon_names

    assert set(hints_schema()["$defs"]["icon"]["enum"]) == icon_names()
