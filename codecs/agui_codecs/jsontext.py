"""JSON text in and out without losing what the upstream wrote.

orjson (the fast path for every payload) has two gaps that lose data:

* an integer outside the 64-bit range is read as a float (``12345678901234567890123`` becomes
  ``1.2345678901234568e+22``), and such an integer cannot be written back at all
  (``orjson.JSONEncodeError``). Gemini sends ``functionCall.args`` as a parsed object, which a
  decoder re-serializes for TOOL_CALL_ARGS: the digits must survive (RFC 8259 §6 leaves the
  range to the implementation; a big id is a string of digits to the model);
* a lone escaped surrogate (``"\\ud83c"``) is rejected, although RFC 8259 §7 grammar admits it
  and a provider splitting an astral character across two deltas sends exactly that
  (:mod:`agui_codecs.surrogates` joins the halves).

:func:`loads` and :func:`dumps` keep orjson's speed for everything else and fall back to the
standard library's :mod:`json` (arbitrary-precision ``int``, lone surrogates kept as code
points) only for those payloads. ``NaN`` / ``Infinity`` literals stay invalid, as with orjson.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

import orjson

__all__ = ["DigitRuns", "JSONDecodeError", "dumps", "loads", "parse"]

JSONDecodeError = orjson.JSONDecodeError
"""What :func:`loads` raises for text that is not JSON (a ``ValueError``)."""

# 19 digits or more may be outside orjson's exact range (-2**63 .. 2**64-1); a false hit
# (digits inside a string, a long fraction) only costs the slower parse, same result. Found by
# mapping every digit to "0" and everything else to "x", then one substring search: about 7x
# faster than the regex [0-9]{19,} (which re tries at every position).
_DIGITS_AS_ZERO: Final = bytes(0x30 if 0x30 <= i <= 0x39 else 0x78 for i in range(256))
_NINETEEN_DIGITS: Final = b"0" * 19


def _has_long_digits(data: bytes) -> bool:
    """Whether ``data`` holds a run of 19 or more ASCII digits."""
    return len(data) >= 19 and data.translate(_DIGITS_AS_ZERO).find(_NINETEEN_DIGITS) >= 0


class DigitRuns:
    """Where a read ``data`` holds runs of 19 or more ASCII digits (integers orjson may not
    keep exactly), found for the whole read at once: one ``translate`` of it instead of one of
    each payload (:func:`parse`'s check), for a framer that cuts payloads out of it.

    :meth:`within` is asked about payloads in increasing order, so each search starts past the
    last hit (linear in the read however many payloads it holds).
    """

    __slots__ = ("_at", "_zeros")

    def __init__(self, data: bytes) -> None:
        self._zeros = data.translate(_DIGITS_AS_ZERO) if len(data) >= 19 else b""
        self._at = self._zeros.find(_NINETEEN_DIGITS) if self._zeros else -1

    def within(self, start: int, end: int) -> bool:
        """Whether ``data[start:end]`` holds such a run; ``start`` is never below an earlier
        call's. False means :func:`parse` of that slice is ``(orjson.loads(slice), False)``
        unless orjson refuses it (a lone surrogate, or not JSON)."""
        at = self._at
        if at < 0:
            return False
        if at < start:
            at = self._at = self._zeros.find(_NINETEEN_DIGITS, start)
            if at < 0:
                return False
        return at + 19 <= end


# an escaped surrogate (\uD800 .. \uDFFF); a false hit (an escaped backslash before "uD8")
# only costs a scrub of a value that has nothing to scrub
_ESCAPED_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPED_SURROGATE_B: Final = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _stdlib(raw: bytes | str) -> Any:
    """The standard library's parse, for what orjson cannot keep. Bytes must be UTF-8, as for
    orjson: ``json.loads`` would take UTF-16/32 and let bytes encoding a surrogate through
    (``surrogatepass``), and the same body then gave other text than when its framing decoded
    it (U+FFFD per byte): a split-dependent outcome the long hunt found."""
    try:
        text = raw if isinstance(raw, str) else raw.decode("utf-8")
        value = json.loads(text, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        doc = raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
        raise JSONDecodeError(str(exc), doc, 0) from exc
    _check_finite(value)
    return value


def loads(raw: bytes | bytearray | memoryview | str) -> Any:
    """Parse JSON text like ``orjson.loads``, but integers keep every digit (Python ``int``)
    and lone escaped surrogates are kept (as lone code points).

    Raises:
        JSONDecodeError: ``raw`` is not JSON (also for ``NaN``, ``Infinity`` and numbers that
            overflow a double, as orjson).
    """
    return parse(raw)[0]


def parse(raw: bytes | bytearray | memoryview | str) -> tuple[Any, bool]:
    """:func:`loads`, and whether the value may hold a lone surrogate (the text escaped one,
    which orjson refused): such a value cannot be written as UTF-8 until the surrogates are
    joined or replaced (:mod:`agui_codecs.surrogates`).

    Raises:
        JSONDecodeError: as :func:`loads`.
    """
    # The hot path (every framed payload): bytes, or text that is valid Unicode, parsed as its
    # UTF-8 bytes (the same value); the steps of _parse_any, inlined.
    if type(raw) is bytes:
        data: bytes = raw
    elif type(raw) is str:
        try:
            data = raw.encode()
        except UnicodeEncodeError:  # holds a lone surrogate code point
            return _parse_any(raw)
    else:
        return _parse_any(raw)
    if len(data) < 19 or data.translate(_DIGITS_AS_ZERO).find(_NINETEEN_DIGITS) < 0:
        try:
            return orjson.loads(data), False
        except orjson.JSONDecodeError as exc:
            if "surrogate" not in str(exc):
                raise
            return _stdlib(data), True
    return _stdlib(data), _ESCAPED_SURROGATE_B.search(data) is not None


def _parse_any(raw: bytes | bytearray | memoryview | str) -> tuple[Any, bool]:
    """:func:`parse` for any input type."""
    if isinstance(raw, str):
        data: bytes | str = raw
        long_digits = _has_long_digits(raw.encode("utf-8", "surrogatepass"))
    else:
        data = raw if isinstance(raw, bytes) else bytes(raw)
        long_digits = _has_long_digits(data)
    if long_digits:
        value = _stdlib(data)
        pattern = _ESCAPED_SURROGATE if isinstance(data, str) else _ESCAPED_SURROGATE_B
        return value, pattern.search(data) is not None  # type: ignore[arg-type]
    try:
        return orjson.loads(data), False
    except orjson.JSONDecodeError as exc:
        if "surrogate" not in str(exc):
            raise
        return _stdlib(data), True


def _check_finite(value: Any) -> None:
    """Reject what orjson rejects and the standard library reads as ``inf`` (``1e400``)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and item in (float("inf"), float("-inf")):
            raise JSONDecodeError("number is infinity when parsed as double", "", 0)
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (``orjson.dumps`` output), also for integers beyond
    64 bits, which are written with all their digits, and for strings holding a lone
    surrogate (what :func:`parse` keeps), which are written escaped (``\\ud83c``): the text is
    then ASCII, valid UTF-8, and reads back as the same value.

    Raises:
        TypeError: ``value`` holds something JSON cannot represent.
    """
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        if _LONE_SURROGATE.search(text) is None:
            return text
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
