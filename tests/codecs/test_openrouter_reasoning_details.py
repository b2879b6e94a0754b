"""OpenRouter ``reasoning_details`` round trips through Chat Completions (issue 11 kind 5).

Expected values come from OpenRouter's "Reasoning Tokens" page
(https://openrouter.ai/docs/guides/best-practices/reasoning-tokens), written out here:

* "reasoning_details Array Structure": entries ``{"type": "reasoning.summary", "summary"}``,
  ``{"type": "reasoning.encrypted", "data"}``, ``{"type": "reasoning.text", "text",
  "signature"}``, each with ``id``, ``format`` and ``index`` (the page's three examples are
  :data:`DOC_DETAILS`); streamed, the pieces of one entry share its ``index``;
* "Preserving Reasoning Blocks": the next request repeats the assistant message with
  ``reasoning_details`` unmodified and in order (:data:`DOC_ASSISTANT` is that message).

The clients' side is the real one: the AG-UI and AI SDK wires are replayed through
``@ag-ui/client`` 1.0.0 and ``ai`` 7 (``tests/harness``), and what those clients keep is what
the next request is built from.
"""

from __future__ import annotations

from typing import Any

import orjson
from ag_ui.core import RunAgentInput
from decoder_checks import assert_legal_run, decode_all, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.protocols._reasoning_details import merge_details
from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input
from agui_codecs.protocols.anthropic.request import to_anthropic
from agui_codecs.protocols.bedrock_converse.request import to_converse
from agui_codecs.protocols.gemini.request import to_gemini
from agui_codecs.protocols.openai_chat.request import to_openai_chat
from agui_codecs.protocols.openai_responses.request import to_openai_responses

DOC_DETAILS: list[dict[str, Any]] = [
    {
        "type": "reasoning.summary",
        "summary": "The model analyzed the problem by first identifying key constraints, "
        "then evaluating possible solutions...",
        "id": "reasoning-summary-1",
        "format": "anthropic-claude-v1",
        "index": 0,
    },
    {
        "type": "reasoning.encrypted",
        "data": "eyJlbmNyeXB0ZWQiOiJ0cnVlIiwiY29udGVudCI6IltSRURBQ1RFRF0ifQ==",
        "id": "reasoning-encrypted-1",
        "format": "anthropic-claude-v1",
        "index": 1,
    },
    {
        "type": "reasoning.text",
        "text": "Let me think through this step by step:\n1. First, I need to understand "
        "the user's question...",
        "signature": "sha256:abc123def456...",
        "id": "reasoning-text-1",
        "format": "anthropic-claude-v1",
        "index": 2,
    },
]
"""The three entries of OpenRouter's "reasoning_details Array Structure" section."""

DOC_CALL = {
    "id": "call_weather",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"location":"Boston"}'},
}

DOC_ASSISTANT: dict[str, Any] = {
    "role": "assistant",
    "content": "Let me check the weather.",
    "tool_calls": [DOC_CALL],
    "reasoning_details": DOC_DETAILS,
}
"""The assistant message "Preserving Reasoning Blocks" sends back (content, tool_calls and
the reasoning_details unmodified)."""

TOOLS = [{"name": "get_weather", "description": "weather", "parameters": {"type": "object"}}]
TEXT_KEY = {"reasoning.text": "text", "reasoning.summary": "summary"}
BLOB_KEY = {"reasoning.text": "signature", "reasoning.encrypted": "data"}


