"""Every registered decoder over its corpus family, decoded once per test session.

The decoder contract suite (``tests/contracts/test_decoder_*.py``) and the per-protocol tests
read the same translations and the same real-client verdicts from here, so the corpus is
decoded once and the real clients run in one Node process for the whole session
(:func:`client_results`, cached).

Which decoders: every protocol of the registry (``agui_codecs.DECODERS``: the built-ins and
the entry-point plugins of ``agui_codecs.protocols``), plus the plugins the registry left out
because they failed to load (:func:`decoder_names`), so a broken plugin fails its tests, never
collection. Which corpus:
:data:`DECODER_FAMILIES` maps a decoder to its folder under ``tests/corpus``; a decoder
without one gets the input-free contract checks only.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ag_ui.core import Event
from corpus import corpus_files
from real_clients import AI_SDK_CLIENTS, ReplayResult, replay

from agui_codecs import DECODERS, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.events import event_to_wire
from agui_codecs.protocols.base import StreamDecoder
from agui_codecs.registry import PROTOCOL_GROUP, protocols
from agui_codecs.sse import DEFAULT_MAX_EVENT_SIZE

__all__ = [
    "DECODER_FAMILIES",
    "Cut",
    "Translation",
    "client_job",
    "client_results",
    "corpus_cases",
    "cuts",
    "decode",
    "decoder_names",
    "encode_agui",
    "encode_ai_sdk",
    "error_key",
    "frame_boundaries",
    "replayed_cuts",
    "translate",
    "wire",
]

DECODER_FAMILIES: dict[str, str] = {
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "agui": "agui",
    "ai-sdk": "aisdk-ui",
    "bedrock-converse": "bedrock-converse",
    "a2a": "a2a",
    "langgraph": "langgraph",
}
"""Decoder name -> corpus family (folder under ``tests/corpus``)."""

PLUGIN_GROUP = PROTOCOL_GROUP
CLIENTS = ("agui", *AI_SDK_CLIENTS)


def decoder_names() -> list[str]:
    """Registered decoders (built-ins, then plugins), then plugins that failed to register."""
    plugins = sorted({ep.name for ep in entry_points(group=PLUGIN_GROUP)} - set(DECODERS))
    return [*DECODERS, *plugins]


def corpus_cases() -> list[tuple[str, Path]]:
    """``(decoder, corpus file)`` for every registered decoder that has a corpus family."""
    return [
        (name, path)
        for name in decoder_names()
        if name in DECODER_FAMILIES
        for path in corpus_files(DECODER_FAMILIES[name])
    ]


def wire(events: Iterable[Event]) -> list[dict[str, Any]]:
    return [event_to_wire(e) for e in events]


def error_key(decoder: StreamDecoder) -> tuple[str, str] | None:
    """``(error class, code)`` of what ended the run as a fault, or ``None``."""
    error = decoder.error
    return None if error is None else (type(error).__name__, error.code)


def decode(name: str, data: bytes, splits: Iterable[int] = ()) -> tuple[list[Event], StreamDecoder]:
    """Feed ``data`` to a fresh decoder cut at the offsets ``splits``, then close."""
    decoder = get_decoder(name)
    out: list[Event] = []
    prev = 0
    for cut in sorted({c for c in splits if 0 < c < len(data)}):
        out += decoder.feed(data[prev:cut])
        prev = cut
    out += decoder.feed(data[prev:])
    return out + decoder.close(), decoder


def encode_agui(events: list[Event]) -> bytes:
    encoder = AguiEncoder()
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


def encode_ai_sdk(events: list[Event]) -> bytes:
    encoder = AiSdkEncoder()
    return b"".join(encoder.encode(e) for e in events) + encoder.close()


@dataclass(frozen=True)
class Translation:
    """One corpus file decoded whole, and both encoders' output of the run."""

    decoder: str
    path: Path
    events: list[Event]
    error: tuple[str, str] | None
    agui: bytes
    ai_sdk: bytes

    @property
    def key(self) -> str:
        return f"{self.decoder}/{self.path.name}"


@functools.cache
def translate(name: str, path: Path) -> Translation:
    events, decoder = decode(name, path.read_bytes())
    return Translation(
        name, path, events, error_key(decoder), encode_agui(events), encode_ai_sdk(events)
    )


def frame_boundaries(name: str, data: bytes) -> list[int]:
    """Byte offsets right after each upstream payload (SSE event, JSON line, array element,
    event-stream message).

    Found by feeding the decoder's own framing (``StreamDecoder.frame_decoder``, with its
    spec's framing) one byte at a time; the end of the body is not one.
    """
    spec = protocols().get(name)
    frames = get_decoder(name).frame_decoder(
        spec.framing if spec is not None else "auto", max_event_size=DEFAULT_MAX_EVENT_SIZE
    )
    out = []
    for i in range(len(data)):
        if frames.feed(data[i : i + 1]):
            out.append(i + 1)
    return [b for b in out if data[b:].strip(b" \t\r\n")]


@dataclass(frozen=True)
class Cut:
    """The input cut right after a payload: what ``feed`` gave so far, and what EOF added."""

    at: int
    fed: list[Event]
    tail: list[Event]
    error: tuple[str, str] | None

    @property
    def events(self) -> list[Event]:
        return self.fed + self.tail


@functools.cache
def cuts(name: str, path: Path) -> list[Cut]:
    """The input truncated at every frame boundary (one decoder fed payload by payload; at
    each boundary a copy of it is closed, which is what a fresh decoder of the prefix does:
    ``test_decoder_truncation`` checks that on samples)."""
    data = path.read_bytes()
    decoder = get_decoder(name)
    fed: list[Event] = []
    prev = 0
    out = []
    for at in frame_boundaries(name, data):
        fed = fed + decoder.feed(data[prev:at])
        prev = at
        clone = copy.deepcopy(decoder)
        tail = clone.close()
        out.append(Cut(at, fed, tail, error_key(clone)))
    return out


def replayed_cuts(name: str, path: Path) -> list[Cut]:
    """The cuts whose output the real clients judge: early, middle and late (distinct)."""
    every = cuts(name, path)
    if not every:
        return []
    picked = {every[0].at: every[0], every[len(every) // 2].at: every[len(every) // 2]}
    picked.setdefault(every[-1].at, every[-1])
    return [picked[at] for at in sorted(picked)]


def client_job(key: str, variant: str, client: str) -> str:
    """The job id of one replay: ``<decoder>/<file>|<variant>|<client>``."""
    return f"{key}|{variant}|{client}"


def _jobs() -> list[tuple[str, str, bytes]]:
    jobs: list[tuple[str, str, bytes]] = []

    def add(key: str, variant: str, events: list[Event]) -> None:
        agui, ai_sdk = encode_agui(events), encode_ai_sdk(events)
        for client in CLIENTS:
            jobs.append(
                (client_job(key, variant, client), client, agui if client == "agui" else ai_sdk)
            )

    for name, path in corpus_cases():
        translation = translate(name, path)
        add(translation.key, "whole", translation.events)
        for cut in replayed_cuts(name, path):
            add(translation.key, f"cut@{cut.at}", cut.events)
    for name in decoder_names():
        add(f"{name}/<empty>", "whole", decode(name, b"")[0])
    return jobs


@functools.cache
def client_results() -> dict[str, ReplayResult]:
    """Every replay of the decoder suite, in one Node process (call ``require_harness`` first):
    each corpus file's run whole and cut (:func:`replayed_cuts`), and each decoder's empty
    body, through ``@ag-ui/client`` 1.0.0 and ``ai`` 7 / 6 / 5 (ids: :func:`client_job`)."""
    return replay(_jobs())
