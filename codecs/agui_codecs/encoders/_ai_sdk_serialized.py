"""The AI SDK encoder's serialized path (:meth:`AiSdkEncoder.encode_serialized
<agui_codecs.encoders.ai_sdk.AiSdkEncoder>`): a stored text delta framed from its JSON.

A stored replay is mostly ``TEXT_MESSAGE_CONTENT`` (issue 13: 10,000 stored events replayed
over HTTP), each held as ``orjson.dumps`` of its wire dict. When that JSON is exactly
``{"type":"TEXT_MESSAGE_CONTENT","messageId":"<id>","delta":"<text>"}`` (no other key: the
text's bytes hold no ``"``, so its JSON string ends at the final ``"}``, every quote inside a
string being escaped; the id holds no escape, so its bytes are the id), and the encoder would
answer it with the one ``text-delta`` chunk of an open text part (a step open, the message
not ended, strict mode off, the part open: ``AiSdkEncoder.encode_wire``'s fast path, which
changes no state for it), the chunk is the same bytes spliced:
``data: {"type":"text-delta","id":"<id>","delta":"<text>"}\\n\\n``: orjson writes a string
the same way each time, so the text's serialized bytes are what serializing the parsed text
again gives (the contract's ``json`` is ``orjson.dumps`` of the event); the chunk's keys are
fixed, so ``chunk_bytes``' ``__proto__`` sanitizing never applies.
Anything else goes through ``encode_wire(load(), id=id, json=json)``, as the base class does.
``tests/codecs/test_ai_sdk_encoder_serialized.py`` holds it equal to ``encode_wire``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from .base import WireEvent

if TYPE_CHECKING:
    from .ai_sdk import AiSdkEncoder

__all__ = ["encode_serialized"]

_HEAD: Final = b'{"type":"TEXT_MESSAGE_CONTENT","messageId":"'
_DELTA: Final = b'","delta":"'
_TAIL: Final = b'"}'
_CHUNK: Final = b'data: {"type":"text-delta","id":"'
_ID_AT: Final = len(_HEAD)
_TEXT_AFTER: Final = len(_DELTA)


def encode_serialized(
    self: AiSdkEncoder,
    event_type: str,
    json: bytes,
    load: Callable[[], WireEvent],
    *,
    id: str | None = None,
) -> bytes:
    """The SSE bytes of one AG-UI event given by its type and JSON (see the module
    docstring); ``id`` is accepted and not used, as by ``encode_wire``."""
    if (
        event_type == "TEXT_MESSAGE_CONTENT"
        and self._step_open
        and not self._ended
        and not self._closed
        and self._guard is None
        and json.startswith(_HEAD)
        and json.endswith(_TAIL)
    ):
        end = json.find(b'"', _ID_AT)  # the end of the id (when it holds no escape)
        if json.startswith(_DELTA, end) and end + _TEXT_AFTER <= len(json) - 2:
            mid = json[_ID_AT:end]
            text = json[end + _TEXT_AFTER : -2]
            if b'"' not in text and b"\\" not in mid and mid.decode() in self._text:
                return _CHUNK + mid + b'","delta":"' + text + b'"}\n\n'
    return self.encode_wire(load(), id=id, json=json)
