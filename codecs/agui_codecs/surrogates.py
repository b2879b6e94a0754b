"""Join UTF-16 surrogate pairs that an upstream split across two deltas.

A provider that writes JSON with ``\\uXXXX`` escapes (``ensure_ascii`` style) may cut a string
between the two halves of an astral character: one delta's JSON holds ``"\\ud83c"``, the
next ``"\\udf0d"`` (U+1F30D). Each payload is valid JSON on its own (RFC 8259 §7 allows a lone
escaped surrogate; §8.2 calls such a string's behaviour unpredictable), and
:func:`agui_codecs.jsontext.loads` keeps the lone surrogate as a Python code point, since orjson
refuses it. A delta is then not valid Unicode: it cannot be sent as UTF-8.

:class:`SurrogateJoiner` sits between the decoder and the events (the
:class:`~agui_codecs.builder.RunBuilder` calls it for every text, reasoning and tool-argument
delta): per part it holds a trailing high surrogate back and puts it before the next delta of
the same part, where the pair becomes one character. Nothing is dropped: a surrogate that
never finds its other half (a lone low surrogate, or a high one held when the part ends) is
emitted as U+FFFD REPLACEMENT CHARACTER, the substitution of the Unicode Standard §3.9 (U+FFFD
for an ill-formed code unit sequence).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any, Final

from pydantic import BaseModel

__all__ = ["REPLACEMENT", "SurrogateJoiner", "join_surrogates", "scrub", "scrub_event"]

REPLACEMENT: Final = "\ufffd"
"""What a surrogate without its other half becomes."""

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def join_surrogates(text: str) -> str:
    """``text`` with every surrogate pair joined into one code point and every lone surrogate
    replaced by U+FFFD (unchanged, and fast, when it holds no surrogate)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class SurrogateJoiner:
    """Per-part holder of a high surrogate that ended a delta (see the module docstring)."""

    __slots__ = ("_held",)

    def __init__(self) -> None:
        self._held: dict[Hashable, str] = {}

    def push(self, part: Hashable, delta: str) -> str:
        """The text of ``delta`` that may be emitted now for ``part`` (may be ``""``).

        A high surrogate held for ``part`` is put first; a trailing high surrogate of the result
        is held back for the next delta; pairs are joined, lone surrogates become U+FFFD.
        """
        if not isinstance(delta, str):
            return delta  # the event model rejects it; nothing held changes
        held = self._held.pop(part, "")
        text = held + delta if held else delta
        if not text or _SURROGATE.search(text) is None:
            return text
        if "\ud800" <= text[-1] <= "\udbff":
            self._held[part] = text[-1]
            text = text[:-1]
        return join_surrogates(text)

    def flush(self, part: Hashable) -> str:
        """End of ``part``: U+FFFD for a high surrogate still held, else ``""``."""
        return REPLACEMENT if self._held.pop(part, "") else ""

    def clear(self) -> None:
        """Forget every held surrogate (a run aborted without closing its parts)."""
        self._held.clear()


def scrub(value: Any) -> Any:
    """A JSON value (dict / list / str / scalar) with :func:`join_surrogates` applied to every
    string, keys included; the same object when nothing changed (so a clean value costs one
    walk and no copies)."""
    if isinstance(value, str):
        return join_surrogates(value)
    if isinstance(value, dict):
        items = [(scrub(k), scrub(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list):
        out = [scrub(v) for v in value]
        return value if all(a is b for a, b in zip(out, value, strict=True)) else out
    if isinstance(value, BaseModel):
        return scrub_event(value)
    return value


def scrub_event(event: Any) -> Any:
    """An event model (``ag_ui.core``; nested models too) whose strings hold no lone surrogate:
    every string field, extra field and nested value through :func:`scrub`; the same object
    when nothing changed.

    The last step for a run whose upstream escaped a lone surrogate
    (:func:`agui_codecs.jsontext.parse`): what the :class:`SurrogateJoiner` did not pair (ids,
    names, raw events, a half that never found its other half) becomes U+FFFD, so every event
    can be written as UTF-8 (orjson, pydantic) and nothing else of it is lost.
    """
    if not isinstance(event, BaseModel):
        return scrub(event)
    update = {}
    for name, field_value in event.__dict__.items():
        new = scrub(field_value)
        if new is not field_value:
            update[name] = new
    extra = event.__pydantic_extra__
    if extra:
        new_extra = scrub(extra)
        if new_extra is not extra:
            update.update(new_extra)
    return event.model_copy(update=update) if update else event
