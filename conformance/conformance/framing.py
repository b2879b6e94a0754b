"""How each real client cuts a response body into JSON payloads (not the WHATWG algorithm).

The gateway's own SSE decoder (:mod:`agui_codecs.sse`) follows the standard; the clients do
not, and their verdicts depend on the differences (``docs/protocols.md`` §1.2):

* :class:`AguiSplitter`: ``@ag-ui/client`` 1.0.0 ``src/transform/sse.ts``. UTF-8 decoded with
  replacement (a leading BOM dropped), events split on ``"\\n\\n"`` only, lines on ``"\\n"``
  only, ``data:`` lines joined by LF (one space after the colon dropped), everything else
  ignored; the text after the last boundary is still parsed at EOF. More than 10 MiB without a
  boundary fails the stream.
* :class:`EventSourceSplitter`: ``eventsource-parser`` 3.1.1 as used by ``ai``. Lines end with
  CRLF, LF or CR; a blank line dispatches an event that had any ``data`` line, even an empty
  one; an event not closed by a blank line at EOF is dropped; a line that is not
  ``data``/``event``/``id``/``retry``/comment is reported and ignored.

:func:`parse_json` is ``JSON.parse`` (no NaN/Infinity, no BOM, JSON whitespace only) and
:func:`has_proto_key` the check of ``@ai-sdk/provider-utils`` ``secureJsonParse``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from encodings.utf_8_sig import IncrementalDecoder
from typing import Any, Final

__all__ = [
    "AGUI_MAX_BUFFER",
    "AguiSplitter",
    "EventSourceSplitter",
    "JsonError",
    "Payload",
    "has_proto_key",
    "parse_json",
]

AGUI_MAX_BUFFER: Final = 10 * 1024 * 1024
"""``MAX_BUFFER_SIZE`` of ``@ag-ui/client`` ``src/transform/sse.ts`` (characters)."""


@dataclass(frozen=True, slots=True)
class Payload:
    """One event's data as its client sees it.

    Attributes:
        text: the joined ``data`` lines.
        crlf: a CR was seen in the event's framing.
        unterminated: the event was not closed by a blank line (read at EOF).
        line: 1-based line of the input where the event starts.
        dropped_lines: lines of the event the client ignores that are not SSE fields
            (AG-UI only: a line that is not ``data:``, ``event:``, ``id:``, ``retry:`` or a
            comment).
        invalid_utf8: the event's bytes were not all UTF-8 (the client reads U+FFFD).
    """

    text: str
    crlf: bool = False
    unterminated: bool = False
    line: int | None = None
    dropped_lines: tuple[str, ...] = ()
    invalid_utf8: bool = False


class _Utf8:
    """Incremental UTF-8 decoding with replacement (a leading BOM dropped, as ``TextDecoder``
    does) that notes the first invalid sequence; linear in the input (after the first one the
    rest is decoded with ``errors="replace"`` and not inspected again)."""

    def __init__(self) -> None:
        self._decoder = IncrementalDecoder(errors="strict")
        self.invalid = 0

    def decode(self, data: bytes, final: bool = False) -> str:
        try:
            return str(self._decoder.decode(data, final))
        except UnicodeDecodeError as exc:
            self.invalid += 1
            buffered = bytes(exc.object)  # the decoder's buffered bytes plus ``data``
            head = buffered[: exc.start].decode("utf-8")
            self._decoder = IncrementalDecoder(errors="replace")
            self._decoder.setstate((b"", 0))  # any BOM was already consumed
            return head + "\ufffd" + str(self._decoder.decode(buffered[exc.end :], final))


class JsonError(ValueError):
    """``JSON.parse`` would throw."""


def _reject_constant(name: str) -> Any:
    raise JsonError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)


def parse_json(text: str) -> Any:
    """Parse like JavaScript's ``JSON.parse``.

    Raises:
        JsonError: not exactly one JSON document.
    """
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JsonError(f"{exc.msg} at {exc.pos}") from exc
    except RecursionError as exc:
        raise JsonError("nested too deeply") from exc


def has_proto_key(value: Any) -> bool:
    """True when ``secureJsonParse`` rejects ``value``: an own ``__proto__`` key anywhere, or a
    ``constructor`` object with a ``prototype`` key."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__proto__" in node:
                return True
            ctor = node.get("constructor")
            if isinstance(ctor, dict) and "prototype" in ctor:
                return True
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, dict | list))
    return False


_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")


