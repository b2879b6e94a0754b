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
    """

    text: str
    crlf: bool = False
    unterminated: bool = False


class JsonError(ValueError):
    """``JSON.parse`` would throw."""


def _reject_constant(name: str) -> Any:
    raise JsonError(f"{name} is not JSON")


def parse_json(text: str) -> Any:
    """Parse like JavaScript's ``JSON.parse``.

    Raises:
        JsonError: not exactly one JSON document.
    """
    try:
        return json.loads(text, parse_constant=_reject_constant)
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


class AguiSplitter:
    """Incremental ``@ag-ui/client`` splitter: ``feed(bytes)`` and ``close()`` return payloads.

    Attributes:
        overflow: set once the tail exceeded :data:`AGUI_MAX_BUFFER` (the client fails there;
            nothing more is returned).
    """

    def __init__(self) -> None:
        self._decoder = IncrementalDecoder(errors="replace")
        self._buffer = ""
        self.overflow = False

    def feed(self, data: bytes) -> list[Payload]:
        """Consume bytes; return the payloads of the events they complete."""
        if self.overflow:
            return []
        self._buffer += self._decoder.decode(data)
        *events, self._buffer = self._buffer.split("\n\n")
        out = [p for e in events if (p := self._event(e, False)) is not None]
        if len(self._buffer) > AGUI_MAX_BUFFER:
            self.overflow = True
            self._buffer = ""
        return out

    def close(self) -> list[Payload]:
        """EOF: the tail after the last boundary is parsed too, as the client does."""
        if self.overflow:
            return []
        self._buffer += self._decoder.decode(b"", final=True)
        tail, self._buffer = self._buffer, ""
        payload = self._event(tail, True) if tail else None
        return [payload] if payload is not None else []

    @staticmethod
    def _event(text: str, unterminated: bool) -> Payload | None:
        data = [line[5:].removeprefix(" ") for line in text.split("\n") if line.startswith("data:")]
        if not data:
            return None
        return Payload("\n".join(data), crlf="\r" in text, unterminated=unterminated)


class EventSourceSplitter:
    """Incremental ``eventsource-parser`` 3.1.1 splitter (the AI SDK's).

    Attributes:
        ignored_lines: lines that are not SSE fields (eventsource-parser reports and skips
            them).
        dropped: an event with data was cut off by EOF (set by :meth:`close`).
    """

    def __init__(self) -> None:
        self._decoder = IncrementalDecoder(errors="replace")
        self._pending = ""
        self._data: list[str] | None = None
        self._crlf = False
        self.ignored_lines: list[str] = []
        self.dropped = False

    def feed(self, data: bytes) -> list[Payload]:
        """Consume bytes; return the payloads of the events they complete."""
        text = self._pending + self._decoder.decode(data)
        out: list[Payload] = []
        start = 0
        while True:
            cr, lf = text.find("\r", start), text.find("\n", start)
            if cr == -1 and lf == -1:
                break
            end = lf if cr == -1 or (lf != -1 and lf < cr) else cr
            if end == cr and end == len(text) - 1:
                break  # a final CR may be the first half of a CRLF
            self._line(text[start:end], out)
            if text[end] == "\r":
                self._crlf = True
            start = end + 1
            if text[end] == "\r" and text[start : start + 1] == "\n":
                start += 1
        self._pending = text[start:]
        return out

    def close(self) -> list[Payload]:
        """EOF: an unterminated event is dropped (``dropped`` tells whether one had data)."""
        self._pending += self._decoder.decode(b"", final=True)
        if self._pending.startswith("data:") or self._data is not None:
            self.dropped = True
        self._pending, self._data = "", None
        return []

    def _line(self, line: str, out: list[Payload]) -> None:
        if not line:
            if self._data is not None:
                out.append(Payload("\n".join(self._data), crlf=self._crlf))
            self._data, self._crlf = None, False
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        if name == "data":
            self._data = [*(self._data or []), value.removeprefix(" ")]
        elif name not in ("event", "id", "retry"):
            self.ignored_lines.append(line)
