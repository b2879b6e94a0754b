"""ui_schema delivery through the gateway: route ``ui_hints`` -> A2UI surfaces on both wires.

A route whose tool declares hints streams, after the tool's TOOL_CALL_RESULT, an A2UI v0.9
surface: on AG-UI an ACTIVITY_SNAPSHOT (``@ag-ui/client`` 1.0 makes it an activity message), on
the AI SDK wire a ``data-ui-schema`` chunk (``ai`` 5/6/7 keep it as a data part); the surface
renders in ``@a2ui/web_core``. Bad hints never break a run; bad route hints are a config error.
Upstreams: a mocked AI SDK backend (``ai-sdk`` protocol) whose tool ran server-side, and a
recorded Anthropic stream with a server tool result (``web_search``).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from a2ui_renderer import RENDERERS, render, require_renderer
from corpus import CORPUS_DIR, require_corpus
from gwtest import ANTHROPIC_BASE, drive, sse
from real_clients import replay, require_harness
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.config import load_routes
from gateway.errors import ConfigError

AGENT_URL = "https://agent.test/api/chat"
CALL_ID = "call_ev1"

EVENTS_HINTS: dict[str, Any] = {
    "kind": "record_list",
    "title": {"en": "Upcoming events", "de": "Anstehende Termine"},
    "data": "/events",
    "fields": [
        {"key": "summary", "label": "Event"},
        {"key": "start", "format": "datetime", "label": {"en": "Starts", "de": "Beginn"}},
        {"key": "location", "path": "/where/name", "label": "Where"},
    ],
}
EVENTS_OUTPUT: dict[str, Any] = {
    "events": [
        {
            "id": "ev1",
            "summary": "Team sync",
            "start": "2026-03-05T09:30:00Z",
            "where": {"name": "Room 4"},
        },
        {
            "id": "ev2",
            "summary": "Offsite",
            "start": "2026-03-06T08:00:00Z",
            "where": {"name": "Lisbon"},
        },
    ]
}
SOURCES_HINTS: dict[str, Any] = {
    "kind": "record_list",
    "title": "Sources",
    "max_items": 3,
    "fields": [
        {"key": "title", "label": "Title"},
        {"key": "url", "format": "url", "label": "Link"},
    ],
}
ANTHROPIC_WEB_SEARCH = "anthropic/web-search-citations.sse"


def toml(value: Any) -> str:
    """A JSON value as a TOML inline value (JSON string escapes are valid TOML)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def route(name: str, hints: dict[str, Any] | None = None, **extra: str) -> str:
    lines = [
        "[[routes]]",
        f'name = "{name}"',
        f'upstream_url = "{AGENT_URL}"',
        'protocol = "ai-sdk"',
        *(f"{k} = {toml(v)}" for k, v in extra.items()),
    ]
    if hints is not None:
        lines.append(f"ui_hints = {toml(hints)}")
    return "\n".join(lines) + "\n"


ROUTES = (
    route("cal", {"list_events": EVENTS_HINTS})
    + route("cal-meta", {"list_events": EVENTS_HINTS}, ui_delivery="metadata", ui_profile="a2ui")
    + route("cal-seed", {"list_events": EVENTS_HINTS}, ui_delivery="seed")
    + route("plain")
    + f"""
[[routes]]
name = "claude"
upstream_url = "{ANTHROPIC_BASE}"
protocol = "anthropic"
model = "claude-sonnet-4-5"
ui_hints = {toml({"web_search": SOURCES_HINTS})}
"""
)

RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-ui",
    "runId": "run-ui",
    "messages": [{"id": "m1", "role": "user", "content": "What is on my calendar?"}],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {},
}
CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-ui",
    "trigger": "submit-message",
    "messages": [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "What is on my calendar?"}]}
    ],
}