def _sse(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "model": "anthropic/claude-sonnet-4",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + orjson.dumps(chunk) + b"\n\n"


def _wires(events: list[Any]) -> tuple[bytes, bytes]:
    """The AG-UI and AI SDK (ai 7) response bodies of ``events``."""
    agui = AguiEncoder()
    ai = AiSdkEncoder(ai_sdk_major=7)
    agui_body = b"".join(agui.encode(e) for e in events) + agui.close()
    ai_body = b"".join(ai.encode(e) for e in events) + ai.close()
    return agui_body, ai_body


def _agui_next(messages: list[dict[str, Any]]) -> RunAgentInput:
    """The next AG-UI run: the client's messages, a result per tool call, a user turn."""
    history: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": "weather?"}]
    history += messages
    for message in messages:
        for call in message.get("toolCalls") or []:
            history.append(
                {"id": f"r-{call['id']}", "role": "tool", "toolCallId": call["id"], "content": "7C"}
            )
    history.append({"id": "u2", "role": "user", "content": "and now?"})
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "messages": history,
            "tools": TOOLS,
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    )


def _ai_next(messages: list[dict[str, Any]]) -> RunAgentInput:
    """The next AI SDK request: the chat's messages (tool parts answered), a user turn."""
    history: list[dict[str, Any]] = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather?"}]}
    ]
    for message in messages:
        for part in message.get("parts", []):
            if part.get("type", "").startswith("tool-"):
                part.update(state="output-available", output="7C")
        history.append(message)
    history.append({"id": "u2", "role": "user", "parts": [{"type": "text", "text": "and now?"}]})
    body = AiSdkChatRequest.model_validate({"id": "t1", "messages": history, "tools": TOOLS})
    return to_run_agent_input(body, run_id="r2")


def _next_bodies(stream: bytes, job: str) -> dict[str, dict[str, Any]]:
    """Decode ``stream``, replay both wires through the real clients, build the next Chat
    Completions body from what each client kept."""
    events = decode_all("openai-chat", stream)
    assert_legal_run(events)
    agui_body, ai_body = _wires(events)
    results = replay([(f"{job}-agui", "agui", agui_body), (f"{job}-ai", "ai-v7", ai_body)])
    out = {}
    for client, to_input in (("agui", _agui_next), ("ai", _ai_next)):
        result = results[f"{job}-{client}"]
        assert result["accepted"], (client, result["error"])
        assert result["streamError"] is None, (client, result)
        out[client] = to_openai_chat(to_input(result["messages"]), model="m")
    return out


def _assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def test_the_documented_reply_goes_back_as_the_documented_assistant_message() -> None:
    require_harness()
    reply = {
        "id": "gen-1",
        "object": "chat.completion",
        "model": "anthropic/claude-sonnet-4",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": DOC_ASSISTANT["content"],
                    "reasoning": DOC_DETAILS[0]["summary"] + DOC_DETAILS[2]["text"],
                    "reasoning_details": DOC_DETAILS,
                    "tool_calls": [DOC_CALL],
                },
            }
        ],
    }
    bodies = _next_bodies(orjson.dumps(reply), "doc")
    for client, body in bodies.items():
        assert _assistants(body) == [DOC_ASSISTANT], client
        roles = [m["role"] for m in body["messages"]]
        assert roles == ["user", "assistant", "tool", "user"], (client, roles)


def test_the_documented_entries_streamed_in_pieces_go_back_whole() -> None:
    """The signature after the answer began: the entry is two reasoning messages on the wire
    and one entry again in the next request."""
    require_harness()
    summary, encrypted, text = DOC_DETAILS
    head = {k: v for k, v in text.items() if k not in ("text", "signature")}
    stream = _sse({"role": "assistant", "content": ""})
    stream += _sse(
        {
            "reasoning": summary["summary"][:20],
            "reasoning_details": [{**summary, "summary": summary["summary"][:20]}],
        }
    )
    stream += _sse(
        {
            "reasoning_details": [
                {"type": "reasoning.summary", "index": 0, "summary": summary["summary"][20:]}
            ]
        }
    )
    stream += _sse({"reasoning_details": [encrypted, {**head, "text": text["text"][:9]}]})
    stream += _sse(
        {"reasoning_details": [{"type": "reasoning.text", "index": 2, "text": text["text"][9:]}]}
    )
    stream += _sse({"content": DOC_ASSISTANT["content"]})
    stream += _sse(
        {
            "reasoning_details": [
                {"type": "reasoning.text", "index": 2, "text": "", "signature": text["signature"]}
            ]
        }
    )
    stream += _sse({"tool_calls": [{"index": 0, **DOC_CALL}]}, "tool_calls")
    stream += b"data: [DONE]\n\n"
    for client, body in _next_bodies(stream, "pieces").items():
        assert _assistants(body) == [DOC_ASSISTANT], client


