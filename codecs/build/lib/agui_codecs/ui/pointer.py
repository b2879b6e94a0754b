"""RFC 6901 JSON Pointer parsing and evaluation, as used by ``ui_hints`` (``data``, ``path``).

Only what the hints need: parse a pointer once into reference tokens, resolve the tokens
against a decoded JSON value. A pointer that selects nothing resolves to :data:`MISSING` (never
an exception), because a tool output that does not fit its hints is ordinary bad data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["MISSING", "Missing", "escape_token", "parse_pointer", "resolve"]


class Missing:
    """Type of :data:`MISSING`, the result of a pointer that selects nothing."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Final = Missing()
"""Sentinel: the pointer selects no value (distinct from a JSON ``null``)."""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Split an RFC 6901 pointer into its unescaped reference tokens.

    ``""`` is the whole document (no tokens); ``"/a~1b/0"`` is ``("a/b", "0")``.

    Raises:
        ValueError: ``pointer`` is not empty and does not start with ``/``, or contains a ``~``
            not followed by ``0`` or ``1`` (RFC 6901 §3).
    """
    if pointer == "":
        return ()
    if not pointer.startswith("/"):
        raise ValueError(f"JSON Pointer must be empty or start with '/': {pointer!r}")
    tokens = pointer[1:].split("/")
    out: list[str] = []
    for token in tokens:
        if "~" in token:
            rest = token.replace("~0", "").replace("~1", "")
            if "~" in rest:
                raise ValueError(f"invalid '~' escape in JSON Pointer: {pointer!r}")
            token = token.replace("~1", "/").replace("~0", "~")  # RFC 6901 §4 order
        out.append(token)
    return tuple(out)


def escape_token(token: str) -> str:
    """Escape one reference token (``~`` → ``~0``, ``/`` → ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve(document: Any, tokens: Sequence[str]) -> Any:
    """Evaluate parsed pointer ``tokens`` against ``document`` (RFC 6901 §4).

    Array indices must be decimal without leading zeros; ``-`` and out-of-range indices select
    nothing. Returns the selected value, or :data:`MISSING`.
    """
    value = document
    for token in tokens:
        if type(value) is dict:  # fast path: decoded JSON objects are plain dicts
            value = value.get(token, MISSING)
            if value is MISSING:
                return MISSING
        elif isinstance(value, Mapping):
            if token not in value:
                return MISSING
            value = value[token]
        elif isinstance(value, list):
            if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
                return MISSING
            index = int(token)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value
