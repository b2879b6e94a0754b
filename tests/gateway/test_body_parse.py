"""Sliced validation of large request bodies (``gateway.body_parse``) gives what
``model_validate_json`` gives: the same model, or the same refusal.

The size thresholds are lowered so that generated bodies take the sliced path; the expected
value is pydantic's own ``model_validate_json`` of the same bytes. The loop stall itself is
measured in ``bench/large_request.py`` (no timed tests).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from ag_ui.core import RunAgentInput
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest
from gateway import body_parse
from gateway.routes.runs import RunRequest

ROLES = st.sampled_from(["user", "assistant", "system", "developer", "tool", "reasoning", "bogus"])
CONTENT = st.one_of(st.text(max_size=8), st.integers(), st.none())


def _agui_message(i: int, role: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"id": f"m{i}", "role": role, "content": content}
    if role == "tool":
        message["toolCallId"] = f"c{i}"
    return message


@st.composite
def agui_bodies(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(0, 12))
    messages = [_agui_message(i, draw(ROLES), draw(CONTENT)) for i in range(n)]
    body: dict[str, Any] = {
        "threadId": draw(st.sampled_from(["t1", 5])),
        "runId": "r1",
        "state": draw(st.sampled_from([{}, {"n": 2**70}])),
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    if draw(st.booleans()) and messages:
        del body["messages"][0]["id"]
    return body


def _same(model: type[Any], data: bytes) -> None:
    try:
        expected = model.model_validate_json(data)
    except ValidationError as exc:
        with pytest.raises(ValidationError) as got:
            asyncio.run(body_parse.validate_body(data, model))
        assert got.value.errors(include_url=False) == exc.errors(include_url=False)
        return
    assert asyncio.run(body_parse.validate_body(data, model)) == expected
    path = body_parse._messages_path(model)
    assert path is not None
    sliced = asyncio.run(body_parse._sliced(data, model, path))  # no fallback taken
    assert sliced == expected
    assert sliced.model_fields_set == expected.model_fields_set


@pytest.fixture(autouse=True)
def small_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_parse, "LARGE_BODY", 0)
    monkeypatch.setattr(body_parse, "SLICE", 3)
    monkeypatch.setattr(body_parse, "PARSE_STEP", 16)  # the JSON text parsed in many steps


@settings(max_examples=80, deadline=None)
@given(body=agui_bodies(), wrap=st.booleans())
def test_sliced_run_agent_input_equals_model_validate_json(
    body: dict[str, Any], wrap: bool
) -> None:
    if wrap:
        _same(RunRequest, _dumps({"route": "r", "input": body}))
    else:
        _same(RunAgentInput, _dumps(body))


@settings(max_examples=60, deadline=None)
@given(
    roles=st.lists(st.sampled_from(["user", "assistant", "system", "x"]), max_size=10),
    texts=st.lists(st.text(max_size=6) | st.integers(), min_size=10, max_size=10),
)
def test_sliced_chat_request_equals_model_validate_json(roles: list[str], texts: list[Any]) -> None:
    messages = [
        {"id": f"m{i}", "role": role, "parts": [{"type": "text", "text": texts[i]}]}
        for i, role in enumerate(roles)
    ]
    _same(AiSdkChatRequest, _dumps({"id": "chat", "messages": messages}))


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b"[]",
        b'{"messages": 3}',
        b"null",
        b'{"messages": [1',
        b'{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"x"},]}',
    ],
)
def test_malformed_bodies_are_refused_as_model_validate_json_refuses_them(data: bytes) -> None:
    _same(RunAgentInput, data)


def _dumps(value: Any) -> bytes:
    return json.dumps(value).encode()  # big integers written whole


def test_a_large_body_text_is_parsed_in_steps_that_yield(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(body_parse, "SLICE", 10**9)  # one validation slice: the yields are parsing
    messages = [{"id": f"m{i}", "role": "user", "content": f"hi ]}},{{ {i}"} for i in range(300)]
    body = {"threadId": "t", "runId": "r", "messages": messages}
    data = _dumps({**body, "state": {}, "tools": [], "context": [], "forwardedProps": {}})
    real_sleep = asyncio.sleep
    yields = 0

    async def counted(delay: float) -> None:
        nonlocal yields
        yields += 1
        await real_sleep(delay)

    monkeypatch.setattr(body_parse.asyncio, "sleep", counted)
    parsed = asyncio.run(body_parse.validate_body(data, RunAgentInput))
    assert parsed == RunAgentInput.model_validate_json(data)
    assert yields >= len(data) // (3 * 16)