# -- the property ---------------------------------------------------------------------------

FORMATS = ["anthropic-claude-v1", "openai-responses-v1", "google-gemini-v1", "unknown"]
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)


@st.composite
def entries(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A reasoning turn's entries, each as OpenRouter documents them (index = position)."""
    out = []
    for index in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(sorted({*TEXT_KEY, *BLOB_KEY})))
        entry: dict[str, Any] = {"type": kind, "index": index}
        if kind in TEXT_KEY:
            entry[TEXT_KEY[kind]] = draw(TEXT)
        if kind == "reasoning.encrypted" or (kind == "reasoning.text" and draw(st.booleans())):
            entry[BLOB_KEY[kind]] = f"blob{index}:" + draw(st.text("ab+/=", min_size=1))
        if draw(st.booleans()):
            entry["id"] = f"rd-{index}"
        if draw(st.booleans()):
            entry["format"] = draw(st.sampled_from(FORMATS))
        out.append(entry)
    return out


def _pieces(draw: st.DrawFn, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """``entry`` as stream pieces: its text cut anywhere, its other keys on random pieces."""
    kind = entry["type"]
    text_key = TEXT_KEY.get(kind)
    text = entry.get(text_key, "") if text_key else ""
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=3)))
    parts = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)] if text else []
    pieces = [{"type": kind, "index": entry["index"]} for _ in parts or [""]]
    if text_key:
        for piece, part in zip(pieces, parts, strict=False):
            piece[text_key] = part
    if draw(st.booleans()):  # the blob (a signature) alone, after the text
        pieces.append(
            {"type": kind, "index": entry["index"], **({text_key: ""} if text_key else {})}
        )
    for key in ("id", "format", "signature", "data"):
        if key in entry:
            at = -1 if key in ("signature", "data") else draw(st.integers(0, len(pieces) - 1))
            pieces[at][key] = entry[key]
    return pieces


@st.composite
def streams(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[str], bytes]:
    """(entries, answer text pieces, the Chat Completions stream) with the entries' pieces in
    random chunks, answer text and tool calls interleaved, ``reasoning`` flattened or not."""
    turn = draw(entries())
    items: list[tuple[str, Any]] = [
        ("detail", piece) for entry in turn for piece in _pieces(draw, entry)
    ]
    answer = draw(st.lists(TEXT, max_size=3))
    for text in answer:
        items.insert(draw(st.integers(0, len(items))), ("content", text))
    for n in range(draw(st.integers(0, 2))):
        call = {
            "index": n,
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": "get_weather", "arguments": f'{{"n":{n}}}'},
        }
        items.insert(draw(st.integers(0, len(items))), ("call", call))
    body = _sse({"role": "assistant", "content": ""})
    i = 0
    while i < len(items):
        kind, value = items[i]
        if kind != "detail":
            key = "content" if kind == "content" else "tool_calls"
            body += _sse({key: value if kind == "content" else [value]})
            i += 1
            continue
        size = draw(st.integers(1, 3))
        group: list[dict[str, Any]] = []
        while i < len(items) and items[i][0] == "detail" and len(group) < size:
            group.append(items[i][1])
            i += 1
        delta: dict[str, Any] = {"reasoning_details": group}
        if draw(st.booleans()):  # OpenRouter's flattened copy of the pieces' text
            delta["reasoning"] = "".join(p.get("text") or p.get("summary") or "" for p in group)
        body += _sse(delta)
    body += _sse({}, "stop") + b"data: [DONE]\n\n"
    return turn, answer, body