class AguiSplitter:
    """Incremental ``@ag-ui/client`` splitter: ``feed(bytes)`` and ``close()`` return payloads.

    Linear in the input: a boundary is searched for only in the text that arrived since the
    last search (one character back, for a ``\n`` split across feeds).

    Attributes:
        overflow: set once the tail exceeded :data:`AGUI_MAX_BUFFER` (the client fails there;
            nothing more is returned).
    """

    def __init__(self) -> None:
        self._decoder = _Utf8()
        self._parts: list[str] = []
        self._size = 0
        self._line = 1
        self._seen_invalid = 0
        self.overflow = False

    def feed(self, data: bytes) -> list[Payload]:
        """Consume bytes; return the payloads of the events they complete."""
        if self.overflow:
            return []
        text = self._decoder.decode(data)
        out: list[Payload] = []
        start = 0
        if self._parts and self._parts[-1].endswith("\n") and text.startswith("\n"):
            out += self._emit(self._take()[:-1], False)  # the boundary spans two feeds
            start = 1
        while True:
            boundary = text.find("\n\n", start)
            if boundary == -1:
                break
            self._parts.append(text[start:boundary])
            out += self._emit(self._take(), False)
            start = boundary + 2
        rest = text[start:]
        if rest:
            self._parts.append(rest)
            self._size += len(rest)
        if self._size > AGUI_MAX_BUFFER:
            self.overflow = True
            self._parts, self._size = [], 0
        return out

    def close(self) -> list[Payload]:
        """EOF: the tail after the last boundary is parsed too, as the client does."""
        if self.overflow:
            return []
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._parts.append(tail)
        text = self._take()
        return self._emit(text, True) if text else []

    def _take(self) -> str:
        text = "".join(self._parts)
        self._parts, self._size = [], 0
        return text

    def _emit(self, text: str, unterminated: bool) -> list[Payload]:
        line = self._line
        self._line += text.count("\n") + 2
        invalid = self._decoder.invalid > self._seen_invalid
        self._seen_invalid = self._decoder.invalid
        if "\n" not in text and text.startswith("data:"):  # the common one-line event
            body = text[6:] if text.startswith("data: ") else text[5:]
            crlf = "\r" in text
            return [Payload(body, crlf, unterminated, line, (), invalid)]
        lines = text.split("\n")
        data = [ln[5:].removeprefix(" ") for ln in lines if ln.startswith("data:")]
        dropped = tuple(ln for ln in lines if ln.strip() and not ln.startswith(_SSE_FIELDS))
        if not data:
            return []
        return [
            Payload(
                "\n".join(data),
                crlf="\r" in text,
                unterminated=unterminated,
                line=line,
                dropped_lines=dropped,
                invalid_utf8=invalid,
            )
        ]


class EventSourceSplitter:
    """Incremental ``eventsource-parser`` 3.1.1 splitter (the AI SDK's).

    Linear in the input: line terminators are searched for once per character (their
    positions are kept between lines), a partial line is kept in pieces, and a CR that ends a
    feed is remembered so that an LF opening the next one completes the CRLF.

    Attributes:
        ignored_lines: lines that are not SSE fields (eventsource-parser reports and skips
            them).
        dropped: an event with data was cut off by EOF (set by :meth:`close`).
    """

    def __init__(self) -> None:
        self._decoder = _Utf8()
        self._seen_invalid = 0
        self._pending: list[str] = []
        self._skip_lf = False
        self._data: list[str] | None = None
        self._crlf = False
        self._lineno = 0
        self._event_line: int | None = None
        self.ignored_lines: list[str] = []
        self.dropped = False

    def feed(self, data: bytes) -> list[Payload]:
        """Consume bytes; return the payloads of the events they complete."""
        text = self._decoder.decode(data)
        out: list[Payload] = []
        if not text:
            return out
        start = 0
        if self._skip_lf and text[0] == "\n":
            start = 1
        self._skip_lf = False
        size = len(text)
        cr, lf = text.find("\r", start), text.find("\n", start)
        while cr != -1 or lf != -1:
            end = lf if cr == -1 or (lf != -1 and lf < cr) else cr
            line = text[start:end]
            if self._pending:
                line = "".join(self._pending) + line
                self._pending = []
            self._line(line, out)
            start = end + 1
            if text[end] == "\r":
                self._crlf = True
                if start == size:
                    self._skip_lf = True
                elif text[start] == "\n":
                    start += 1
            if cr != -1 and cr < start:
                cr = text.find("\r", start)
            if lf != -1 and lf < start:
                lf = text.find("\n", start)
        if start < size:
            self._pending.append(text[start:])
        return out

    def close(self) -> list[Payload]:
        """EOF: an unterminated event is dropped (``dropped`` tells whether one had data)."""
        pending = "".join(self._pending) + self._decoder.decode(b"", final=True)
        if pending.startswith("data:") or self._data is not None:
            self.dropped = True
        self._pending, self._data = [], None
        return []

    def _line(self, line: str, out: list[Payload]) -> None:
        self._lineno += 1
        if not line:
            if self._data is not None:
                invalid = self._decoder.invalid > self._seen_invalid
                self._seen_invalid = self._decoder.invalid
                out.append(
                    Payload(
                        "\n".join(self._data),
                        crlf=self._crlf,
                        line=self._event_line,
                        invalid_utf8=invalid,
                    )
                )
            self._data, self._crlf, self._event_line = None, False, None
            return
        if self._event_line is None:
            self._event_line = self._lineno
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if name == "data":
            if self._data is None:
                self._data = []
            self._data.append(value.removeprefix(" "))
        elif name not in ("event", "id", "retry"):
            self.ignored_lines.append(line)
