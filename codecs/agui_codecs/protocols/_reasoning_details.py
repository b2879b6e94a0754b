"""OpenRouter ``reasoning_details`` on Chat Completions: kept from the stream, sent back.

Source: OpenRouter, "Reasoning Tokens" (https://openrouter.ai/docs/guides/best-practices/
reasoning-tokens, formerly ``/docs/use-cases/reasoning-tokens``), sections
"reasoning_details Array Structure" and "Preserving Reasoning Blocks" (read 2026-12): a
message's (or a stream delta's) ``reasoning_details`` is a list of objects with ``type``
``reasoning.summary`` (``summary``: text), ``reasoning.text`` (``text``, ``signature``) or
``reasoning.encrypted`` (``data``), each with the common fields ``id`` (string or null),
``format`` (``unknown``, ``openai-responses-v1``, ``anthropic-claude-v1``,
``google-gemini-v1``, ...) and ``index``; streamed, the pieces of one entry share its
``index``. To continue a reasoning turn (tool calls above all) the assistant message is sent
back with its ``reasoning_details`` unmodified, in order.

How they travel through AG-UI (docs/protocols.md §4.1):

* each entry is one reasoning message: its ``text`` / ``summary`` is the message's content
  (REASONING_MESSAGE_CONTENT, streamed as it comes);
* everything else of the entry (``type``, ``signature``, ``data``, ``id``, ``format``,
  ``index``, any other key) is the *envelope*, the compact JSON of the entry without its text,
  carried once per message as REASONING_ENCRYPTED_VALUE ``metadata: {provider: "openrouter",
  field: "reasoningDetails"}``, emitted just before the message ends
  (:meth:`~agui_codecs.builder.RunBuilder.hold_reasoning_encrypted`): a signature that comes
  after the text is not lost. The envelope is self-describing, so a client that keeps only
  ``encryptedValue`` (``@ag-ui/client`` 1.0) or the AI SDK's ``providerMetadata`` gives back
  all the request builder needs;
* the Chat Completions request builder rebuilds each entry as envelope + text, merging
  neighbours of one ``type`` and ``index`` (an entry the stream split, e.g. its signature after
  the answer text began), and puts the list on the assistant message of that turn.

Pure (sans-I/O) helpers shared by the ``openai_chat`` decoder and request builder and by
:func:`agui_codecs.protocols._request.own_encrypted_value` (an envelope without provenance
belongs to ``openrouter``, never to another provider's route).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import TYPE_CHECKING, Any, Final

from .. import jsontext

if TYPE_CHECKING:
    from ..builder import RunBuilder

__all__ = [
    "FIELD",
    "PROVIDER",
    "TEXT_KEYS",
    "ReasoningDetailsStream",
    "envelope",
    "merge_details",
    "parse_envelope",
]

PROVIDER: Final = "openrouter"
"""REASONING_ENCRYPTED_VALUE ``metadata.provider`` of an envelope (AI SDK ``providerMetadata``
key)."""

FIELD: Final = "reasoningDetails"
"""REASONING_ENCRYPTED_VALUE ``metadata.field`` of an envelope."""

TEXT_KEYS: Final[dict[str, str]] = {"reasoning.text": "text", "reasoning.summary": "summary"}
"""Entry ``type`` -> the key holding its reasoning text (the reasoning message's content)."""


def _type_of(detail: dict[str, Any]) -> str:
    """The entry's ``type``; a typeless entry is typed by the key it carries."""
    kind = detail.get("type")
    if isinstance(kind, str) and kind:
        return kind
    if "summary" in detail:
        return "reasoning.summary"
    if "data" in detail:
        return "reasoning.encrypted"
    return "reasoning.text"


def envelope(detail: dict[str, Any]) -> str:
    """The entry without its text (``text`` / ``summary``) as compact JSON text."""
    kind = _type_of(detail)
    text_key = TEXT_KEYS.get(kind)
    rest = {k: v for k, v in detail.items() if k != text_key}
    rest["type"] = kind
    return jsontext.dumps(rest)


def parse_envelope(value: Any) -> dict[str, Any] | None:
    """The entry an ``encryptedValue`` holds, if it is an envelope (a JSON object whose
    ``type`` starts with ``reasoning.``), else ``None`` (a provider's own opaque value)."""
    if not isinstance(value, str) or not value.startswith("{"):
        return None
    try:
        parsed, _ = jsontext.parse(value)
    except (jsontext.JSONDecodeError, UnicodeError):
        return None
    if not isinstance(parsed, dict):
        return None
    kind = parsed.get("type")
    return parsed if isinstance(kind, str) and kind.startswith("reasoning.") else None


def _index(detail: dict[str, Any]) -> int | None:
    index = detail.get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else None


def merge_details(details: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """``details`` with neighbours of one ``type`` and integer ``index`` joined: texts
    concatenated, other keys taken from the first that has them (not null)."""
    out: list[dict[str, Any]] = []
    for detail in details:
        last = out[-1] if out else None
        index = _index(detail)
        if (
            last is not None
            and index is not None
            and _index(last) == index
            and _type_of(last) == _type_of(detail)
        ):
            text_key = TEXT_KEYS.get(_type_of(detail))
            for key, value in detail.items():
                if key == text_key and isinstance(value, str):
                    before = last.get(key)
                    last[key] = (before if isinstance(before, str) else "") + value
                elif last.get(key) is None:
                    last[key] = value
            continue
        out.append(dict(detail))
    return out


class ReasoningDetailsStream:
    """Turns the ``reasoning_details`` of successive deltas into reasoning messages.

    One reasoning message per entry (keyed by its ``index``; in a stream, an entry without
    one continues the open entry of its type, else starts a new one; in a whole message each
    entry is its own). Its text streams as content; its
    envelope is held on the message (:meth:`RunBuilder.hold_reasoning_encrypted`) and renewed
    whenever a non-text key arrives, so the message ends with one value holding every key
    received. A new ``index`` ends the previous entry's message. When something else closed
    the message (answer text, a tool call), more of the same entry opens a new message whose
    envelope holds only the keys received since: each signature or blob is sent once, and
    :func:`merge_details` joins the two when the entry is sent back.
    """

    def __init__(self, run: RunBuilder) -> None:
        self.run = run
        self._count = 0
        self._key: Hashable | None = None  # builder key of the entry being streamed
        self._slot: tuple[str, int | None] | None = None  # (type, index) of that entry
        self._fields: dict[str, Any] = {}  # its keys received since its message opened

    @property
    def key(self) -> Hashable | None:
        """The builder key of the reasoning message still open for an entry, if any."""
        key = self._key
        return key if key is not None and self.run.reasoning_is_open(key) else None

    def feed(self, details: list[Any], *, whole: bool = False) -> bool:
        """Translate one delta's entries (``whole``: a non-streamed message's, each entry
        complete, so one without ``index`` continues nothing); non-objects are ignored. True
        when any entry carried reasoning text."""
        texted = False
        for detail in details:
            if isinstance(detail, dict):
                texted = self._entry(detail, whole=whole) or texted
        return texted

    def _entry(self, detail: dict[str, Any], *, whole: bool) -> bool:
        kind, index = _type_of(detail), _index(detail)
        slot = (kind, index)
        open_key = self.key
        same = open_key is not None and self._slot is not None and self._slot[0] == kind
        if index is not None or whole:
            same = same and index is not None and self._slot == slot
        if not same:
            if open_key is not None:
                self.run.end_reasoning(open_key)
            self._count += 1
            self._key = ("reasoning_details", self._count)
            self._slot = slot
            self._fields = {"type": kind}
        key = self._key
        assert key is not None
        text_key = TEXT_KEYS.get(kind)
        texted, changed = False, not same
        for name, value in detail.items():
            if name == text_key:
                if isinstance(value, str) and value:
                    self.run.reasoning(value, key=key)
                    texted = True
            elif name == "type":
                continue
            elif value is not None or name not in self._fields:
                if self._fields.get(name, ...) != value:
                    self._fields[name] = value
                    changed = True
        if changed:
            self.run.hold_reasoning_encrypted(
                envelope(self._fields), key=key, field=FIELD, provider=PROVIDER
            )
        return texted