def _envelopes(values: list[str]) -> list[dict[str, Any]]:
    return [orjson.loads(v) for v in values]


def _blobs(turn: list[dict[str, Any]]) -> list[str]:
    return [e[BLOB_KEY[e["type"]]] for e in turn if BLOB_KEY.get(e["type"]) in e]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=streams())
def test_every_reasoning_byte_and_blob_reaches_both_wires_once(
    case: tuple[list[dict[str, Any]], list[str], bytes],
) -> None:
    turn, _, stream = case
    events = decode_all("openai-chat", stream)
    assert_legal_run(events)
    texts = "".join(e.get(TEXT_KEY.get(e["type"], ""), "") for e in turn)
    # AG-UI: the reasoning content, and the envelopes (REASONING_ENCRYPTED_VALUE)
    agui = wire(events)
    content = "".join(w["delta"] for w in agui if w["type"] == "REASONING_MESSAGE_CONTENT")
    assert content == texts
    values = [w["encryptedValue"] for w in agui if w["type"] == "REASONING_ENCRYPTED_VALUE"]
    assert all(
        w["metadata"] == {"provider": "openrouter", "field": "reasoningDetails"}
        for w in agui
        if w["type"] == "REASONING_ENCRYPTED_VALUE"
    )
    found = [str(e.get(BLOB_KEY.get(e["type"], ""))) for e in _envelopes(values)]
    for blob in _blobs(turn):
        assert found.count(blob) == 1, (blob, values)
    # AI SDK: reasoning-delta text, providerMetadata.openrouter.reasoningDetails
    _, ai_body = _wires(events)
    chunks = [
        orjson.loads(line[6:]) for line in ai_body.split(b"\n") if line.startswith(b"data: {")
    ]
    deltas = "".join(c["delta"] for c in chunks if c["type"] == "reasoning-delta")
    assert deltas == texts
    carried = [
        c["providerMetadata"]["openrouter"]["reasoningDetails"]
        for c in chunks
        if c["type"].startswith("reasoning-") and "providerMetadata" in c
    ]
    found = [str(e.get(BLOB_KEY.get(e["type"], ""))) for e in _envelopes(carried)]
    for blob in _blobs(turn):
        assert found.count(blob) == 1, (blob, carried)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=st.lists(streams(), min_size=4, max_size=4))
def test_the_next_request_carries_the_entries_back_as_openrouter_documents_them(
    cases: list[tuple[list[dict[str, Any]], list[str], bytes]],
) -> None:
    """Through the real clients (both wires) and back: the next body's assistant messages
    hold every entry, whole and in order, each blob once."""
    require_harness()
    jobs: list[Any] = []
    for n, (_, _, stream) in enumerate(cases):
        events = decode_all("openai-chat", stream)
        agui_body, ai_body = _wires(events)
        jobs += [(f"{n}-agui", "agui", agui_body), (f"{n}-ai", "ai-v7", ai_body)]
    results = replay(jobs)
    for n, (turn, _, _) in enumerate(cases):
        for client, to_input in (("agui", _agui_next), ("ai", _ai_next)):
            result = results[f"{n}-{client}"]
            assert result["accepted"], (client, result["error"])
            body = to_openai_chat(to_input(result["messages"]), model="m")
            # a tool call amid the answer splits the reply into assistant messages around its
            # results (results_after_calls); the entries are spread over them, in order
            carried = [d for m in _assistants(body) for d in m.get("reasoning_details", [])]
            assert merge_details(carried) == turn, (client, result["messages"])
            text = orjson.dumps(body).decode()
            for blob in _blobs(turn):
                assert text.count(orjson.dumps(blob).decode()[1:-1]) == 1, (client, blob)


def _history(reasoning: dict[str, Any]) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t",
            "runId": "r",
            "messages": [
                {"id": "u", "role": "user", "content": "hi"},
                {"id": "rs", "role": "reasoning", "content": "thought", **reasoning},
                {"id": "a", "role": "assistant", "content": "hello"},
                {"id": "u2", "role": "user", "content": "again"},
            ],
            "tools": [],
            "context": [],
            "state": {},
            "forwardedProps": {},
        }
    )


