"""Every compiled example is processed without error by the real A2UI renderer core.

``tests/ui_harness`` runs ``@a2ui/web_core`` 0.11.0 (A2UI renderers) and 0.10.4 (CopilotKit's
pin) with the basic catalog registered under both catalog ids, resolves the whole tree as the
renderers do (templates expanded, formatDate / formatCurrency / ... evaluated by web_core), and
reports errors. Expected strings below are what Intl / date-fns produce in Node (TZ=UTC), not
copies of our output.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from a2ui_renderer import HARNESS_DIR, RENDERERS, render, require_renderer

from agui_codecs.ui import UiSchemaCompiler

from .examples import ALL, CALENDAR, ORDERS

PROFILES = ("copilotkit", "a2ui")


@functools.cache
def _rendered() -> dict[str, dict[str, Any]]:
    """All examples and profiles, plus a few variants, rendered in one Node process."""
    compiler = UiSchemaCompiler()
    jobs: dict[str, list[dict[str, Any]]] = {}

    def add(job: str, hints: Any, output: Any, **kw: Any) -> None:
        ui = compiler.compile(hints, output, tool_call_id=job.replace("/", "_"), **kw)
        assert ui is not None, job
        jobs[job] = ui["messages"]

    for name, (hints, output) in ALL.items():
        for profile in PROFILES:
            add(f"{name}/{profile}", hints, output, profile=profile)
    add("orders/de", *ORDERS, locale="de")
    rows = [
        dict(ORDERS[1]["orders"][0]),
        dict(ORDERS[1]["orders"][1], total=None, placed="next week"),
    ]
    add("orders/missing", ORDERS[0], {"orders": rows})
    add("calendar/empty", CALENDAR[0], {"events": []})
    add("calendar/truncated", CALENDAR[0], {"events": CALENDAR[1]["events"] * 5})
    add("foreign_catalog", *ORDERS, profile="https://example.com/catalogs/mine.json")
    return render(jobs)


def _texts(job: str, renderer: str = RENDERERS[0]) -> list[str]:
    texts: list[str] = _rendered()[job][renderer]["texts"]
    return texts


@pytest.mark.parametrize("renderer", RENDERERS)
@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("name", sorted(ALL))
def test_every_example_renders_without_error(name: str, profile: str, renderer: str) -> None:
    require_renderer()
    result = _rendered()[f"{name}/{profile}"][renderer]
    assert result["ok"], result["errors"]
    assert result["warnings"] == []
    assert result["surfaces"] == [f"tool-{name}_{profile}"]
    assert "<undefined>" not in result["texts"]


def test_a_surface_with_an_unknown_catalog_id_is_rejected_by_the_renderer() -> None:
    require_renderer()
    for renderer in RENDERERS:
        result = _rendered()["foreign_catalog"][renderer]
        assert not result["ok"]
        assert any("Catalog not found" in e for e in result["errors"])


def test_table_values_are_formatted_by_the_client() -> None:
    require_renderer()
    for renderer in RENDERERS:
        texts = _texts("orders/copilotkit", renderer)
        assert texts[:7] == ["Orders", "Order", "Placed", "Qty", "Total", "Discount", "Status"]
        assert texts[7:13] == ["A-1001", "Feb 27, 2026", "1,200", "€1,234.50", "10%", "Paid"]
        assert texts[13:] == ["A-1002", "Mar 1, 2026", "3", "€89.99", "0%", "Open"]


def test_calendar_list_expands_one_card_per_event() -> None:
    require_renderer()
    texts = _texts("calendar/a2ui")
    assert texts[0] == "Upcoming events"
    assert texts[1:8] == [
        "Team sync",
        "Starts",
        "Mar 5, 2026, 9:30 AM",
        "Where",
        "Room 4",
        "All day",
        "No",
    ]
    assert texts.count("Starts") == 3
    assert "Mar 9, 2026, 2:00 PM" in texts  # 15:00+01:00 shown in UTC


def test_german_locale_renders_german_labels_and_numeric_dates() -> None:
    require_renderer()
    texts = _texts("orders/de")
    assert texts[0] == "Bestellungen"
    assert "27.02.2026" in texts and "Bezahlt" in texts


def test_missing_values_render_as_server_text_without_renderer_errors() -> None:
    require_renderer()
    for renderer in RENDERERS:
        result = _rendered()["orders/missing"][renderer]
        assert result["ok"], result["errors"]
        texts = result["texts"]
        # one unusable value puts the whole column on server text (a template is per list)
        assert texts[7:13] == ["A-1001", "2026-02-27", "1,200", "1,234.50 EUR", "10%", "Paid"]
        assert texts[13:] == ["A-1002", "next week", "3", "", "0%", "Open"]


def test_empty_and_truncated_lists_render() -> None:
    require_renderer()
    assert _texts("calendar/empty") == ["Upcoming events", "Nothing planned"]
    texts = _texts("calendar/truncated")
    assert texts.count("Starts") == 10 and texts[-1] == "Showing 10 of 15"


def test_status_link_image_and_confirm_bind_icons_urls_and_actions() -> None:
    require_renderer()
    for renderer in RENDERERS:
        rendered = _rendered()
        assert rendered["deploy_status/a2ui"][renderer]["icons"] == ["check"]
        assert "42.5" in rendered["deploy_status/a2ui"][renderer]["texts"]
        [button] = rendered["spec_link/a2ui"][renderer]["buttons"]
        assert button["action"]["functionCall"]["args"]["url"] == (
            "https://a2ui.org/specification/v0_9/"
        )
        assert rendered["photo/a2ui"][renderer]["images"] == ["https://images.example.com/cat.jpg"]
        buttons = rendered["payment_confirm/a2ui"][renderer]["buttons"]
        assert [b["resolvedLabel"] for b in buttons] == ["Cancel", "Send"]
        assert "$250.00" in rendered["payment_confirm/a2ui"][renderer]["texts"]


def test_harness_reports_renderer_errors() -> None:
    """Regression guard for the harness itself: a bad binding must not pass silently."""
    require_renderer()
    surface = {
        "surfaceId": "s",
        "catalogId": "https://a2ui.org/specification/v0_9/basic_catalog.json",
    }
    bad = [
        {"version": "v0.9", "createSurface": surface},
        {
            "version": "v0.9",
            "updateComponents": {
                "surfaceId": "s",
                "components": [
                    {"id": "root", "component": "Column", "children": ["n", "ghost"]},
                    {
                        "id": "n",
                        "component": "Text",
                        "text": {
                            "call": "formatNumber",
                            "args": {"value": {"path": "/nope"}},
                            "returnType": "string",
                        },
                    },
                ],
            },
        },
    ]
    result = render({"bad": bad})["bad"]
    for renderer in RENDERERS:
        errors = result[renderer]["errors"]
        assert not result[renderer]["ok"]
        assert any("formatNumber" in e for e in errors)
        assert any("ghost" in e for e in errors)


def _strip_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_strip_descriptions(v) for v in value]
    return value


@pytest.mark.parametrize(
    "path", ["server_to_client.json", "common_types.json", "catalogs/basic/catalog.json"]
)
def test_vendored_schemas_match_the_copies_in_web_core(path: str) -> None:
    require_renderer()
    from importlib import resources

    ours = json.loads(
        resources.files("agui_codecs.ui").joinpath(f"schemas/v0_9/{path}").read_text("utf-8")
    )
    shipped = HARNESS_DIR / "node_modules/@a2ui/web_core/src/v0_9/schemas" / path
    theirs = json.loads(shipped.read_text("utf-8"))
    assert _strip_descriptions(ours) == _strip_descriptions(theirs)
