"""Gemini ``streamGenerateContent`` decoder (``agui_codecs.protocols.gemini.decoder``): finish and parts.

Finish reasons, blocked prompts, mid-stream errors and truncation, then the parts (thoughts,
signatures, code execution, grounding sources, inline images). Expected values come from the
Gemini REST reference (``GenerateContentResponse``: ``FinishReason``, ``UsageMetadata``,
``promptFeedback``) and from the AG-UI 1.0 TokenUsage accounting; hand-made fixtures cover what
the corpus lacks (SAFETY, MAX_TOKENS, blocked prompts, mid-stream errors). The corpus and the
real clients are in ``test_gemini_corpus.py``, tool call ids and Vertex streamed arguments in
``test_gemini_tool_calls.py``.
"""

from __future__ import annotations

import json

import orjson
import pytest
from corpus import require_corpus
from decoder_checks import assert_legal_run, wire
from gemini_fixtures import call_args, decode, expected_usage, of_type, response, sse, upstream


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
    assert_legal_run(events)
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
    assert_legal_run(events)
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
    assert_legal_run(events)
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
    assert_legal_run(events)
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
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


def test_json_array_cut_before_its_closing_bracket_is_truncated() -> None:
    body = b"[" + orjson.dumps(response({"text": "Hi"}, finish="STOP"))
    events = decode(body)
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_TRUNCATED"


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
    assert_legal_run(events)
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
    assert_legal_run(events)
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
