"""A model per request from the route's allowlist (issue 19 item 4): ``forwardedProps.model``
on AG-UI, the chat request body's ``model`` on the AI SDK endpoint (``useChat({body: {model}})``
sends extra body keys, which the AI SDK chat request conversion keeps in ``forwardedProps``);
422 with the JSON error shape otherwise; usage and cost name the model that served the run
(the ``model`` the upstream's own chunks report, OpenAI ``chat.completion.chunk``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from gwtest import CHAT_REQUEST, OPENAI_BASE, OPENAI_URL, RUN_INPUT, drive, sse
from real_clients import replay, require_harness
from resilience import build

from gateway.config import load_routes
from gateway.errors import ConfigError

ROUTES = f"""
[[routes]]
name = "gpt"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
models = ["gpt-4o-mini", "gpt-4o"]
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}

[[routes]]
name = "fixed"
upstream_url = "{OPENAI_BASE}"
protocol = "openai-chat"
model = "gpt-4o-mini"
auth = {{ type = "bearer", env = "TEST_OPENAI_KEY" }}
"""


def served(request: httpx.Request) -> httpx.Response:
    """An upstream that answers with the model it was asked for, and its usage."""
    model = orjson.loads(request.content)["model"]
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": model}
    body = sse(
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {
            **base,
            "choices": [],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 1000, "total_tokens": 2000},
        },
        "[DONE]",
    )
    return httpx.Response(200, content=body)


@pytest.fixture
def gw(tmp_path: Path, router: respx.MockRouter, keys: None) -> Any:
    router.post(OPENAI_URL).mock(side_effect=served)
    return build(tmp_path, router, ROUTES)


def with_model(model: Any) -> dict[str, Any]:
    return {**RUN_INPUT, "forwardedProps": {"model": model}}


async def finished(gw: Any, path: str, body: Any) -> dict[str, Any]:
    result = await drive(gw.app, path, body)
    assert result.status == 200, result.body
    return [e for e in result.data() if isinstance(e, dict)][-1]


async def test_agui_request_picks_an_allowed_model(gw: Any, router: respx.MockRouter) -> None:
    small = await finished(gw, "/v1/agui/gpt", with_model("gpt-4o-mini"))
    large = await finished(gw, "/v1/agui/gpt", with_model("gpt-4o"))
    sent = [orjson.loads(c.request.content)["model"] for c in router.calls]
    assert sent == ["gpt-4o-mini", "gpt-4o"]
    for end, model in ((small, "gpt-4o-mini"), (large, "gpt-4o")):
        assert end["type"] == "RUN_FINISHED"
        assert end["metadata"]["model"] == model
        assert end["usage"][0]["model"] == model
        assert end["metadata"]["attempts"][0]["model"] == model
    # same tokens, different price: the cost follows the model served
    assert large["metadata"]["cost"] > small["metadata"]["cost"] > 0


async def test_ai_sdk_body_model_picks_the_model(gw: Any, router: respx.MockRouter) -> None:
    result = await drive(gw.app, "/v1/ai-sdk/gpt", {**CHAT_REQUEST, "model": "gpt-4o"})
    assert result.status == 200
    assert orjson.loads(router.calls[0].request.content)["model"] == "gpt-4o"


async def test_default_model_without_a_choice(gw: Any, router: respx.MockRouter) -> None:
    await finished(gw, "/v1/agui/gpt", RUN_INPUT)
    assert orjson.loads(router.calls[0].request.content)["model"] == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/agui/gpt", with_model("gpt-5-pro")),
        ("/v1/agui/gpt", with_model(42)),
        ("/v1/ai-sdk/gpt", {**CHAT_REQUEST, "model": "o3"}),
    ],
)
async def test_model_outside_the_allowlist_is_422(
    gw: Any, router: respx.MockRouter, path: str, body: Any
) -> None:
    result = await drive(gw.app, path, body)
    assert result.status == 422
    error = result.json()["error"]
    assert error["code"] == "MODEL_NOT_ALLOWED"
    assert "gpt-4o-mini, gpt-4o" in error["message"]
    assert router.calls.call_count == 0


async def test_route_without_models_ignores_the_choice(gw: Any, router: respx.MockRouter) -> None:
    await finished(gw, "/v1/agui/fixed", with_model("gpt-4o"))
    assert orjson.loads(router.calls[0].request.content)["model"] == "gpt-4o-mini"


def test_default_model_must_be_allowed(tmp_path: Path) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        f'[[routes]]\nname = "gpt"\nupstream_url = "{OPENAI_BASE}"\nprotocol = "openai-chat"\n'
        'model = "a"\nmodels = ["b"]\n',
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match="not in models"):
        load_routes(path)


def test_real_clients_accept_a_run_on_a_picked_model(tmp_path: Path, keys: None) -> None:
    require_harness()
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    router.post(OPENAI_URL).mock(side_effect=served)
    gw = build(tmp_path, router, ROUTES)

    async def bodies() -> tuple[bytes, bytes]:
        agui = await drive(gw.app, "/v1/agui/gpt", with_model("gpt-4o"))
        sdk = await drive(gw.app, "/v1/ai-sdk/gpt", {**CHAT_REQUEST, "model": "gpt-4o"})
        return agui.body, sdk.body

    agui, sdk = asyncio.run(bodies())
    results = replay([("agui", "agui", agui)] + [(c, c, sdk) for c in ("ai-v7", "ai-v6", "ai-v5")])
    for job_id, res in results.items():
        assert res["accepted"], (job_id, res["error"], res["warnings"])
        assert res["streamError"] is None, job_id
