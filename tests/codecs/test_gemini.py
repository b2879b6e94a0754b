"""Gemini ``streamGenerateContent`` decoder (``agui_codecs.decoders.gemini``).

Expected values come from the upstream input itself (``shared/corpus/gemini``, parsed here
independently of the decoder), from the Gemini REST reference (``GenerateContentResponse``:
``FinishReason``, ``UsageMetadata``, ``promptFeedback``, Vertex ``FunctionCall.partialArgs``)
and from the AG-UI 1.0 TokenUsage accounting (input/output are totals, reasoning and cached
tokens are parts of them). Hand-made fixtures cover what the corpus lacks (SAFETY, MAX_TOKENS,
blocked prompts, mid-stream errors). The real clients judge the encoded output in
:func:`test_corpus_runs_are_accepted_by_the_real_clients`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest
from ag_ui.core import Event
from agui_codecs.decoders.gemini import GeminiDecoder, apply_partial_args
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.errors import MalformedUpstreamError
from corpus import corpus_files, require_corpus
from decoder_checks import assert_well_formed_run, wire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

FILES = corpus_files("gemini")
FILE_IDS = [p.name for p in FILES] or ["corpus-absent"]


# -- helpers ------------------------------------------------------------------------------
def decode(data: bytes, cuts: Iterable[int] = (), **options: Any) -> list[Event]:
    """Feed ``data`` split at ``cuts`` (byte offsets), then close."""
    decoder = GeminiDecoder(**options)
    out: list[Event] = []
    start = 0
    for cut in sorted(set(cuts)):
        out += decoder.feed(data[start:cut])
        start = cut
    return out + decoder.feed(data[start:]) + decoder.close()


def of_type(events: list[Event], *types: str) -> list[dict[str, Any]]:
    return [w for w in wire(events) if w["type"] in types]


def upstream(path: Path) -> list[dict[str, Any]]:
    """The GenerateContentResponse objects of a corpus file, parsed without the decoder."""
    text = path.read_text("utf-8")
    if path.suffix == ".json":
        return list(json.loads(text))
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def parts_of(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part
        for body in bodies
        for cand in body.get("candidates") or []
        for part in (cand.get("content") or {}).get("parts") or []
    ]


def response(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage: dict[str, Any] | None = None,
    rid: str = "resp-1",
    **candidate: Any,
) -> dict[str, Any]:
    """A GenerateContentResponse with one candidate (REST v1beta shape)."""
    cand: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    cand.update(candidate)
    body: dict[str, Any] = {"candidates": [cand], "modelVersion": "gemini-test", "responseId": rid}
    if usage:
        body["usageMetadata"] = usage
    return body


def sse(*bodies: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + orjson.dumps(b) + b"\r\n\r\n" for b in bodies)


def jsonl(*bodies: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(b) + b"\n" for b in bodies)


def call_args(events: list[Event]) -> dict[str, Any]:
    """toolCallId -> parsed concatenation of its ARGS (checked at END by the run checks)."""
    args: dict[str, str] = {}
    for w in wire(events):
        if w["type"] == "TOOL_CALL_START":
            args[w["toolCallId"]] = ""
        elif w["type"] == "TOOL_CALL_ARGS":
            args[w["toolCallId"]] += w["delta"]
    return {k: json.loads(v) if v else None for k, v in args.items()}


def ai_sdk_chunks(events: list[Event]) -> list[Any]:
    encoder = AiSdkEncoder()
    body = b"".join(encoder.encode(e) for e in events) + encoder.close()
    return [
        json.loads(block[6:])
        for block in body.decode().split("\n\n")
        if block.startswith("data: ") and block[6:] != "[DONE]"
    ]


def expected_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """AG-UI TokenUsage (wire) for a Gemini usageMetadata, by the accounting rules."""
    prompt = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
    output = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    out = {
        "provider": "google",
        "inputTokens": prompt,
        "outputTokens": output,
        "totalTokens": usage["totalTokenCount"],
    }
    if "thoughtsTokenCount" in usage:
        out["reasoningTokens"] = usage["thoughtsTokenCount"]
    if "cachedContentTokenCount" in usage:
        out["cachedInputTokens"] = usage["cachedContentTokenCount"]
    return out


# -- the corpus -----------------------------------------------------------------------------
@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_decodes_to_a_complete_successful_run(path: Path | None) -> None:
    if path is None:
        require_corpus("gemini")
        return
    events = decode(path.read_bytes())
    assert_well_formed_run(events)
    assert wire(events)[-1]["type"] == "RUN_FINISHED"  # every recording has a finishReason


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_file_fed_byte_by_byte_gives_identical_events(path: Path | None) -> None:
    if path is None:
        require_corpus("gemini")
        return
    data = path.read_bytes()
    assert wire(decode(data, range(1, len(data)))) == wire(decode(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_corpus_random_splits_give_identical_events(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(require_corpus("gemini")))
    raw = path.read_bytes()
    cuts = data.draw(st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=30))
    assert wire(decode(raw, cuts)) == wire(decode(raw))


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_usage_equals_the_last_usage_metadata(path: Path | None) -> None:
    if path is None:
        require_corpus("gemini")
        return
    counted = [
        b["usageMetadata"]
        for b in upstream(path)
        if "totalTokenCount" in b.get("usageMetadata", {})
    ]
    finished = wire(decode(path.read_bytes()))[-1]
    assert finished["usage"] == [
        {**expected_usage(counted[-1]), "model": finished["metadata"]["model"]}
    ]


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_every_thought_signature_survives(path: Path | None) -> None:
    if path is None:
        require_corpus("gemini")
        return
    parts = parts_of(upstream(path))
    events = decode(path.read_bytes())
    encrypted = of_type(events, "REASONING_ENCRYPTED_VALUE")
    assert Counter(e["encryptedValue"] for e in encrypted) == Counter(
        p["thoughtSignature"] for p in parts if p.get("thoughtSignature")
    )
    starts = {s["toolCallId"] for s in of_type(events, "TOOL_CALL_START")}
    texts = {s["messageId"] for s in of_type(events, "TEXT_MESSAGE_START")}
    by_value = {e["encryptedValue"]: e for e in encrypted}
    for part in parts:
        if not part.get("thoughtSignature"):
            continue
        event = by_value[part["thoughtSignature"]]
        assert event["metadata"] == {"provider": "google", "field": "thoughtSignature"}
        if "functionCall" in part or "executableCode" in part:
            assert event["subtype"] == "tool-call" and event["entityId"] in starts
        else:
            assert event["subtype"] == "message" and event["entityId"] in texts


@pytest.mark.parametrize("path", FILES or [None], ids=FILE_IDS)
def test_corpus_function_call_arguments_equal_the_provider_arguments(path: Path | None) -> None:
    if path is None:
        require_corpus("gemini")
        return
    whole = [
        p["functionCall"].get("args", {})
        for p in parts_of(upstream(path))
        if "functionCall" in p
        and "name" in p["functionCall"]
        and "partialArgs" not in p["functionCall"]
        and not p["functionCall"].get("willContinue")
    ]
    events = decode(path.read_bytes())
    client = {s["toolCallId"] for s in of_type(events, "TOOL_CALL_START") if "metadata" not in s}
    args = [v for k, v in call_args(events).items() if k in client]
    if not any("willContinue" in json.dumps(b) for b in upstream(path)):  # Vertex: see below
        assert args == whole


def test_vertex_streamed_arguments_concatenate_to_the_final_arguments() -> None:
    files = {p.name: p for p in require_corpus("gemini")}
    # Read off the recordings: each call's partialArgs name one jsonPath with a string split
    # into a first piece and an empty closing piece.
    cases = {
        "vertex-parallel-function-calls-partial-args.jsonl": [
            ("getWeather", {"location": "Boston"}),
            ("getWeather", {"location": "San Francisco"}),
        ],
        "vertex-thought-then-multiple-function-calls.jsonl": [
            ("read_theme", {}),
            ("read_screen", {"id": "A"}),
            ("read_screen", {"id": "B"}),
            ("read_screen", {"id": "C"}),
        ],
    }
    for name, expected in cases.items():
        events = decode(files[name].read_bytes())
        assert_well_formed_run(events)
        names = [s["toolCallName"] for s in of_type(events, "TOOL_CALL_START")]
        assert list(zip(names, call_args(events).values(), strict=True)) == expected
        finished = wire(events)[-1]
        assert finished["metadata"]["finishReason"] == "tool-calls"
        assert finished["outcome"]["pendingToolCallIds"] == list(call_args(events))


# -- tool call ids --------------------------------------------------------------------------
def test_function_call_without_id_gets_one_synthesized_id_everywhere() -> None:
    body = jsonl(
        response(
            {
                "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": "sig-1",
            }
        ),
        response({"text": ""}, finish="STOP"),
    )
    events = decode(body)
    assert_well_formed_run(events)
    ids = {
        w["type"]: w.get("toolCallId", w.get("entityId"))
        for w in wire(events)
        if w["type"].startswith("TOOL_CALL") or w["type"] == "REASONING_ENCRYPTED_VALUE"
    }
    assert set(ids) == {
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "REASONING_ENCRYPTED_VALUE",
    }
    assert len(set(ids.values())) == 1
    assert wire(events)[-1]["outcome"]["pendingToolCallIds"] == [ids["TOOL_CALL_START"]]


def test_synthesized_call_ids_are_deterministic_and_unique_within_the_run() -> None:
    body = sse(
        response(
            {"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "a", "args": {}}}
        ),
        response({"functionCall": {"name": "b"}}, finish="STOP"),
    )
    first = [s["toolCallId"] for s in of_type(decode(body), "TOOL_CALL_START")]
    again = [s["toolCallId"] for s in of_type(decode(body, range(1, len(body))), "TOOL_CALL_START")]
    assert first == again
    assert len(set(first)) == 3
    assert all(i.startswith("resp-1") for i in first)  # derived from responseId


def test_function_call_id_from_upstream_is_kept() -> None:
    body = sse(
        response({"functionCall": {"id": "fc-7", "name": "a", "args": {"x": 1}}}, finish="STOP")
    )
    assert call_args(decode(body)) == {"fc-7": {"x": 1}}


# -- Vertex streamed function-call arguments ---------------------------------------------------
def partial(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
    """A response whose part carries ``functionCall.partialArgs`` (Vertex streamed args)."""
    call: dict[str, Any] = {"partialArgs": list(args)}
    if more:
        call["willContinue"] = True
    return response({"functionCall": call})


def streamed_call(
    name: str, *chunks: list[dict[str, Any]], terminal: bool = True
) -> list[dict[str, Any]]:
    out = [response({"functionCall": {"name": name, "willContinue": True}})]
    out += [partial(*c) for c in chunks]
    if terminal:
        out.append(response({"functionCall": {}}))
    return out


def test_partial_args_nested_paths_arrays_and_scalars_build_the_object() -> None:
    bodies = streamed_call(
        "cook",
        [{"jsonPath": "$.recipe.name", "stringValue": "Lasa", "willContinue": True}],
        [{"jsonPath": "$.recipe.name", "stringValue": "gna"}],
        [{"jsonPath": "$.recipe.ingredients[0].amount", "numberValue": 16}],
        [
            {"jsonPath": "$.recipe.ingredients[1].amount", "numberValue": 0.5},
            {"jsonPath": "$.recipe.vegan", "boolValue": False},
        ],
        [{"jsonPath": "$['odd key']", "nullValue": "NULL_VALUE"}],
    )
    events = decode(jsonl(*bodies, response({"text": ""}, finish="STOP")))
    assert_well_formed_run(events)
    assert list(call_args(events).values()) == [
        {
            "recipe": {
                "name": "Lasagna",
                "ingredients": [{"amount": 16}, {"amount": 0.5}],
                "vegan": False,
            },
            "odd key": None,
        }
    ]
    assert len(of_type(events, "TOOL_CALL_ARGS")) == 1  # buffered: one ARGS at completion


def test_partial_args_revisiting_an_earlier_path_still_give_valid_json() -> None:
    # Appending text per leaf would emit {"a":{"x":1},"b":2 and then need to reopen "a".
    bodies = streamed_call(
        "f",
        [{"jsonPath": "$.a.x", "numberValue": 1}],
        [{"jsonPath": "$.b", "numberValue": 2}],
        [{"jsonPath": "$.a.y", "stringValue": "late"}],
    )
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_well_formed_run(events)
    assert list(call_args(events).values()) == [{"a": {"x": 1, "y": "late"}, "b": 2}]


def test_partial_args_string_pieces_with_quotes_and_unicode_concatenate_exactly() -> None:
    pieces = ['He said "hi', '" \\ and ', "caf\u00e9 \U0001f600", ""]
    chunks = [[{"jsonPath": "$.s", "stringValue": p, "willContinue": True}] for p in pieces[:-1]]
    chunks.append([{"jsonPath": "$.s", "stringValue": pieces[-1]}])
    events = decode(sse(*streamed_call("say", *chunks), response(finish="STOP")))
    assert list(call_args(events).values()) == [{"s": "".join(pieces)}]


def test_partial_args_chunk_without_will_continue_completes_the_call() -> None:
    # google-stream-tool-call-array-arguments-missing-terminal-function-call (vercel/ai): the
    # last partialArgs chunk has no willContinue and no functionCall {} follows.
    bodies = [
        response({"functionCall": {"name": "writeItems", "willContinue": True}}),
        partial({"jsonPath": "$.operations[0].price", "numberValue": 0.5}),
        partial({"jsonPath": "$.operations[1].price", "numberValue": 0.3}, more=False),
        response({"text": "done"}, finish="STOP"),
    ]
    events = decode(jsonl(*bodies))
    assert_well_formed_run(events)
    types = [w["type"] for w in wire(events)]
    assert types.index("TOOL_CALL_END") < types.index("TEXT_MESSAGE_START")
    assert list(call_args(events).values()) == [{"operations": [{"price": 0.5}, {"price": 0.3}]}]


def test_keep_alive_function_call_with_only_will_continue_is_ignored() -> None:
    bodies = streamed_call("f", [{"jsonPath": "$.a", "stringValue": "1"}])
    bodies.insert(2, response({"functionCall": {"willContinue": True}}))
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_well_formed_run(events)
    assert list(call_args(events).values()) == [{"a": "1"}]


def test_streamed_call_left_open_is_completed_at_the_end_of_the_turn() -> None:
    bodies = streamed_call("f", [{"jsonPath": "$.a", "numberValue": 1}], terminal=False)
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_well_formed_run(events)
    assert list(call_args(events).values()) == [{"a": 1}]


def test_partial_args_with_no_call_in_progress_is_a_malformed_upstream() -> None:
    body = jsonl(response({"text": "hi"}), partial({"jsonPath": "$.a", "numberValue": 1}))
    decoder = GeminiDecoder()
    events = decoder.feed(body) + decoder.close()
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
    assert isinstance(decoder.error, MalformedUpstreamError)


@pytest.mark.parametrize("path", ["a.b", "$.a[x]", "$..a", 7])
def test_unsupported_json_path_is_a_typed_error(path: Any) -> None:
    with pytest.raises(MalformedUpstreamError):
        apply_partial_args({}, {"jsonPath": path, "numberValue": 1})


def test_partial_args_array_index_past_the_cap_is_a_typed_error() -> None:
    with pytest.raises(MalformedUpstreamError):
        apply_partial_args({}, {"jsonPath": "$.a[999999999]", "numberValue": 1})


# -- finish reasons, blocks, errors ----------------------------------------------------------
@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content-filter"),
        ("RECITATION", "content-filter"),
        ("BLOCKLIST", "content-filter"),
        ("PROHIBITED_CONTENT", "content-filter"),
        ("SPII", "content-filter"),
        ("IMAGE_SAFETY", "content-filter"),
        ("OTHER", "other"),
        ("LANGUAGE", "other"),
        ("FINISH_REASON_UNSPECIFIED", "other"),
    ],
)
def test_finish_reason_maps_to_the_canonical_reason(reason: str, expected: str) -> None:
    body = sse(response({"text": "partial"}), response(finish=reason))
    events = decode(body)
    assert_well_formed_run(events)
    finished = wire(events)[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["metadata"]["finishReason"] == expected
    assert finished["metadata"]["providerFinishReason"] == reason


def test_safety_finish_keeps_the_safety_ratings() -> None:
    ratings = [
        {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
    ]
    events = decode(
        sse(response({"text": "Here is"}), response(finish="SAFETY", safetyRatings=ratings))
    )
    assert wire(events)[-1]["metadata"]["safetyRatings"] == ratings


def test_max_tokens_finish_with_usage() -> None:
    usage = {
        "promptTokenCount": 5,
        "candidatesTokenCount": 8,
        "thoughtsTokenCount": 3,
        "cachedContentTokenCount": 2,
        "totalTokenCount": 16,
    }
    events = decode(sse(response({"text": "long"}, finish="MAX_TOKENS", usage=usage)))
    finished = wire(events)[-1]
    assert finished["metadata"]["finishReason"] == "length"
    assert finished["usage"] == [{**expected_usage(usage), "model": "gemini-test"}]


@pytest.mark.parametrize(
    "reason",
    [
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "TOO_MANY_TOOL_CALLS",
        "MALFORMED_RESPONSE",
    ],
)
def test_failed_turn_finish_reason_is_a_run_error_with_that_code(reason: str) -> None:
    body = sse(
        response({"text": "calling"}), response(finish=reason, finishMessage="bad call syntax")
    )
    events = decode(body)
    assert_well_formed_run(events)
    error = wire(events)[-1]
    assert (error["type"], error["code"], error["message"]) == (
        "RUN_ERROR",
        reason,
        "bad call syntax",
    )


def test_stop_after_function_calls_is_tool_calls() -> None:
    body = sse(
        response({"text": "Let me check."}),
        response({"functionCall": {"name": "lookup", "args": {"q": 1}}}, finish="STOP"),
    )
    finished = wire(decode(body))[-1]
    assert finished["metadata"]["finishReason"] == "tool-calls"


def test_blocked_prompt_is_content_filter_with_the_prompt_feedback() -> None:
    feedback = {
        "blockReason": "SAFETY",
        "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "HIGH"}],
    }
    body = sse(
        {
            "promptFeedback": feedback,
            "usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 7},
            "modelVersion": "gemini-test",
        }
    )
    events = decode(body)
    assert_well_formed_run(events)
    finished = wire(events)[-1]
    assert finished["type"] == "RUN_FINISHED"
    assert finished["metadata"]["finishReason"] == "content-filter"
    assert finished["metadata"]["providerFinishReason"] == "SAFETY"
    assert finished["metadata"]["promptFeedback"] == feedback
    assert finished["usage"][0]["inputTokens"] == 7


def test_error_object_mid_stream_closes_the_text_then_run_error_with_status() -> None:
    body = (
        b"["
        + orjson.dumps(response({"text": "Hel"}))
        + b",\r\n"
        + orjson.dumps(
            {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
        )
        + b"]"
    )
    events = decode(body)
    assert_well_formed_run(events)
    types = [w["type"] for w in wire(events)]
    assert types[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert (wire(events)[-1]["code"], wire(events)[-1]["message"]) == (
        "UNAVAILABLE",
        "The model is overloaded.",
    )


def test_error_object_without_status_uses_the_http_code() -> None:
    events = decode(b'[{"error": {"code": 429, "message": "quota"}}]')
    assert wire(events)[-1]["code"] == "HTTP_429"


def test_stream_without_finish_reason_is_truncated_not_a_short_success() -> None:
    events = decode(sse(response({"text": "The capital"})))
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_json_array_cut_before_its_closing_bracket_is_a_malformed_upstream() -> None:
    body = b"[" + orjson.dumps(response({"text": "Hi"}, finish="STOP"))
    events = decode(body)
    assert_well_formed_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"


def test_non_object_part_is_a_typed_error_not_a_crash() -> None:
    events = decode(sse({"candidates": [{"content": {"parts": ["text"]}}]}))
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"


# -- parts ------------------------------------------------------------------------------------
def test_thought_parts_become_reasoning_closed_before_the_answer() -> None:
    body = sse(
        response({"text": "Thinking", "thought": True}), response({"text": "Answer"}, finish="STOP")
    )
    types = [w["type"] for w in wire(decode(body))]
    assert types.index("REASONING_END") < types.index("TEXT_MESSAGE_START")


def test_signature_on_empty_text_with_no_text_goes_to_a_reasoning_message() -> None:
    body = sse(response({"text": "", "thoughtSignature": "sig-z"}, finish="STOP"))
    events = decode(body)
    assert_well_formed_run(events)
    value = of_type(events, "REASONING_ENCRYPTED_VALUE")[0]
    reasoning = of_type(events, "REASONING_MESSAGE_START")[0]
    assert (value["subtype"], value["entityId"]) == ("message", reasoning["messageId"])


def test_code_execution_is_a_provider_executed_call_with_its_result() -> None:
    body = sse(
        response({"executableCode": {"language": "PYTHON", "code": "print(1)"}}),
        response({"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}}),
        response({"text": "It prints 1."}, finish="STOP"),
    )
    events = decode(body)
    assert_well_formed_run(events)
    start = of_type(events, "TOOL_CALL_START")[0]
    assert start["toolCallName"] == "code_execution"
    assert start["metadata"] == {"providerExecuted": True}
    assert call_args(events)[start["toolCallId"]] == {"language": "PYTHON", "code": "print(1)"}
    result = of_type(events, "TOOL_CALL_RESULT")[0]
    assert result["toolCallId"] == start["toolCallId"]
    assert json.loads(result["content"]) == {"outcome": "OUTCOME_OK", "output": "1\n"}
    assert wire(events)[-1]["metadata"]["finishReason"] == "stop"  # no client call pending


def test_grounding_sources_are_emitted_once_per_url() -> None:
    chunk = {"web": {"uri": "https://a.example/x", "title": "A"}}
    body = sse(
        response({"text": "One"}, groundingMetadata={"groundingChunks": [chunk]}),
        response(
            {"text": " two"},
            finish="STOP",
            groundingMetadata={
                "groundingChunks": [chunk, {"web": {"uri": "https://b.example", "title": "B"}}],
                "webSearchQueries": ["q"],
            },
            urlContextMetadata={
                "urlMetadata": [
                    {
                        "retrievedUrl": "https://a.example/x",
                        "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
                    },
                    {
                        "retrievedUrl": "https://c.example",
                        "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_ERROR",
                    },
                ]
            },
        ),
    )
    events = decode(body)
    sources = [c["value"] for c in of_type(events, "CUSTOM") if c["name"] == "source"]
    assert [s["url"] for s in sources] == ["https://a.example/x", "https://b.example"]
    assert sources[0] == {
        "sourceType": "url",
        "sourceId": "https://a.example/x",
        "url": "https://a.example/x",
        "title": "A",
    }
    assert wire(events)[-1]["metadata"]["groundingMetadata"]["webSearchQueries"] == ["q"]


def test_corpus_grounding_sources_match_the_grounding_chunks() -> None:
    path = next(p for p in require_corpus("gemini") if p.name == "google-search-grounding.sse")
    uris: list[str] = []
    for body in upstream(path):
        for chunk in body["candidates"][0].get("groundingMetadata", {}).get("groundingChunks", []):
            if chunk["web"]["uri"] not in uris:
                uris.append(chunk["web"]["uri"])
    sources = [c["value"]["url"] for c in of_type(decode(path.read_bytes()), "CUSTOM")]
    assert sources == uris and len(uris) == 5


def test_retrieved_context_without_http_uri_is_a_document_source() -> None:
    chunk = {"retrievedContext": {"uri": "gs://bucket/report.pdf", "title": "Report"}}
    events = decode(
        sse(response({"text": "x"}, finish="STOP", groundingMetadata={"groundingChunks": [chunk]}))
    )
    source = of_type(events, "CUSTOM")[0]["value"]
    assert source == {
        "sourceType": "document",
        "sourceId": "gs://bucket/report.pdf",
        "mediaType": "application/pdf",
        "title": "Report",
        "filename": "report.pdf",
    }


def test_inline_image_is_a_file_custom_event_keeping_its_signature() -> None:
    body = sse(
        response(
            {
                "inlineData": {"mimeType": "image/png", "data": "iVBO"},
                "thoughtSignature": "img-sig",
            },
            finish="STOP",
        )
    )
    custom = of_type(decode(body), "CUSTOM")[0]
    assert custom == {
        "type": "CUSTOM",
        "name": "file",
        "value": {
            "url": "data:image/png;base64,iVBO",
            "mediaType": "image/png",
            "providerMetadata": {"google": {"thoughtSignature": "img-sig"}},
        },
    }


# -- signatures through the AI SDK encoder ------------------------------------------------------
def test_text_signatures_reach_ai_sdk_provider_metadata() -> None:
    for name in ("text-thought-signature-gemini3.jsonl", "thought-summaries.sse"):
        path = next(p for p in require_corpus("gemini") if p.name == name)
        sigs = {p["thoughtSignature"] for p in parts_of(upstream(path)) if "thoughtSignature" in p}
        found = {
            c["providerMetadata"]["google"]["thoughtSignature"]
            for c in ai_sdk_chunks(decode(path.read_bytes()))
            if "providerMetadata" in c
        }
        assert found == sigs, name


def test_function_call_signatures_reach_ai_sdk_tool_input_provider_metadata() -> None:
    path = next(
        p for p in require_corpus("gemini") if p.name == "function-call-thought-signature.sse"
    )
    sig = next(p["thoughtSignature"] for p in parts_of(upstream(path)) if "functionCall" in p)
    available = [
        c for c in ai_sdk_chunks(decode(path.read_bytes())) if c["type"] == "tool-input-available"
    ]
    assert available[0]["providerMetadata"] == {"google": {"thoughtSignature": sig}}


# -- real clients -----------------------------------------------------------------------------
def test_corpus_runs_are_accepted_by_the_real_clients() -> None:
    files = require_corpus("gemini")
    require_harness()
    jobs: list[tuple[str, str, bytes]] = []
    decoded = {}
    for path in files:
        events = decoded[path.name] = decode(path.read_bytes())
        agui = AguiEncoder()
        jobs.append((f"{path.name}:agui", "agui", b"".join(agui.encode(e) for e in events)))
        for client in ("ai-v7", "ai-v6", "ai-v5"):
            enc = AiSdkEncoder()
            body = b"".join(enc.encode(e) for e in events) + enc.close()
            jobs.append((f"{path.name}:{client}", client, body))
    results = replay(jobs)
    for job_id, result in results.items():
        assert result["accepted"], f"{job_id}: {result['error']}"
        assert not result["warnings"], f"{job_id}: {result['warnings']}"
        name, client = job_id.rsplit(":", 1)
        if client != "agui":
            expected = wire(decoded[name])[-1]["metadata"]["finishReason"]
            assert result["finishReason"] == expected, job_id
    # @ag-ui/client stores a functionCall's signature on that tool call, and a text part's
    # signature on the assistant message (REASONING_ENCRYPTED_VALUE subtype tool-call/message).
    name = "vertex-parallel-function-calls-partial-args.jsonl"
    calls = [c for m in results[f"{name}:agui"]["messages"] for c in m.get("toolCalls") or []]
    sig = parts_of(upstream(next(p for p in files if p.name == name)))[0]["thoughtSignature"]
    assert calls[0]["encryptedValue"] == sig
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"location": "Boston"},
        {"location": "San Francisco"},
    ]
    name = "text-thought-signature-gemini3.jsonl"
    texts = [m for m in results[f"{name}:agui"]["messages"] if m.get("role") == "assistant"]
    assert texts[0]["encryptedValue"].startswith("EqsFCqgF")
