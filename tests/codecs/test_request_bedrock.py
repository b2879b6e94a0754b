"""The ``bedrock-converse`` request builder and its SigV4 ``sign`` hook.

Every body built here is checked against the official SDK: botocore's service model of Bedrock
Runtime (``ConverseStream`` input shape, 2023-09-30) validates it with botocore's own parameter
validator, and botocore's rest-json serializer must write the same JSON from it (so it is
byte-for-byte what boto3 would send for the same call). The mapping itself follows the
Converse API reference (message roles, ``toolSpec`` / ``inputSchema.json``, ``toolResult``,
``reasoningContent.reasoningText.signature``). The signature is verified the way the service
checks it: the SigV4 algorithm of the AWS documentation ("Create a signed AWS API request"),
recomputed here independently of botocore.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import botocore.session
import pytest
from ag_ui.core import RunAgentInput
from botocore.validate import ParamValidator
from sigv4 import ENV, verify_sigv4

from agui_codecs import CodecError, RequestTranslationError
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.bedrock_converse import SPEC
from agui_codecs.protocols.bedrock_converse._sigv4 import region_of, sign

MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
_SESSION = botocore.session.get_session()
_MODEL = _SESSION.get_service_model("bedrock-runtime")
_OPERATION = _MODEL.operation_model("ConverseStream")
_BLOBS = {"bytes", "redactedContent"}  # blob members: base64 on the JSON wire, bytes in boto3


def _to_python(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _to_python(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_python(v) for v in value]
    if key in _BLOBS and isinstance(value, str):
        return base64.b64decode(value)
    return value


def official(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` validated by botocore and serialised by it again (what boto3 sends)."""
    params = {"modelId": MODEL, **_to_python(body)}
    report = ParamValidator().validate(params, _OPERATION.input_shape)
    assert not report.has_errors(), report.generate_report()
    from botocore.serialize import create_serializer

    wire = create_serializer("rest-json").serialize_to_request(params, _OPERATION)
    assert wire["url_path"] == "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
    return json.loads(wire["body"])


def build(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    params = extra.pop("params", {})
    run_input = RunAgentInput.model_validate(
        {"threadId": "t", "runId": "r", "tools": [], "context": [], "state": None,
         "forwardedProps": {}, "messages": messages, **extra}
    )  # fmt: skip
    body = SPEC.build_request(ClientRequest(run_input), model=MODEL, params=params)
    assert isinstance(body, dict)
    assert official(body) == body
    return body


def test_system_context_user_and_tools() -> None:
    body = build(
        [
            {"id": "s", "role": "system", "content": "Be brief."},
            {"id": "u", "role": "user", "content": "Weather in Paris?"},
        ],
        context=[{"description": "city", "value": "Paris"}],
        tools=[{"name": "get_weather", "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}],
        forwardedProps={"temperature": 0.2, "maxTokens": 300, "toolChoice": {"any": {}}},
    )  # fmt: skip
    assert body["system"] == [
        {"text": "Be brief.\n\nContext from the application:\n\ncity:\nParis"}
    ]
    assert body["messages"] == [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
    assert body["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "get_weather",
                    "description": "Weather of a city",
                    "inputSchema": {
                        "json": {"type": "object", "properties": {"city": {"type": "string"}}}
                    },
                }
            }
        ],
        "toolChoice": {"any": {}},
    }
    assert body["inferenceConfig"] == {"temperature": 0.2, "maxTokens": 300}
    assert "modelId" not in body  # the model is the path's


def test_a_tool_round_trip_with_signed_reasoning() -> None:
    body = build(
        [
            {"id": "u", "role": "user", "content": "Weather in Paris?"},
            {"id": "r", "role": "reasoning", "content": "Call the tool.",
             "encryptedValue": "c2ln", "metadata": {"provider": "amazon-bedrock", "field": "signature"}},
            {"id": "a", "role": "assistant", "content": "Checking.",
             "toolCalls": [{"id": "tooluse_1", "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
            {"id": "t", "role": "tool", "toolCallId": "tooluse_1", "content": '{"temp": 21}'},
            {"id": "t2", "role": "user", "content": "And tomorrow?"},
        ]
    )  # fmt: skip
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {"reasoningContent": {"reasoningText": {"text": "Call the tool.", "signature": "c2ln"}}},
                {"text": "Checking."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"toolResult": {"toolUseId": "tooluse_1", "content": [{"json": {"temp": 21}}], "status": "success"}},
                {"text": "And tomorrow?"},
            ],
        },
    ]  # fmt: skip


def test_redacted_reasoning_and_error_results_and_foreign_signatures() -> None:
    body = build(
        [
            {"id": "u", "role": "user", "content": "Hi"},
            {"id": "r1", "role": "reasoning", "content": "", "encryptedValue": "cmVk",
             "metadata": {"field": "redactedContent"}},
            {"id": "r2", "role": "reasoning", "content": "x", "encryptedValue": "other",
             "metadata": {"provider": "anthropic", "field": "signature"}},
            {"id": "a", "role": "assistant",
             "toolCalls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": ""}}]},
            {"id": "t", "role": "tool", "toolCallId": "c", "content": "boom", "error": "failed"},
        ]
    )  # fmt: skip
    assistant = body["messages"][1]["content"]
    assert assistant == [
        {"reasoningContent": {"redactedContent": "cmVk"}},
        {"toolUse": {"toolUseId": "c", "name": "f", "input": {}}},
    ]  # the Anthropic signature is not Bedrock's: dropped
    assert body["messages"][2]["content"] == [
        {"toolResult": {"toolUseId": "c", "content": [{"text": "boom"}], "status": "error"}}
    ]