def backend_stream(output: Any) -> bytes:
    """An AI SDK backend answer whose ``list_events`` tool ran on the server."""
    return sse(
        {"type": "start", "messageId": "msg-backend"},
        {"type": "start-step"},
        {"type": "tool-input-start", "toolCallId": CALL_ID, "toolName": "list_events"},
        {
            "type": "tool-input-available",
            "toolCallId": CALL_ID,
            "toolName": "list_events",
            "input": {"range": "week"},
        },
        {"type": "tool-output-available", "toolCallId": CALL_ID, "output": output},
        {"type": "finish-step"},
        {"type": "start-step"},
        {"type": "text-start", "id": "t1"},
        {"type": "text-delta", "id": "t1", "delta": "You have two events."},
        {"type": "text-end", "id": "t1"},
        {"type": "finish-step"},
        {"type": "finish", "finishReason": "stop"},
        "[DONE]",
    )


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


@pytest.fixture
def backend(router: respx.MockRouter) -> respx.Route:
    return router.post(AGENT_URL).mock(
        side_effect=lambda request: httpx.Response(200, content=backend_stream(EVENTS_OUTPUT))
    )


def with_header(app: ASGIApp, name: bytes, value: bytes) -> ASGIApp:
    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, "headers": [*scope["headers"], (name, value)]}, receive, send)

    return wrapped


