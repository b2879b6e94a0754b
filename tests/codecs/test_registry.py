"""The protocol registry and ``ProtocolSpec`` (``agui_codecs.registry``, ``agui_codecs.protocols``).

The built-in specs are checked against the providers' documented endpoints (the paths and
headers of the OpenAI, Anthropic and Gemini API references, as the gateway has always sent
them); entry-point handling is driven with stand-in entry points, so a broken plugin is proven
to leave the others working and to explain itself when its name is looked up.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any

import pytest

from agui_codecs import (
    DECODERS,
    ENCODERS,
    Encoder,
    LocalProtocolError,
    get_decoder,
    get_protocol,
    registry,
)
from agui_codecs.encoders import AguiEncoder
from agui_codecs.protocols import ProtocolSpec
from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder
from agui_codecs.protocols.openai_chat.request import build_request

BUILTINS = (
    "agui",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
    "ai-sdk",
    "bedrock-converse",
    "a2a",
    "langgraph",
)


def test_builtins_come_first_in_registry_order() -> None:
    assert tuple(spec.name for spec in registry.BUILTIN_PROTOCOLS) == BUILTINS
    assert tuple(DECODERS)[: len(BUILTINS)] == BUILTINS
    for spec in registry.BUILTIN_PROTOCOLS:
        assert DECODERS[spec.name] is spec.decoder
        assert spec.decoder.name == spec.name
        assert spec.passthrough == (spec.name in ("agui", "ai-sdk"))
        assert spec.requires_model == (spec.name not in ("agui", "ai-sdk", "a2a"))
    assert set(ENCODERS) >= {"agui", "ai-sdk"}


@pytest.mark.parametrize(
    ("name", "model", "path"),
    [
        ("openai-chat", "gpt-4o", "/chat/completions"),
        ("openai-responses", "gpt-5", "/responses"),
        ("anthropic", "claude-sonnet-4-5", "/messages"),
        ("gemini", "gemini-2.5-flash", "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"),
        ("gemini", "models/gemini-2.5-pro", "/models/gemini-2.5-pro:streamGenerateContent?alt=sse"),
        ("gemini", "tuned/a b", "/models/tuned%2Fa%20b:streamGenerateContent?alt=sse"),
        ("ai-sdk", "", ""),
        ("agui", "", ""),
        ("a2a", "", ""),
        # the URI botocore sent in pydantic-ai's cassettes (test_bedrock_model_stream.yaml)
        ("bedrock-converse", "us.amazon.nova-micro-v1:0", "/model/us.amazon.nova-micro-v1%3A0/converse-stream"),
        ("bedrock-converse", "arn:aws:bedrock:us-east-1:1:inference-profile/p", "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fp/converse-stream"),
    ],
)  # fmt: skip
def test_path_for_fills_the_model_segment(name: str, model: str, path: str) -> None:
    assert get_protocol(name).path_for(model) == path


def test_spec_headers_are_read_only_defaults() -> None:
    spec = get_protocol("anthropic")
    assert dict(spec.headers) == {"anthropic-version": "2023-06-01"}
    with pytest.raises(TypeError):
        spec.headers["anthropic-version"] = "2099-01-01"  # type: ignore[index]


def test_spec_name_must_be_its_decoders() -> None:
    with pytest.raises(ValueError, match="named 'openai-chat'"):
        ProtocolSpec(name="other", decoder=OpenAIChatDecoder, build_request=build_request)


def test_new_decoder_uses_the_spec_framing_unless_told_otherwise() -> None:
    class JsonlChat(OpenAIChatDecoder):
        name = "jsonl-chat"

    spec = ProtocolSpec(
        name="jsonl-chat", decoder=JsonlChat, build_request=build_request, framing="jsonl"
    )
    line = b'{"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}\n'
    events = spec.new_decoder().feed(line)
    assert [type(e).__name__ for e in events][:2] == ["RunStartedEvent", "TextMessageStartEvent"]
    sse_only = spec.new_decoder(framing="sse")
    assert sse_only.feed(line) == []  # a JSON line is not an SSE event


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(
        LocalProtocolError, match=r"unknown protocol 'bedrock' \(known: a2a, agui, "
    ):
        get_decoder("bedrock")
    with pytest.raises(LocalProtocolError, match="unknown encoder 'html'"):
        registry.get_encoder("html")


# -- entry points -----------------------------------------------------------------------------

NOT_A_SPEC = build_request


@pytest.fixture
def fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[EntryPoint]]:
    """Entry points the registry scan sees instead of the installed ones (rescanned)."""
    points: list[EntryPoint] = []

    def entry_points(*, group: str) -> list[EntryPoint]:
        return [ep for ep in points if ep.group == group]

    monkeypatch.setattr(registry, "entry_points", entry_points)
    registry._scan.cache_clear()
    yield points
    registry._scan.cache_clear()


def _ep(name: str, value: str, group: str = registry.PROTOCOL_GROUP) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=group)


def test_broken_plugins_are_left_out_and_explain_themselves(
    fake_entry_points: list[EntryPoint],
) -> None:
    here = __name__
    fake_entry_points += [
        _ep("missing", "no_such_module_for_agui_tests:SPEC"),
        _ep("not-a-spec", f"{here}:NOT_A_SPEC"),
        _ep("renamed", "agui_codecs.protocols.anthropic:SPEC"),
        _ep("openai-chat", "agui_codecs.protocols.anthropic:SPEC"),
        _ep("anthropic", "agui_codecs.protocols.anthropic:SPEC"),
    ]
    assert tuple(registry.protocols()) == BUILTINS  # every built-in still there, nothing added
    reasons: dict[str, str] = {
        "missing": "failed to load: ModuleNotFoundError",
        "not-a-spec": "is a function, not a ProtocolSpec",
        "renamed": "holds the spec of 'anthropic'",
    }
    for name, reason in reasons.items():
        with pytest.raises(LocalProtocolError, match=f"protocol {name!r} is unavailable") as info:
            get_protocol(name)
        assert reason in info.value.message
    assert get_protocol("openai-chat").decoder is OpenAIChatDecoder  # a plugin cannot shadow it
    assert "reuses the name" in registry._scan().broken["openai-chat"]


def test_entry_point_protocols_and_encoders_are_added_once(
    fake_entry_points: list[EntryPoint],
) -> None:
    calls: list[Any] = []

    class Probe(AguiEncoder):
        name = "probe"

        def __init__(self, **options: Any) -> None:
            super().__init__()
            calls.append(options)

    globals()["_PROBE_ENCODER"] = Probe
    fake_entry_points += [
        _ep("shout", "agui_codecs_shout_for_tests:SPEC"),  # not importable: left out
        _ep("probe", f"{__name__}:_PROBE_ENCODER", registry.ENCODER_GROUP),
    ]
    assert "probe" in ENCODERS and "shout" not in DECODERS
    assert isinstance(registry.get_encoder("probe", flag=True), Encoder)
    assert calls == [{"flag": True}]
    first = registry._scan()
    assert registry._scan() is first  # scanned once


class _Renamed(AguiEncoder):
    name = "something-else"


def test_entry_point_encoders_must_be_named_encoder_classes(
    fake_entry_points: list[EntryPoint],
) -> None:
    """The encoder contract is a base class: anything else under the group is left out, and
    looking it up says why (as for protocols)."""
    fake_entry_points += [
        _ep("plain", f"{__name__}:NOT_A_SPEC", registry.ENCODER_GROUP),
        _ep("renamed", f"{__name__}:_Renamed", registry.ENCODER_GROUP),
        _ep("gone", "no_such_module_for_agui_tests:Encoder", registry.ENCODER_GROUP),
        _ep("agui", f"{__name__}:_Renamed", registry.ENCODER_GROUP),
    ]
    assert tuple(ENCODERS) == ("agui", "ai-sdk")
    assert registry.ENCODERS["agui"] is AguiEncoder  # a plugin cannot shadow a built-in
    for name, reason in {
        "plain": "is not a subclass of Encoder",
        "renamed": "is the encoder 'something-else'",
        "gone": "failed to load: ModuleNotFoundError",
    }.items():
        with pytest.raises(LocalProtocolError, match=f"encoder {name!r} is unavailable") as info:
            registry.get_encoder(name)
        assert reason in info.value.message