def test_images_and_documents_inline_or_from_s3() -> None:
    png = base64.b64encode(b"\x89PNG").decode()
    text = base64.b64encode(b"notes").decode()
    body = build(
        [{"id": "u", "role": "user", "content": [
            {"type": "text", "text": "Look"},
            {"type": "image", "source": {"type": "data", "value": png, "mimeType": "image/png"}},
            {"type": "image", "source": {"type": "url", "value": "s3://bucket/cat.jpg", "mimeType": "image/jpeg"}},
            {"type": "document", "source": {"type": "data", "value": text, "mimeType": "text/plain"},
             "metadata": {"filename": "my notes.txt"}},
            {"type": "document", "source": {"type": "data", "value": png, "mimeType": "application/pdf"}},
        ]}]
    )  # fmt: skip
    assert body["messages"][0]["content"] == [
        {"text": "Look"},
        {"image": {"format": "png", "source": {"bytes": png}}},
        {"image": {"format": "jpeg", "source": {"s3Location": {"uri": "s3://bucket/cat.jpg"}}}},
        {"document": {"format": "txt", "name": "my notes", "source": {"text": "notes"}}},
        {"document": {"format": "pdf", "name": "document-4", "source": {"bytes": png}}},
    ]


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image", "source": {"type": "url", "value": "https://x.test/a.png", "mimeType": "image/png"}},
        {"type": "image", "source": {"type": "data", "value": "AA==", "mimeType": "image/tiff"}},
        {"type": "audio", "source": {"type": "data", "value": "AA==", "mimeType": "audio/wav"}},
    ],
)  # fmt: skip
def test_parts_bedrock_cannot_take_are_refused(part: dict[str, Any]) -> None:
    with pytest.raises(RequestTranslationError) as info:
        build([{"id": "u", "role": "user", "content": [part]}])
    assert info.value.code == "UNSUPPORTED_CONTENT" and info.value.status_hint == 422


def test_route_params_nest_into_their_objects() -> None:
    body = build(
        [{"id": "u", "role": "user", "content": "Hi"}],
        params={
            "maxTokens": 1024,
            "inferenceConfig": {"topP": 0.9},
            "additionalModelRequestFields": {
                "thinking": {"type": "enabled", "budget_tokens": 1024}
            },
            "messages": "ignored",
        },
    )
    assert body["inferenceConfig"] == {"topP": 0.9, "maxTokens": 1024}
    assert body["additionalModelRequestFields"]["thinking"]["budget_tokens"] == 1024
    assert body["messages"] == [{"role": "user", "content": [{"text": "Hi"}]}]
    assert "toolConfig" not in body


# -- SigV4 ------------------------------------------------------------------------------------

URL = "https://bedrock-runtime.eu-west-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream"


def test_sign_makes_a_sigv4_signature_the_service_accepts() -> None:
    body = b'{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}'
    headers = {"accept": "application/vnd.amazon.eventstream", "content-type": "application/json"}
    out = sign("POST", URL, headers, body, environ=ENV)
    assert out["accept"] == headers["accept"] and "x-amz-security-token" not in out
    assert "/eu-west-1/bedrock/aws4_request" in out["authorization"]
    verify_sigv4("POST", URL, out, body, ENV["AWS_SECRET_ACCESS_KEY"])
    with pytest.raises(AssertionError):  # the signature covers the body
        verify_sigv4("POST", URL, out, body + b" ", ENV["AWS_SECRET_ACCESS_KEY"])


def test_a_session_token_is_sent_and_signed() -> None:
    out = sign("POST", URL, {}, b"{}", environ={**ENV, "AWS_SESSION_TOKEN": "tok"})
    assert out["x-amz-security-token"] == "tok"
    assert "x-amz-security-token" in out["authorization"]
    verify_sigv4("POST", URL, out, b"{}", ENV["AWS_SECRET_ACCESS_KEY"])


def test_the_region_comes_from_the_host_else_from_aws_region() -> None:
    assert region_of(URL) == "eu-west-1"
    assert region_of("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com") == "us-gov-west-1"
    assert (
        region_of("https://vpce-1a2b.bedrock-runtime.ap-south-1.vpce.amazonaws.com") == "ap-south-1"
    )
    assert region_of("http://127.0.0.1:9000/bedrock") is None
    out = sign("POST", "http://127.0.0.1:9000/model/m/converse-stream", {}, b"{}",
               environ={**ENV, "AWS_REGION": "us-west-2"})  # fmt: skip
    assert "/us-west-2/bedrock/aws4_request" in out["authorization"]


@pytest.mark.parametrize(
    "env",
    [{}, {"AWS_ACCESS_KEY_ID": "AKID"}, {"AWS_ACCESS_KEY_ID": " ", "AWS_SECRET_ACCESS_KEY": "s"}],
)
def test_missing_credentials_are_auth_missing(env: dict[str, str]) -> None:
    with pytest.raises(CodecError) as info:
        sign("POST", URL, {}, b"{}", environ=env)
    assert info.value.code == "UPSTREAM_AUTH_MISSING"


def test_a_url_without_region_and_no_aws_region_is_auth_missing() -> None:
    with pytest.raises(CodecError) as info:
        sign("POST", "http://127.0.0.1:9000/m", {}, b"{}", environ=ENV)
    assert info.value.code == "UPSTREAM_AUTH_MISSING"


def test_a_bedrock_api_key_is_sent_unsigned() -> None:
    out = sign("POST", URL, {"Authorization": "Bearer ABSK-key"}, b"{}", environ={})
    assert out == {"authorization": "Bearer ABSK-key"}
