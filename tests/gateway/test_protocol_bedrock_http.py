"""``bedrock-converse`` routes over HTTP, both endpoints, against a mocked Bedrock Runtime.

respx checks what the gateway sends: ``POST {base}/model/{modelId}/converse-stream`` (the model
id percent-encoded as botocore encodes it), ``accept: application/vnd.amazon.eventstream``,
the Converse body, and a SigV4 ``authorization`` made with the AWS variables read at request
time (verified as the service verifies it, ``tests/support/sigv4.py``). The reply is
a recorded binary ConverseStream body of the corpus (the real clients judge its decoded
runs on both wires in the decoder contract suite).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import respx
from corpus import CORPUS_DIR
from gwtest import drive
from sigv4 import ENV, verify_sigv4

BASE = "https://bedrock-runtime.us-east-1.amazonaws.com"
MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
URL = f"{BASE}/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream"
RECORDING = CORPUS_DIR / "bedrock-converse" / "reasoning-signature.eventstream"

ROUTES = f"""
[[routes]]
name = "claude"
upstream_url = "{BASE}"
protocol = "bedrock-converse"
model = "{MODEL}"
params = {{ maxTokens = 2048 }}

[[routes]]
name = "keyed"
upstream_url = "{BASE}"
protocol = "bedrock-converse"
model = "{MODEL}"
auth = {{ type = "bearer", env = "TEST_BEDROCK_API_KEY" }}
"""

RUN_INPUT: dict[str, Any] = {
    "threadId": "thread-1",
    "runId": "run-1",
    "messages": [{"id": "m1", "role": "user", "content": "Hello"}],
    "tools": [],
    "context": [],
    "state": None,
    "forwardedProps": {"temperature": 0.5},
}
CHAT_REQUEST: dict[str, Any] = {
    "id": "chat-1",
    "trigger": "submit-message",
    "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Hello"}]}],
}


@pytest.fixture
def routes_file(tmp_path: Path) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(ROUTES, encoding="utf-8")
    return path


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "session-token")


def bedrock(router: respx.MockRouter) -> respx.Route:
    body = RECORDING.read_bytes()
    headers = {"content-type": "application/vnd.amazon.eventstream"}
    return router.post(URL).mock(return_value=httpx.Response(200, content=body, headers=headers))


async def test_both_endpoints_send_a_signed_converse_request(
    make_app: Any, router: respx.MockRouter, aws: None
) -> None:
    route = bedrock(router)
    result = await drive(make_app(), "/v1/agui/claude", RUN_INPUT)
    events = result.data()
    assert events[0]["type"] == "RUN_STARTED" and events[-1]["type"] == "RUN_FINISHED"
    [signature] = [e for e in events if e["type"] == "REASONING_ENCRYPTED_VALUE"]
    request = route.calls.last.request
    assert str(request.url) == URL
    assert request.headers["accept"] == "application/vnd.amazon.eventstream"
    assert request.headers["x-amz-security-token"] == "session-token"
    assert "/us-east-1/bedrock/aws4_request" in request.headers["authorization"]
    verify_sigv4("POST", URL, dict(request.headers), request.content, ENV["AWS_SECRET_ACCESS_KEY"])
    assert orjson.loads(request.content) == {
        "messages": [{"role": "user", "content": [{"text": "Hello"}]}],
        "inferenceConfig": {"maxTokens": 2048, "temperature": 0.5},
    }

    result = await drive(make_app(), "/v1/ai-sdk/claude", CHAT_REQUEST)
    chunks = result.data()
    assert chunks[-1] == "[DONE]"
    kinds = [c["type"] for c in chunks if isinstance(c, dict)]
    assert "reasoning-delta" in kinds and "text-delta" in kinds
    verify_sigv4(
        "POST", URL, dict(route.calls.last.request.headers), route.calls.last.request.content,
        ENV["AWS_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    assert signature["encryptedValue"]


async def test_missing_aws_credentials_end_the_run_without_naming_variables(
    make_app: Any, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    route = bedrock(router)
    events = (await drive(make_app(), "/v1/agui/claude", RUN_INPUT)).data()
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "UPSTREAM_AUTH_MISSING"
    assert events[-1]["message"] == "upstream credentials for route 'claude' are not configured"
    assert not route.called


async def test_a_bedrock_api_key_route_is_sent_with_its_bearer_token_unsigned(
    make_app: Any, router: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_BEDROCK_API_KEY", "ABSK-test")
    route = bedrock(router)
    events = (await drive(make_app(), "/v1/agui/keyed", RUN_INPUT)).data()
    assert events[-1]["type"] == "RUN_FINISHED"
    request = route.calls.last.request
    assert request.headers["authorization"] == "Bearer ABSK-test"
    assert "x-amz-date" not in request.headers


async def test_an_http_error_keeps_bedrocks_message(
    make_app: Any, router: respx.MockRouter, aws: None
) -> None:
    # pydantic-ai test_bedrock_streaming_error.yaml: a 400 with {"message": ...} and no code.
    error = {"message": "The provided model identifier is invalid."}
    router.post(URL).mock(return_value=httpx.Response(400, json=error))
    events = (await drive(make_app(), "/v1/agui/claude", RUN_INPUT)).data()
    assert events[-1]["code"] == "UPSTREAM_HTTP_400"
    assert events[-1]["message"].endswith("The provided model identifier is invalid.")
