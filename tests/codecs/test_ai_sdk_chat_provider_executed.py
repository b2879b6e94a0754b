"""Provider-executed tool parts of an AI SDK chat request (issue 11, kind 5).

An ``ai`` 7.0.173 tool part with ``providerExecuted: true`` (``src/ui/ui-messages.ts``
``ToolUIPart``) is, in ``convertToModelMessages`` (``src/ui/convert-to-model-messages.ts``),
a ``tool-call`` with ``providerExecuted`` and, once ``output-available`` / ``output-error``, its
``tool-result`` right after it in the assistant content; client tool parts are answered in a
tool message after the step. The gateway's request must carry the same as the AG-UI history
``@ag-ui/client`` 1.0.0 keeps (``docs/protocols.md`` §4.2): a tool call with
``metadata.providerExecuted`` and its tool result, the client parts as before.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import AssistantMessage, Message, ReasoningMessage, ToolMessage
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)
_PROVIDER_STATES = (
    "output-available",
    "output-error",
    "output-denied",
    "input-available",
    "approval-requested",
    "approval-responded",
)
_UNANSWERED = ("input-available", "approval-requested", "approval-responded")
_CLIENT_STATES = _PROVIDER_STATES


@st.composite
def _tool_part(draw: st.DrawFn, provider: bool) -> dict[str, Any]:
    state = draw(st.sampled_from(_PROVIDER_STATES if provider else _CLIENT_STATES))
    part: dict[str, Any] = {"toolCallId": "", "state": state, "input": draw(_JSON)}
    if draw(st.booleans()):
        part.update(type="dynamic-tool", toolName=draw(st.sampled_from(["lookup", "mcp.ask"])))
    else:
        part["type"] = "tool-" + draw(st.sampled_from(["web_search", "code_execution", "get"]))
    if provider:
        part["providerExecuted"] = True
    if state in ("approval-responded", "output-denied"):
        approved = state == "approval-responded" and draw(st.booleans())
        part["approval"] = {"id": f"ap_{draw(st.integers(0, 9))}", "approved": approved}
    if state == "output-available":
        part["output"] = draw(_JSON)
    elif state == "output-error":
        part["errorText"] = draw(st.text(min_size=1, max_size=8))
    return part


_PART = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(min_size=1, max_size=6)),
    st.builds(lambda t: {"type": "reasoning", "text": t}, st.text(max_size=6)),
    st.just({"type": "step-start"}),
    st.just({"type": "source-url", "sourceId": "s", "url": "https://example.com"}),
    _tool_part(provider=False),
    _tool_part(provider=True),
)


@st.composite
def _assistant_parts(draw: st.DrawFn) -> list[dict[str, Any]]:
    parts = draw(st.lists(_PART, max_size=12))
    for n, part in enumerate(parts):  # unique call ids, as the AI SDK has them
        if "toolCallId" in part:
            parts[n] = {**part, "toolCallId": f"call_{n}"}
    return parts


def _convert(parts: list[dict[str, Any]]) -> list[Message]:
    body = {
        "id": "chat",
        "messages": [
            {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]},
            {"id": "a1", "role": "assistant", "parts": parts},
        ],
    }
    return to_run_agent_input(AiSdkChatRequest.model_validate(body), run_id="r").messages[1:]


def _calls(messages: list[Message]) -> list[Any]:
    return [c for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls or ()]


def _provider(part: dict[str, Any]) -> bool:
    return part.get("providerExecuted") is True


@settings(max_examples=300, deadline=None)
@given(_assistant_parts())
def test_each_provider_executed_part_is_one_flagged_call_and_one_result(
    parts: list[dict[str, Any]],
) -> None:
    messages = _convert(parts)
    calls = _calls(messages)
    # every tool part is a call, in the order of the parts
    assert [c.id for c in calls] == [p["toolCallId"] for p in parts if "toolCallId" in p]
    by_id = {c.id: c for c in calls}
    for part in filter(_provider, parts):
        call = by_id[part["toolCallId"]]
        assert call.metadata == {"providerExecuted": True}
        results = [
            (n, m)
            for n, m in enumerate(messages)
            if isinstance(m, ToolMessage) and m.tool_call_id == call.id
        ]
        if part["state"] in _UNANSWERED:
            # no result yet (an approval's answer is a ``resume`` entry): the call alone, as
            # ``ai`` sends it in the assistant content
            assert results == []
            continue
        [(at, result)] = results
        # the result directly follows the assistant message whose last call it answers
        holder = messages[at - 1]
        assert isinstance(holder, AssistantMessage) and holder.tool_calls
        assert holder.tool_calls[-1].id == call.id
        if part["state"] == "output-error":
            assert (result.content, result.error) == (part["errorText"], part["errorText"])
        elif part["state"] == "output-denied":  # ``ai``: "Tool call execution denied."
            assert result.error == result.content == "Tool call execution denied."
        else:
            expected = part["output"]
            assert isinstance(result.content, str)
            if isinstance(expected, str):
                assert result.content == expected
            else:
                assert json.loads(result.content) == expected


@settings(max_examples=300, deadline=None)
@given(_assistant_parts())
def test_client_tool_parts_and_text_are_unchanged_by_provider_executed_parts(
    parts: list[dict[str, Any]],
) -> None:
    messages = _convert(parts)
    alone = _convert([p for p in parts if not _provider(p)])
    provider_ids = {p["toolCallId"] for p in parts if _provider(p)}

    def client_view(ms: list[Message]) -> tuple[Any, ...]:
        calls = [c for c in _calls(ms) if c.id not in provider_ids]
        results = [
            m for m in ms if isinstance(m, ToolMessage) and m.tool_call_id not in provider_ids
        ]
        texts = "".join(m.content or "" for m in ms if isinstance(m, AssistantMessage))
        reasoning = [m.content for m in ms if isinstance(m, ReasoningMessage)]
        assert all(c.metadata is None for c in calls)
        return calls, [(r.tool_call_id, r.content, r.error) for r in results], texts, reasoning

    assert client_view(messages) == client_view(alone)
    if not provider_ids:  # without such parts the conversion is exactly the old one
        assert messages == alone
