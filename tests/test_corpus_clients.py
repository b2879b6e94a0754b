"""Every corpus file of every registered decoder's family translates to both outputs, and the
real clients (@ag-ui/client 1.0.0; ai 7.0.173, 6.x, 5.x) accept each output and build the
messages the AG-UI events describe.

One Node process replays all outputs (module-scoped fixture), so the suite stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from corpus import require_corpus
from decoder_checks import assert_well_formed_run, decode_all, decode_split, random_cuts, wire
from real_clients import AI_SDK_CLIENTS, replay, require_harness

from agui_codecs import DECODERS
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder

FAMILIES = {
    "openai-chat": "openai-chat",
    "anthropic": "anthropic",
    "openai-responses": "openai-responses",
    "gemini": "gemini",
    "aisdk-ui": "ai-sdk",
    "agui": "agui",
}
CASES = [(fam, dec) for fam, dec in FAMILIES.items() if dec in DECODERS]


def _files() -> list[tuple[str, Path]]:
    out = []
    for family, decoder in CASES:
        for path in require_corpus(family):
            out.append((decoder, path))
    return out


def _encode(events: list[Any], encoder: Any) -> bytes:
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


@pytest.fixture(scope="module")
def translated() -> dict[str, tuple[list[Any], bytes, bytes]]:
    out = {}
    for decoder, path in _files():
        events = decode_all(decoder, path.read_bytes())
        out[f"{decoder}/{path.name}"] = (
            events,
            _encode(events, AguiEncoder()),
            _encode(events, AiSdkEncoder()),
        )
    return out


@pytest.fixture(scope="module")
def client_results(translated: dict[str, tuple[list[Any], bytes, bytes]]) -> dict[str, Any]:
    require_harness()
    jobs = []
    for key, (_, agui, ai) in translated.items():
        jobs.append((f"{key}|agui", "agui", agui))
        for client in AI_SDK_CLIENTS:
            jobs.append((f"{key}|{client}", client, ai))
    return replay(jobs)


def _expected(events: list[Any]) -> dict[str, Any]:
    """What a client must build, read off the AG-UI events: texts per message, tool calls."""
    texts: dict[str, str] = {}
    calls: dict[str, dict[str, Any]] = {}
    error = None
    snapshot = False
    for e in wire(events):
        t = e["type"]
        if t == "MESSAGES_SNAPSHOT":
            snapshot = True  # the client replaces its messages with the snapshot's
        elif t == "TEXT_MESSAGE_START":
            texts.setdefault(e["messageId"], "")
        elif t == "TEXT_MESSAGE_CONTENT":
            texts[e["messageId"]] += e["delta"]
        elif t == "TOOL_CALL_START":
            calls[e["toolCallId"]] = {"name": e["toolCallName"], "args": ""}
        elif t == "TOOL_CALL_ARGS":
            calls[e["toolCallId"]]["args"] += e["delta"]
        elif t == "RUN_ERROR":
            error = e
    return {"texts": texts, "calls": calls, "error": error, "snapshot": snapshot}


PARAMS = [pytest.param(d, p, id=f"{d}/{p.name}") for d, p in _files()] if CASES else []


@pytest.mark.parametrize(("decoder", "path"), PARAMS)
def test_decodes_to_a_well_formed_run(decoder: str, path: Path) -> None:
    assert_well_formed_run(decode_all(decoder, path.read_bytes()))


@pytest.mark.parametrize(("decoder", "path"), PARAMS)
def test_any_split_gives_identical_events(decoder: str, path: Path) -> None:
    data = path.read_bytes()
    whole = wire(decode_all(decoder, data))
    assert wire(decode_split(decoder, data, list(range(1, len(data))))) == whole
    for seed in range(3):
        assert wire(decode_split(decoder, data, random_cuts(data, seed))) == whole


@pytest.mark.parametrize(("decoder", "path"), PARAMS)
def test_agui_client_accepts_and_builds_messages(
    decoder: str, path: Path, translated: dict[str, Any], client_results: dict[str, Any]
) -> None:
    key = f"{decoder}/{path.name}"
    result = client_results[f"{key}|agui"]
    assert result["accepted"], result["error"]
    expected = _expected(translated[key][0])
    if expected["snapshot"]:
        return  # messages come from the runtime's MESSAGES_SNAPSHOT, not the streamed events
    messages = {m["id"]: m for m in result["messages"]}
    for message_id, text in expected["texts"].items():
        if text:
            assert messages[message_id]["content"] == text
    built_calls = {
        c["id"]: c["function"]
        for m in result["messages"]
        if m.get("role") == "assistant"
        for c in m.get("toolCalls") or []
    }
    for call_id, call in expected["calls"].items():
        assert built_calls[call_id]["name"] == call["name"]
        assert built_calls[call_id]["arguments"] == call["args"]
    if expected["error"] is not None:
        assert result["streamError"], "RUN_ERROR must reach the client as an error"


@pytest.mark.parametrize("client", AI_SDK_CLIENTS)
@pytest.mark.parametrize(("decoder", "path"), PARAMS)
def test_ai_sdk_client_accepts_and_builds_message(
    decoder: str,
    path: Path,
    client: str,
    translated: dict[str, Any],
    client_results: dict[str, Any],
) -> None:
    key = f"{decoder}/{path.name}"
    result = client_results[f"{key}|{client}"]
    assert result["accepted"], result["error"]
    expected = _expected(translated[key][0])
    parts = [p for m in result["messages"] if m["role"] == "assistant" for p in m["parts"]]
    texts = {p.get("id", i): p["text"] for i, p in enumerate(parts) if p["type"] == "text"}
    if expected["error"] is None:
        assert "".join(texts.values()) == "".join(expected["texts"].values())
        tools = {p["toolCallId"]: p for p in parts if "toolCallId" in p}
        for call_id, call in expected["calls"].items():
            part = tools[call_id]
            args = call["args"]
            assert part["input"] == (orjson.loads(args) if args.strip() else {})
    else:
        assert result["streamError"], "RUN_ERROR must reach the client as an error chunk"
