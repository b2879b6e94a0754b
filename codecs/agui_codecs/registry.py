"""The one list of protocols and encoders every caller reads (CLI, route validation, upstream).

Protocols are :class:`~agui_codecs.protocols.ProtocolSpec` objects: the built-in ones
(:data:`BUILTIN_PROTOCOLS`, one per folder of :mod:`agui_codecs.protocols`) and those other
distributions register under the entry-point group :data:`PROTOCOL_GROUP`, the entry point's
value being a spec object and its name the spec's name::

    [project.entry-points."agui_codecs.protocols"]
    echo = "agui_codecs_echo:SPEC"

Encoders (``--to``, the client wires) are the built-in ``agui`` and ``ai-sdk`` plus classes
registered under :data:`ENCODER_GROUP` (``name = "package.module:Class"``), each a subclass of
:class:`~agui_codecs.encoders.base.Encoder` (the one encoder contract) named as its entry
point. These two groups
replace the former ``agui_gateway.decoders`` / ``agui_gateway.encoders`` (a decoder alone
cannot serve a route: it needs its request builder and paths, which the spec carries).

Entry points are scanned once, on first use (:func:`protocols`, cached). A plugin that fails
to load, whose value is not a spec, whose name differs from the entry point's or that reuses a
built-in name is left out and remembered: looking its name up raises an error saying why
(:func:`get_protocol`), so one broken plugin never stops the others.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from typing import Any

from .encoders.agui import AguiEncoder
from .encoders.ai_sdk import AiSdkEncoder
from .encoders.base import Encoder
from .errors import LocalProtocolError
from .protocols import (
    ProtocolSpec,
    StreamDecoder,
    a2a,
    agui,
    ai_sdk,
    anthropic,
    bedrock_converse,
    gemini,
    langgraph,
    openai_chat,
    openai_responses,
)

__all__ = [
    "BUILTIN_PROTOCOLS",
    "DECODERS",
    "ENCODERS",
    "ENCODER_GROUP",
    "PROTOCOL_GROUP",
    "get_decoder",
    "get_encoder",
    "get_protocol",
    "protocols",
]

PROTOCOL_GROUP = "agui_codecs.protocols"
"""Entry-point group of third-party protocols (value: a ``ProtocolSpec`` object)."""

ENCODER_GROUP = "agui_codecs.encoders"
"""Entry-point group of third-party encoders (value: an encoder class)."""

BUILTIN_PROTOCOLS: tuple[ProtocolSpec, ...] = (
    agui.SPEC,
    openai_chat.SPEC,
    openai_responses.SPEC,
    anthropic.SPEC,
    gemini.SPEC,
    ai_sdk.SPEC,
    bedrock_converse.SPEC,
    a2a.SPEC,
    langgraph.SPEC,
)
"""The protocols of :mod:`agui_codecs.protocols`, in registry order."""

_BUILTIN_ENCODERS: dict[str, type[Encoder]] = {
    AguiEncoder.name: AguiEncoder,
    AiSdkEncoder.name: AiSdkEncoder,
}


class _Scan:
    """The result of one entry-point scan: what loaded, and why the rest did not."""

    def __init__(self) -> None:
        self.protocols: dict[str, ProtocolSpec] = {spec.name: spec for spec in BUILTIN_PROTOCOLS}
        self.encoders: dict[str, type[Encoder]] = dict(_BUILTIN_ENCODERS)
        self.broken: dict[str, str] = {}
        for ep in sorted(entry_points(group=PROTOCOL_GROUP), key=lambda e: e.name):
            self._add_protocol(ep.name, ep.value, ep.load)
        for ep in sorted(entry_points(group=ENCODER_GROUP), key=lambda e: e.name):
            self._add_encoder(ep.name, ep.value, ep.load)

    def _add_protocol(self, name: str, value: str, load: Any) -> None:
        where = f"entry point {name} = {value!r} ({PROTOCOL_GROUP})"
        if name in self.protocols:
            self.broken.setdefault(name, f"{where} reuses the name of a registered protocol")
            return
        try:
            spec = load()
        except Exception as exc:  # a plugin's import error must not stop the others
            self.broken[name] = f"{where} failed to load: {type(exc).__name__}: {exc}"
            return
        if not isinstance(spec, ProtocolSpec):
            self.broken[name] = f"{where} is a {type(spec).__name__}, not a ProtocolSpec"
        elif spec.name != name:
            self.broken[name] = f"{where} holds the spec of {spec.name!r}"
        else:
            self.protocols[name] = spec

    def _add_encoder(self, name: str, value: str, load: Any) -> None:
        if name in self.encoders:
            return
        where = f"entry point {name} = {value!r} ({ENCODER_GROUP})"
        try:
            cls = load()
        except Exception as exc:
            self.broken[f"encoder:{name}"] = f"{where} failed to load: {type(exc).__name__}: {exc}"
            return
        if not (isinstance(cls, type) and issubclass(cls, Encoder)):
            self.broken[f"encoder:{name}"] = f"{where} is not a subclass of Encoder"
        elif getattr(cls, "name", None) != name:
            self.broken[f"encoder:{name}"] = f"{where} is the encoder {cls.name!r}"
        else:
            self.encoders[name] = cls


@functools.cache
def _scan() -> _Scan:
    return _Scan()


def protocols() -> Mapping[str, ProtocolSpec]:
    """Every registered protocol by name: the built-ins, then the plugins (scanned once)."""
    return _scan().protocols


def get_protocol(name: str) -> ProtocolSpec:
    """The spec registered as ``name``.

    Raises:
        LocalProtocolError: no protocol has that name (the message lists the known ones), or
            its plugin failed to load (the message says why).
    """
    scan = _scan()
    spec = scan.protocols.get(name)
    if spec is not None:
        return spec
    known = ", ".join(sorted(scan.protocols))
    if name in scan.broken:
        raise LocalProtocolError(f"protocol {name!r} is unavailable: {scan.broken[name]}")
    raise LocalProtocolError(f"unknown protocol {name!r} (known: {known})")


class _Decoders(Mapping[str, type[StreamDecoder]]):
    """Protocol name -> decoder class, a live view of :func:`protocols`."""

    def __getitem__(self, name: str) -> type[StreamDecoder]:
        return protocols()[name].decoder

    def __iter__(self) -> Iterator[str]:
        return iter(protocols())

    def __len__(self) -> int:
        return len(protocols())

    def __repr__(self) -> str:
        return f"DECODERS({', '.join(self)})"


class _Encoders(Mapping[str, type[Encoder]]):
    """Encoder name -> encoder class (built-ins and :data:`ENCODER_GROUP` plugins)."""

    def __getitem__(self, name: str) -> type[Encoder]:
        return _scan().encoders[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_scan().encoders)

    def __len__(self) -> int:
        return len(_scan().encoders)

    def __repr__(self) -> str:
        return f"ENCODERS({', '.join(self)})"


DECODERS: Mapping[str, type[StreamDecoder]] = _Decoders()
"""Decoder class of every registered protocol (``--from`` values), plugins included."""

ENCODERS: Mapping[str, type[Encoder]] = _Encoders()
"""Every registered encoder class (``--to`` values), plugins included."""


def get_decoder(name: str, **options: Any) -> StreamDecoder:
    """A new decoder of the protocol ``name``
    (:meth:`~agui_codecs.protocols.ProtocolSpec.new_decoder` with ``options``).

    Raises:
        LocalProtocolError: no protocol has that name (see :func:`get_protocol`).
    """
    return get_protocol(name).new_decoder(**options)


def get_encoder(name: str, **options: Any) -> Encoder:
    """A new encoder registered as ``name`` (``agui``, ``ai-sdk`` or a plugin's) with
    ``options`` (its constructor's keyword arguments).

    Raises:
        LocalProtocolError: no encoder has that name, or its plugin failed to load (the
            message says why).
    """
    scan = _scan()
    cls = scan.encoders.get(name)
    if cls is None:
        broken = scan.broken.get(f"encoder:{name}")
        if broken is not None:
            raise LocalProtocolError(f"encoder {name!r} is unavailable: {broken}")
        known = ", ".join(sorted(scan.encoders))
        raise LocalProtocolError(f"unknown encoder {name!r} (known: {known})")
    return cls(**options)
