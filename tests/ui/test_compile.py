"""Compiler: every kind → schema-valid A2UI v0.9; projection rules; bad input → no UI + warning."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from agui_codecs.ui import (
    A2UI_BASIC_CATALOG_ID,
    COPILOTKIT_CATALOG_ID,
    UiSchemaCompiler,
    check_tree,
    schema_errors,
)
from agui_codecs.ui.project import MAX_CODE_CHARS, MAX_SOURCE_ITEMS, MAX_TEXT_CHARS

from .examples import ALL, CALENDAR, CONTACT, ORDERS, SERVER_INFO, SNIPPET, SPEC_LINK


def _components(ui: dict[str, Any]) -> list[dict[str, Any]]:
    components: list[dict[str, Any]] = ui["messages"][1]["updateComponents"]["components"]
    return components


def _data(ui: dict[str, Any]) -> Any:
    return ui["messages"][2]["updateDataModel"]["value"]


def _by_id(ui: dict[str, Any], cid: str) -> dict[str, Any]:
    return next(c for c in _components(ui) if c["id"] == cid)


@pytest.mark.parametrize(
    ("profile", "catalog_id"),
    [("copilotkit", COPILOTKIT_CATALOG_ID), ("a2ui", A2UI_BASIC_CATALOG_ID)],
)
@pytest.mark.parametrize("name", sorted(ALL))
def test_every_kind_compiles_to_schema_valid_a2ui_v0_9(
    name: str, profile: str, catalog_id: str
) -> None:
    hints, output = ALL[name]
    ui = UiSchemaCompiler().compile(hints, output, tool_call_id="call_9", profile=profile)
    assert ui is not None
    assert {k: ui[k] for k in ("format", "version", "catalogId", "surfaceId", "toolCallId")} == {
        "format": "a2ui",
        "version": "v0.9",
        "catalogId": catalog_id,
        "surfaceId": "tool-call_9",
        "toolCallId": "call_9",
    }
    messages = ui["messages"]
    assert [next(k for k in m if k != "version") for m in messages] == [
        "createSurface",
        "updateComponents",
        "updateDataModel",
    ]
    assert messages[0]["createSurface"] == {"surfaceId": "tool-call_9", "catalogId": catalog_id}
    assert schema_errors(messages) == []
    assert check_tree(_components(ui)) == []
    used = {c["component"] for c in _components(ui)}
    assert used <= {"Card", "Column", "Row", "List", "Text", "Icon", "Image", "Divider", "Button"}


def test_schema_check_catches_an_invalid_component() -> None:
    bad = {
        "version": "v0.9",
        "updateComponents": {
            "surfaceId": "s",
            "components": [{"id": "root", "component": "Text", "text": "x", "variant": "huge"}],
        },
    }
    assert schema_errors([bad]) != []


def test_data_model_is_a_projection_of_the_referenced_fields() -> None:
    ui = UiSchemaCompiler().compile(*CALENDAR, tool_call_id="c")
    assert ui is not None
    data = _data(ui)
    assert set(data) == {"items"}  # next_page is not referenced
    assert data["items"][0] == {
        "summary": "Team sync",
        "start": "2026-03-05T09:30:00Z",
        "location": "Room 4",
        "all_day": "No",
    }
    # a date-only value becomes local midnight, so no time zone moves it to another day
    assert data["items"][1]["start"] == "2026-03-06T00:00:00"


def test_lists_use_a_template_bound_to_the_items() -> None:
    ui = UiSchemaCompiler().compile(*CALENDAR, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "items")["children"] == {"componentId": "item", "path": "/items"}
    assert _by_id(ui, "r_location")["children"] == ["l_location", "v_location"]
    assert _by_id(ui, "v_location")["text"] == {"path": "location"}  # relative inside template


def test_max_items_caps_the_list_and_reports_the_total() -> None:
    hints, output = CALENDAR
    many = {"events": [dict(output["events"][0], summary=f"E{i}") for i in range(30)]}
    ui = UiSchemaCompiler().compile(hints, many, tool_call_id="c")
    assert ui is not None
    data = _data(ui)
    assert [i["summary"] for i in data["items"]] == [f"E{i}" for i in range(10)]
    assert data["more"] == "Showing 10 of 30"
    assert _by_id(ui, "more")["text"] == {"path": "/more"}


def test_empty_list_shows_the_empty_label() -> None:
    hints, _ = CALENDAR
    ui = UiSchemaCompiler().compile(hints, {"events": []}, tool_call_id="c", locale="de")
    assert ui is not None
    assert _by_id(ui, "empty")["text"] == "Nichts geplant"
    assert all(c["id"] != "items" for c in _components(ui))


def test_formats_use_client_side_basic_catalog_functions() -> None:
    ui = UiSchemaCompiler().compile(*ORDERS, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "c_total")["text"] == {
        "call": "formatCurrency",
        "args": {"value": {"path": "total"}, "currency": "EUR", "decimals": 2},
        "returnType": "string",
    }
    assert _by_id(ui, "c_qty")["text"]["call"] == "formatNumber"
    assert _by_id(ui, "c_placed")["text"]["call"] == "formatDate"
    assert _by_id(ui, "c_discount")["text"]["call"] == "formatString"
    items = _data(ui)["items"]
    assert items[0]["discount"] == pytest.approx(10.0)  # percent is a fraction, shown times 100
    assert items[1]["total"] == 89.99  # numeric strings become numbers
    assert [i["status"] for i in items] == ["Paid", "Open"]  # enum labels are server-side


def test_table_header_row_and_templated_rows() -> None:
    ui = UiSchemaCompiler().compile(*ORDERS, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "thead")["children"] == [
        f"h_{k}" for k in ("id", "placed", "qty", "total", "discount", "status")
    ]
    assert _by_id(ui, "tbody")["children"] == {"componentId": "trow", "path": "/items"}


def test_table_with_more_than_six_columns_drops_the_extra_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    hints = {"kind": "table", "fields": [{"key": f"k{i}"} for i in range(8)]}
    with caplog.at_level(logging.WARNING, logger="agui_codecs.ui"):
        ui = UiSchemaCompiler().compile(hints, [{"k0": 1}], tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "thead")["children"] == [f"h_k{i}" for i in range(6)]
    assert set(_data(ui)["items"][0]) == {f"k{i}" for i in range(6)}
    assert "dropped: k6, k7" in caplog.text


def test_missing_number_falls_back_to_server_text_for_the_whole_column() -> None:
    hints, output = ORDERS
    rows = [dict(output["orders"][0]), dict(output["orders"][1], total=None)]
    ui = UiSchemaCompiler().compile(hints, {"orders": rows}, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "c_total")["text"] == {"path": "total"}
    assert [i["total"] for i in _data(ui)["items"]] == ["1,234.50 EUR", ""]
    assert _by_id(ui, "c_qty")["text"]["call"] == "formatNumber"  # other columns unaffected


def test_currency_code_from_the_data() -> None:
    hints = {
        "kind": "record",
        "fields": [{"key": "amount", "format": "currency", "currency_path": "/cur", "decimals": 2}],
    }
    ui = UiSchemaCompiler().compile(hints, {"amount": 5, "cur": "jpy"}, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "v_amount")["text"]["args"]["currency"] == {"path": "/item/amount-cur"}
    assert _data(ui)["item"] == {"amount": 5, "amount-cur": "JPY"}


def test_key_value_lists_entries_and_skips_the_hints_of_the_whole_output() -> None:
    hints = {"kind": "key_value"}
    ui = UiSchemaCompiler().compile(hints, {"ui_hints": hints, "a": 1, "b": None}, tool_call_id="c")
    assert ui is not None
    assert _data(ui)["rows"] == [{"label": "a", "value": "1"}, {"label": "b", "value": ""}]
    ui = UiSchemaCompiler().compile(*SERVER_INFO, tool_call_id="c")
    assert ui is not None
    assert {"label": "TLS", "value": "Yes"} in _data(ui)["rows"]


def test_link_button_opens_the_url_with_openurl() -> None:
    ui = UiSchemaCompiler().compile(*SPEC_LINK, tool_call_id="c")
    assert ui is not None
    assert _by_id(ui, "link_btn")["action"] == {
        "functionCall": {
            "call": "openUrl",
            "args": {"url": "https://a2ui.org/specification/v0_9/"},
            "returnType": "void",
        }
    }


def test_link_accepts_a_bare_url_string() -> None:
    ui = UiSchemaCompiler().compile({"kind": "link"}, "https://example.org/x", tool_call_id="c")
    assert ui is not None
    assert _data(ui)["item"] == {
        "url": "https://example.org/x",
        "title": "https://example.org/x",
        "description": "",
    }


def test_code_is_fenced_with_a_fence_longer_than_any_backtick_run() -> None:
    hints = {"kind": "code", "language": "md"}
    ui = UiSchemaCompiler().compile(hints, "use ```python``` fences", tool_call_id="c")
    assert ui is not None
    assert _data(ui)["code"] == "````md\nuse ```python``` fences\n````"
    ui = UiSchemaCompiler().compile(*SNIPPET, tool_call_id="c")
    assert ui is not None
    assert _data(ui)["code"].startswith("```python\ndef fib(n):")


def test_long_values_are_cut() -> None:
    hints = {"kind": "record", "fields": [{"key": "note"}]}
    ui = UiSchemaCompiler().compile(hints, {"note": "x" * 50_000}, tool_call_id="c")
    assert ui is not None
    assert len(_data(ui)["item"]["note"]) == MAX_TEXT_CHARS
    ui = UiSchemaCompiler().compile({"kind": "code"}, "y" * 50_000, tool_call_id="c")
    assert ui is not None
    assert len(_data(ui)["code"]) < MAX_CODE_CHARS + 20


def test_confirm_buttons_send_events_with_the_tool_call_id() -> None:
    hints = {"kind": "confirm", "title": "Delete file?", "fields": [{"key": "path"}]}
    ui = UiSchemaCompiler().compile(hints, {"path": "/tmp/x"}, tool_call_id="call_7")
    assert ui is not None
    assert _by_id(ui, "confirm_btn")["action"] == {
        "event": {"name": "confirm", "context": {"toolCallId": {"path": "/toolCallId"}}}
    }
    assert _data(ui)["toolCallId"] == "call_7"
    assert _by_id(ui, "confirm_lbl")["text"] == "Confirm"


# -- bad input: no UI, a warning, a counter, never an exception ---------------------------

_TEN_THOUSAND = {"events": [{"summary": "x", "start": "2026-01-01"}] * MAX_SOURCE_ITEMS}

BAD_INPUTS: dict[str, tuple[Any, Any, str]] = {
    "unknown_kind": ({"kind": "carousel"}, {}, "invalid_hints"),
    "hints_not_json": (
        {"kind": "record", "fields": [{"key": "a"}], "x": {1, 2}},
        {},
        "invalid_hints",
    ),
    "pointer_to_nothing": (
        {"kind": "record_list", "data": "/evnts", "fields": [{"key": "a"}]},
        CALENDAR[1],
        "data_not_found",
    ),
    "list_where_record_expected": (CONTACT[0], [CONTACT[1]], "data_mismatch"),
    "record_where_list_expected": (CALENDAR[0], {"events": {"a": 1}}, "data_mismatch"),
    "scalars_where_items_expected": (CALENDAR[0], {"events": [1, 2]}, "data_mismatch"),
    "string_where_record_expected": (CONTACT[0], "Grace", "data_mismatch"),
    "code_expects_a_string": ({"kind": "code"}, {"a": 1}, "data_mismatch"),
    "javascript_link": (
        {"kind": "link"},
        {"url": "javascript:alert(1)", "title": "x"},
        "unsafe_url",
    ),
    "javascript_link_obfuscated": (
        {"kind": "link"},
        {"url": " JaVa\tScRiPt:alert(1)"},
        "unsafe_url",
    ),
    "javascript_url_field": (
        CONTACT[0],
        dict(CONTACT[1], website="javascript:alert(1)"),
        "unsafe_url",
    ),
    "data_url_image": ({"kind": "image"}, {"url": "data:image/svg+xml,<svg/>"}, "unsafe_url"),
    "relative_link": ({"kind": "link"}, {"url": "/internal"}, "data_mismatch"),
    "ten_thousand_items": (CALENDAR[0], _TEN_THOUSAND, "too_many_items"),
    "ten_thousand_entries": (
        {"kind": "key_value"},
        {f"k{i}": i for i in range(10_000)},
        "too_many_items",
    ),
    "status_value_missing": ({"kind": "status"}, {"message": "?"}, "data_mismatch"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gives_no_ui_a_warning_and_a_counter(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    hints, output, reason = BAD_INPUTS[case]
    compiler = UiSchemaCompiler()
    with caplog.at_level(logging.WARNING, logger="agui_codecs.ui"):
        ui = compiler.compile(hints, output, tool_call_id="call_bad", tool_name="t")
    assert ui is None
    assert compiler.stats.rejected == {reason: 1}
    assert compiler.stats.compiled == 0
    record = next(r for r in caplog.records if r.name == "agui_codecs.ui")
    assert record.levelno == logging.WARNING
    assert "call_bad" in record.getMessage() and reason in record.getMessage()


def test_invalid_hints_are_cached_but_warned_each_call(caplog: pytest.LogCaptureFixture) -> None:
    compiler = UiSchemaCompiler()
    with caplog.at_level(logging.WARNING, logger="agui_codecs.ui"):
        for _ in range(3):
            assert compiler.compile({"kind": "nope"}, {}, tool_call_id="c") is None
    assert compiler.stats.rejected == {"invalid_hints": 3}
    assert len([r for r in caplog.records if r.name == "agui_codecs.ui"]) == 3


def test_list_below_the_hard_limit_is_capped_not_refused() -> None:
    hints, _ = CALENDAR
    output = {"events": [{"summary": "x", "start": "2026-01-01"}] * (MAX_SOURCE_ITEMS - 1)}
    ui = UiSchemaCompiler().compile(hints, output, tool_call_id="c")
    assert ui is not None
    assert len(_data(ui)["items"]) == 10
    assert _data(ui)["more"] == f"Showing 10 of {MAX_SOURCE_ITEMS - 1}"


def test_unknown_profile_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="profile"):
        UiSchemaCompiler().compile(*CONTACT, tool_call_id="c", profile="vuetify")


@pytest.mark.parametrize(
    ("state", "icons", "icon"),
    [
        ("succeeded", {}, "check"),
        ("FAILED", {}, "error"),
        ("in_progress", {}, "refresh"),
        ("weird", {}, "info"),
        ("weird", {"weird": "star"}, "star"),
    ],
)
def test_status_icon_follows_the_state(state: str, icons: dict[str, str], icon: str) -> None:
    hints: dict[str, Any] = {"kind": "status"}
    if icons:
        hints["icons"] = icons
    ui = UiSchemaCompiler().compile(hints, {"status": state}, tool_call_id="c")
    assert ui is not None
    assert _data(ui)["icon"] == icon
    assert _data(ui)["item"]["status"] == state
    bare = UiSchemaCompiler().compile(hints, state, tool_call_id="c")  # a bare value works too
    assert bare is not None and _data(bare)["icon"] == icon
