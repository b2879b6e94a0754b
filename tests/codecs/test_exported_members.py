"""The public API of ``agui_codecs`` is what its ``__all__`` names (httpx's
``tests/test_exported_members.py`` is the model): every name in ``__all__`` exists, every public
attribute of the package is in ``__all__`` (submodules aside), and the list is pinned here so a
change to the API is a deliberate edit of this file."""

from __future__ import annotations

from types import ModuleType

import agui_codecs

PINNED = {
    "DECODERS",
    "ENCODERS",
    "FINISH_REASONS",
    "AguiEncoder",
    "AguiVerifier",
    "AiSdkEncoder",
    "ChunkExpander",
    "ClientRequest",
    "CodecError",
    "Encoder",
    "EventTooLargeError",
    "IllegalEventError",
    "InternalDecoderError",
    "InvalidInputError",
    "LocalProtocolError",
    "MalformedUpstreamError",
    "ProtocolSpec",
    "RemoteProtocolError",
    "RequestTranslationError",
    "RunBuilder",
    "RunFold",
    "SSEDecoder",
    "SSEEvent",
    "StreamDecoder",
    "encode_data",
    "encode_event",
    "event_to_wire",
    "get_decoder",
    "get_encoder",
    "get_protocol",
    "parse_event",
    "protocols",
    "wire_view",
}


def public_members(module: ModuleType) -> set[str]:
    """Names a user of ``module`` sees: not private, not a submodule."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }


def test_all_is_pinned_and_unique() -> None:
    assert len(agui_codecs.__all__) == len(set(agui_codecs.__all__))
    assert set(agui_codecs.__all__) == PINNED


def test_every_exported_name_exists() -> None:
    missing = [name for name in agui_codecs.__all__ if not hasattr(agui_codecs, name)]
    assert missing == []


def test_every_public_member_is_exported() -> None:
    assert public_members(agui_codecs) == set(agui_codecs.__all__)


def test_exports_are_the_submodules_objects() -> None:
    """A re-export is the defining module's object, not a copy (one home per concept)."""
    from agui_codecs import builder, core, encoders, events, registry, sse, transitions

    assert agui_codecs.RunBuilder is builder.RunBuilder
    assert agui_codecs.RunFold is core.RunFold
    assert agui_codecs.Encoder is encoders.Encoder
    assert agui_codecs.event_to_wire is events.event_to_wire
    assert agui_codecs.get_decoder is registry.get_decoder
    assert agui_codecs.SSEDecoder is sse.SSEDecoder
    assert agui_codecs.AguiVerifier is transitions.AguiVerifier