def of_type(items: list[Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if isinstance(i, dict) and i.get("type") == kind]


def texts(ui_schema: dict[str, Any]) -> list[str]:
    [components] = [
        m["updateComponents"]["components"]
        for m in ui_schema["messages"]
        if "updateComponents" in m
    ]
    return [
        c["text"] for c in components if c["component"] == "Text" and isinstance(c["text"], str)
    ]


# -- both wires ------------------------------------------------------------------------------


async def test_agui_gets_the_result_then_an_activity_snapshot(
    make_app: Any, backend: respx.Route
) -> None:
    events = (await drive(make_app(), "/v1/agui/cal", RUN_INPUT)).data()
    kinds = [e["type"] for e in events]
    at = kinds.index("TOOL_CALL_RESULT")
    assert kinds[at + 1] == "ACTIVITY_SNAPSHOT" and kinds[-1] == "RUN_FINISHED"
    result, activity = events[at], events[at + 1]
    assert orjson.loads(result["content"]) == EVENTS_OUTPUT  # the model still sees data
    assert "metadata" not in result
    assert activity["messageId"] == f"a2ui-surface-{CALL_ID}"
    assert activity["activityType"] == "a2ui-surface" and activity["replace"] is True
    ops = activity["content"]["a2ui_operations"]
    assert [next(k for k in op if k != "version") for op in ops] == [
        "createSurface",
        "updateComponents",
        "updateDataModel",
    ]
    assert ops[0]["createSurface"]["catalogId"] == (
        "https://a2ui.org/specification/v0_9/basic_catalog.json"
    )
    assert ops[2]["updateDataModel"]["value"]["items"][1] == {
        "summary": "Offsite",
        "start": "2026-03-06T08:00:00Z",
        "location": "Lisbon",
    }


async def test_ai_sdk_gets_a_data_ui_schema_chunk_after_the_output(
    make_app: Any, backend: respx.Route
) -> None:
    chunks = (await drive(make_app(), "/v1/ai-sdk/cal", CHAT_REQUEST)).data()
    kinds = [c["type"] if isinstance(c, dict) else c for c in chunks]
    at = kinds.index("tool-output-available")
    data = chunks[at + 1]
    assert data["type"] == "data-ui-schema" and data["id"] == CALL_ID
    ui = data["data"]
    assert {k: ui[k] for k in ("format", "version", "toolCallId", "surfaceId")} == {
        "format": "a2ui",
        "version": "v0.9",
        "toolCallId": CALL_ID,
        "surfaceId": f"tool-{CALL_ID}",
    }
    assert "Upcoming events" in texts(ui)
    assert kinds[-1] == "[DONE]"


async def test_metadata_and_seed_profiles(make_app: Any, backend: respx.Route) -> None:
    app = make_app()
    meta = (await drive(app, "/v1/agui/cal-meta", RUN_INPUT)).data()
    assert not of_type(meta, "ACTIVITY_SNAPSHOT")
    [result] = of_type(meta, "TOOL_CALL_RESULT")
    ui = result["metadata"]["ui_schema"]
    assert ui["catalogId"] == "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
    seed = (await drive(app, "/v1/agui/cal-seed", RUN_INPUT)).data()
    [result] = of_type(seed, "TOOL_CALL_RESULT")
    assert result["ui_schema"]["toolCallId"] == CALL_ID
    for name in ("cal-meta", "cal-seed"):  # the AI SDK wire is the same whatever the profile
        chunks = (await drive(app, f"/v1/ai-sdk/{name}", CHAT_REQUEST)).data()
        assert len(of_type(chunks, "data-ui-schema")) == 1


async def test_labels_follow_the_request_locale(make_app: Any, backend: respx.Route) -> None:
    german = {**RUN_INPUT, "forwardedProps": {"locale": "de"}}
    [activity] = of_type(
        (await drive(make_app(), "/v1/agui/cal", german)).data(), "ACTIVITY_SNAPSHOT"
    )
    assert "Anstehende Termine" in texts({"messages": activity["content"]["a2ui_operations"]})
    app = with_header(make_app(), b"accept-language", b"de-CH, en;q=0.5")
    [data] = of_type((await drive(app, "/v1/ai-sdk/cal", CHAT_REQUEST)).data(), "data-ui-schema")
    assert "Beginn" in texts(data["data"])


async def test_anthropic_server_tool_result_gets_a_surface(
    make_app: Any, router: respx.MockRouter
) -> None:
    require_corpus("anthropic")
    body = (CORPUS_DIR / ANTHROPIC_WEB_SEARCH).read_bytes()
    router.post(f"{ANTHROPIC_BASE}/messages").mock(
        side_effect=lambda request: httpx.Response(200, content=body)
    )
    events = (await drive(make_app(), "/v1/agui/claude", RUN_INPUT)).data()
    activities = of_type(events, "ACTIVITY_SNAPSHOT")
    calls = [e["toolCallId"] for e in of_type(events, "TOOL_CALL_RESULT")]
    assert [a["messageId"] for a in activities] == [f"a2ui-surface-{c}" for c in calls]
    model = activities[0]["content"]["a2ui_operations"][2]["updateDataModel"]["value"]
    assert model["items"][0]["url"].startswith("https://")
    assert len(model["items"]) <= 3  # max_items; encrypted_content is not projected
    assert "encrypted_content" not in orjson.dumps(model).decode()


# -- real clients and the renderer -----------------------------------------------------------


def test_real_clients_accept_the_surface_and_it_renders(
    make_app: Any, backend: respx.Route
) -> None:
    require_harness()
    require_renderer()

    async def bodies() -> tuple[bytes, bytes]:
        app = make_app()
        agui = (await drive(app, "/v1/agui/cal", RUN_INPUT)).body
        sdk = (await drive(app, "/v1/ai-sdk/cal", CHAT_REQUEST)).body
        return agui, sdk

    agui, sdk = asyncio.run(bodies())
    jobs: list[Any] = [("agui", "agui", agui)]
    jobs += [(client, client, sdk) for client in ("ai-v7", "ai-v6", "ai-v5")]
    results = replay(jobs)
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"])
        assert res["streamError"] is None and res["warnings"] == [], (job_id, res["warnings"])
    [activity] = [m for m in results["agui"]["messages"] if m["role"] == "activity"]
    assert activity["id"] == f"a2ui-surface-{CALL_ID}"
    assert activity["activityType"] == "a2ui-surface"
    surfaces = {"agui": activity["content"]["a2ui_operations"]}
    for client in ("ai-v7", "ai-v6", "ai-v5"):
        parts = results[client]["messages"][-1]["parts"]
        [data] = [p for p in parts if p["type"] == "data-ui-schema"]
        assert data["id"] == CALL_ID
        surfaces[client] = data["data"]["messages"]
    rendered = render(surfaces)
    for job, by_renderer in rendered.items():
        for renderer in RENDERERS:
            result = by_renderer[renderer]
            assert result["ok"], (job, renderer, result["errors"])
            assert result["texts"][:3] == ["Upcoming events", "Team sync", "Starts"], (
                job,
                renderer,
            )


# -- never fail a run for UI -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "output", "reason"),
    [
        ("/v1/agui/plain", {**EVENTS_OUTPUT, "ui_hints": {"kind": "carousel"}}, "invalid_hints"),
        ("/v1/agui/cal", {"items": []}, "data_not_found"),
        ("/v1/ai-sdk/cal", {"events": {"not": "a list"}}, "data_mismatch"),
        (
            "/v1/ai-sdk/cal",
            {"events": [{"summary": str(i)} for i in range(10_000)]},
            "too_many_items",
        ),
    ],
)
async def test_bad_hints_or_data_give_no_ui_and_the_run_succeeds(
    make_app: Any, router: respx.MockRouter, path: str, output: Any, reason: str
) -> None:
    router.post(AGENT_URL).mock(return_value=httpx.Response(200, content=backend_stream(output)))
    app = make_app()
    items = (await drive(app, path, RUN_INPUT if "agui" in path else CHAT_REQUEST)).data()
    assert not of_type(items, "ACTIVITY_SNAPSHOT") and not of_type(items, "data-ui-schema")
    if "agui" in path:
        [result] = of_type(items, "TOOL_CALL_RESULT")
        assert orjson.loads(result["content"]) == output and "metadata" not in result
        assert items[-1]["type"] == "RUN_FINISHED"
    else:
        [result] = of_type(items, "tool-output-available")
        assert result["output"] == output
        assert of_type(items, "finish")[0]["finishReason"] == "stop"
    metrics = (await drive(app, "/metrics", method="GET")).body.decode()
    assert f'agui_gateway_ui_rejected_total{{reason="{reason}"}} 1' in metrics
    assert "agui_gateway_ui_compiled_total 0" in metrics


