"""The encoder contract: AG-UI 1.0 events (models or their wire dicts) → one client's bytes.

Every encoder of :data:`agui_codecs.ENCODERS` (the built-in ``agui`` and ``ai-sdk``, and
classes registered under the ``agui_codecs.encoders`` entry-point group) subclasses
:class:`Encoder`. It has the h11 shape: an instance is the state of one response stream, fed
one event at a time, each call returning the bytes to send (possibly none), and ``close()`` at
end of stream (after which encoding is a :class:`~agui_codecs.errors.LocalProtocolError`).
All framing goes through :mod:`agui_codecs.sse`.

Two inputs, one output:

* :meth:`Encoder.encode` takes an ``ag_ui.core`` event (a decoder's output);
* :meth:`Encoder.encode_wire` takes the AG-UI wire dict of an event, as
  :func:`agui_codecs.events.event_to_wire` gives it and a durable run store holds it (camelCase
  keys, optional fields omitted, never ``null``, ``spec/1.0/schema.json`` of AG-UI 1.0). No
  model is built from it: the durable path (store → reader → encoder) encodes what it read.

For every event ``e``, ``encode(e, id=i) == encode_wire(event_to_wire(e), id=i)`` (the default
:meth:`Encoder.encode` is exactly that), and ``encode_wire(w, json=orjson.dumps(w)) ==
encode_wire(w)``; ``tests/contracts/test_encoder_contract.py`` holds every registered encoder
to it.

``id`` is the event's resume cursor (``docs/runs.md`` §1). An encoder whose clients resume by
cursor (:attr:`Encoder.writes_ids`) writes it as the ``id:`` line of the event's last frame,
exactly once; one whose clients resume otherwise accepts it and writes nothing (the AI SDK
resumes by replaying the run from its first chunk, ``docs/protocols.md`` §3.3 rule 7).

``json`` is the compact JSON of ``wire`` (``orjson.dumps(wire)``) when the caller already has
it, e.g. from the store row or the broker message: an encoder that sends the wire dict as it is
frames those bytes instead of serializing it again. The caller vouches that it is that
serialization; an encoder that transforms the event ignores it.

:meth:`Encoder.encode_serialized` takes an event the caller holds as its JSON only (a stored
row: the text and its ``type`` column), with a call that parses it: an encoder that frames the
JSON as it is (``agui``) never calls it, so a replay of stored events parses none of them; the
others (the default) parse it and go through :meth:`Encoder.encode_wire`. For every event,
``encode_serialized(w["type"], orjson.dumps(w), lambda: w, id=i) == encode_wire(w, id=i)``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeAlias

from ag_ui.core import Event

from ..events import event_to_wire

__all__ = ["Encoder", "WireEvent"]

WireEvent: TypeAlias = Mapping[str, Any]
"""An AG-UI 1.0 event in wire form (see the module docstring); shared, never mutated."""


class Encoder(abc.ABC):
    """One client response stream's encoder (see the module docstring).

    Attributes:
        name: the registry name (``--to`` of the CLI).
        media_type: the response's media type.
        headers: the response headers the stream needs (content type, no caching, no proxy
            buffering, protocol markers), ``docs/protocols.md`` §1.2 and §3.1.
        writes_ids: True when ``id=`` becomes an ``id:`` line (see the module docstring).
    """

    name: ClassVar[str]
    media_type: ClassVar[str] = "text/event-stream"
    headers: ClassVar[Mapping[str, str]]
    writes_ids: ClassVar[bool] = False

    def encode(self, event: Event, *, id: str | None = None) -> bytes:
        """The bytes of one ``ag_ui.core`` event: ``encode_wire(event_to_wire(event), id=id)``.

        Subclasses may override it for speed, never for a different result.
        """
        return self.encode_wire(event_to_wire(event), id=id)

    @abc.abstractmethod
    def encode_wire(
        self, wire: WireEvent, *, id: str | None = None, json: bytes | None = None
    ) -> bytes:
        """The bytes of one AG-UI wire event (possibly empty).

        Args:
            wire: the event's wire dict; it is not validated (pass ``event_to_wire`` output
                or what a run store recorded from it).
            id: the event's resume cursor (written only when :attr:`writes_ids`).
            json: ``orjson.dumps(wire)``, when the caller has it already.

        Raises:
            LocalProtocolError: ``id`` contains a line break or NUL, or the encoder was
                closed.
        """

    def encode_serialized(
        self,
        event_type: str,
        json: bytes,
        load: Callable[[], WireEvent],
        *,
        id: str | None = None,
    ) -> bytes:
        """The bytes of one AG-UI event given by its serialized form (see the module
        docstring): ``encode_wire(load(), id=id, json=json)``.

        Args:
            event_type: the event's ``type`` (``load()["type"]``).
            json: ``orjson.dumps`` of the event (compact JSON, UTF-8).
            load: returns the event's wire dict (parsing ``json``); called at most once, and
                only by encoders that need the dict.
            id: as :meth:`encode_wire`.

        Raises:
            LocalProtocolError: as :meth:`encode_wire`.

        Subclasses may override it for speed, never for a different result.
        """
        return self.encode_wire(load(), id=id, json=json)

    @abc.abstractmethod
    def close(self) -> bytes:
        """The bytes ending the stream (possibly empty). Idempotent: a later call returns
        ``b""``."""