def _sent_reasoning(run_input: RunAgentInput) -> dict[str, Any]:
    """What each other route's request builder sends of the history's reasoning message."""
    anthropic = to_anthropic(run_input, model="claude-sonnet-4")["messages"]
    gemini = to_gemini(run_input, model="gemini-2.5-pro")["contents"]
    bedrock = to_converse(run_input)["messages"]
    responses = to_openai_responses(run_input, model="o4-mini")["input"]
    return {
        "anthropic": [
            b
            for m in anthropic
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") in ("thinking", "redacted_thinking")
        ],
        "gemini": [p for c in gemini for p in c["parts"] if "thoughtSignature" in p],
        "bedrock": [b for m in bedrock for b in m["content"] if "reasoningContent" in b],
        "responses": [i for i in responses if i.get("type") == "reasoning"],
    }


def test_an_envelope_is_never_sent_to_another_providers_route() -> None:
    """An ``encryptedValue`` that is an OpenRouter entry says where it is from: without
    provenance (``@ag-ui/client`` keeps only the value) no other route sends it as its own
    signature or encrypted content (each provider rejects another's: Anthropic "Invalid
    signature in thinking block", OpenAI "encrypted content could not be verified")."""
    envelope = orjson.dumps({"type": "reasoning.text", "signature": "s", "index": 0}).decode()
    run_input = _history({"encryptedValue": envelope})
    assert _sent_reasoning(run_input) == {
        "anthropic": [],
        "gemini": [],
        "bedrock": [],
        "responses": [],
    }
    chat = to_openai_chat(run_input, model="m")
    assert _assistants(chat) == [
        {
            "role": "assistant",
            "content": "hello",
            "reasoning_details": [
                {"type": "reasoning.text", "text": "thought", "signature": "s", "index": 0}
            ],
        }
    ]


def test_another_providers_value_is_not_sent_as_anthropic_thinking() -> None:
    """The same rule on the Anthropic route as on the others: a value whose metadata names
    another provider (a Gemini thought signature) is not an Anthropic signature."""
    run_input = _history(
        {"encryptedValue": "g-sig", "metadata": {"provider": "google", "field": "thoughtSignature"}}
    )
    sent = _sent_reasoning(run_input)
    assert sent["anthropic"] == [] and sent["responses"] == [] and sent["bedrock"] == []
    assert _assistants(to_openai_chat(run_input, model="m")) == [
        {"role": "assistant", "content": "hello"}
    ]
    own = _history(
        {"encryptedValue": "a-sig", "metadata": {"provider": "anthropic", "field": "signature"}}
    )
    assert _sent_reasoning(own)["anthropic"] == [
        {"type": "thinking", "thinking": "thought", "signature": "a-sig"}
    ]


def test_entries_of_a_whole_message_without_index_stay_apart() -> None:
    """A non-streamed message lists each entry once, whole: two ``reasoning.text`` entries
    without ``index`` are two entries, each with its own signature."""
    first = {"type": "reasoning.text", "text": "one", "signature": "s1"}
    second = {"type": "reasoning.text", "text": "two", "signature": "s2"}
    reply = {
        "id": "gen-2",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": "ok",
                    "reasoning_details": [first, second],
                },
            }
        ],
    }
    events = wire(decode_all("openai-chat", orjson.dumps(reply)))
    values = [
        orjson.loads(w["encryptedValue"])
        for w in events
        if w["type"] == "REASONING_ENCRYPTED_VALUE"
    ]
    assert values == [
        {"type": "reasoning.text", "signature": "s1"},
        {"type": "reasoning.text", "signature": "s2"},
    ]
    texts = [w["delta"] for w in events if w["type"] == "REASONING_MESSAGE_CONTENT"]
    assert texts == ["one", "two"]