async def test_metrics_count_compiled_surfaces(make_app: Any, backend: respx.Route) -> None:
    app = make_app()
    await drive(app, "/v1/agui/cal", RUN_INPUT)
    await drive(app, "/v1/ai-sdk/cal", CHAT_REQUEST)
    result = await drive(app, "/metrics", method="GET")
    assert result.status == 200
    assert result.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    body = result.body.decode()
    assert "# TYPE agui_gateway_ui_compiled_total counter" in body
    assert "agui_gateway_ui_compiled_total 2" in body
    assert "agui_gateway_ui_cache_hits_total 1" in body  # one tree, compiled once, reused
    assert 'agui_gateway_ui_rejected_total{reason="invalid_hints"} 0' in body


# -- configuration ---------------------------------------------------------------------------


def _load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "r.toml"
    path.write_text(text, encoding="utf-8")
    return load_routes(path)


def test_route_hints_are_validated_at_start_up(tmp_path: Path) -> None:
    bad = {**EVENTS_HINTS, "fields": [{"key": "start", "format": "moment"}]}
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, route("cal", {"list_events": EVENTS_HINTS, "find": bad}))
    message = info.value.message
    assert "route 'cal': field 'ui_hints'" in message
    assert "tool 'find'" in message and "/fields/0/format" in message


def test_unknown_ui_profile_and_delivery_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, route("x", ui_profile="material"))
    assert "route 'x': field 'ui_profile'" in info.value.message
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, route("y", ui_delivery="inline"))
    assert "route 'y': field 'ui_delivery'" in info.value.message


def test_route_ui_defaults(tmp_path: Path) -> None:
    loaded = _load(tmp_path, route("cal", {"list_events": EVENTS_HINTS}))["cal"]
    assert (loaded.ui_profile, loaded.ui_delivery) == ("copilotkit", "activity")
    assert loaded.route_hints["list_events"].kind == "record_list"
