"""Reading captured streams: detect their form and protocol, and check them whole.

A capture is one of (the first non-blank byte after an optional BOM decides, as in
:mod:`agui_codecs.framing`):

* ``sse``: a ``text/event-stream`` response body, checked byte for byte with each client's
  own splitter (framing rules included);
* ``jsonl``: one JSON event per line (``{`` first), framing rules skipped;
* ``json``: a JSON array of events (``[`` first), framing rules skipped.

The protocol is ``agui`` (``SCREAMING_CASE`` event types) or ``ai-sdk`` (``kebab-case`` chunk
types); ``auto`` reads the first payload's type. SSE is read for detection with the
EventSource splitter, which takes LF, CR and CRLF framing (sse-starlette frames with CRLF by
default; the AG-UI splitter would merge such a body into one event).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from agui_codecs.events import event_to_wire

from .agui import AguiChecker
from .ai_sdk import AiSdkChecker
from .framing import AguiSplitter, EventSourceSplitter, JsonError, Payload, parse_json
from .report import Report, Violation

__all__ = [
    "Checker",
    "Form",
    "Protocol",
    "check_bytes",
    "check_events",
    "detect_form",
    "detect_protocol",
    "make_checker",
]

Form = Literal["sse", "jsonl", "json"]
Protocol = Literal["agui", "ai-sdk"]
Checker = AguiChecker | AiSdkChecker


def detect_form(data: bytes) -> Form:
    """``sse``, ``jsonl`` or ``json`` from the first non-blank byte (after a BOM)."""
    head = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1]
    return "jsonl" if head == b"{" else "json" if head == b"[" else "sse"


def _payloads(data: bytes, form: Form) -> Iterator[tuple[Any, int | None]]:
    """``(value or JsonError, line)`` per event of a JSON array (line unknown) or JSON lines
    (split on LF only: a JSON string may hold a raw U+2028, which ``str.splitlines`` splits)."""
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    if form == "json":
        value = parse_json(text)
        for item in value if isinstance(value, list) else [value]:
            yield item, None
        return
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if line.strip():
            try:
                yield parse_json(line), number
            except JsonError as exc:
                yield exc, number


_DETECT_PIECE = 1 << 16


def _first_sse_payload(data: bytes) -> Payload | None:
    for splitter in (EventSourceSplitter(), AguiSplitter()):
        for start in range(0, len(data), _DETECT_PIECE):
            for payload in splitter.feed(data[start : start + _DETECT_PIECE]):
                if payload.text.strip() != "[DONE]":
                    return payload
        for payload in splitter.close():
            if payload.text.strip() != "[DONE]":
                return payload
    return None


def detect_protocol(data: bytes) -> Protocol:
    """``agui`` when the first event type is upper case (``RUN_STARTED``), else ``ai-sdk``."""
    form = detect_form(data)
    first: Any = None
    try:
        if form == "sse":
            payload = _first_sse_payload(data)
            first = None if payload is None else parse_json(payload.text)
        else:
            first = next(iter(_payloads(data, form)), (None, None))[0]
    except (JsonError, StopIteration):
        first = None
    kind = first.get("type") if isinstance(first, dict) else None
    return "ai-sdk" if isinstance(kind, str) and kind and kind == kind.lower() else "agui"


def make_checker(
    protocol: Protocol,
    *,
    major: int = 7,
    source: str = "<stream>",
    profile: str = "1.0",
    continues: Iterable[str] = (),
) -> Checker:
    """A fresh checker for ``protocol`` (``major`` selects the AI SDK version, ``profile`` the
    AG-UI profile, ``1.0`` or ``1.1``; ``continues``: the AI SDK stream continues an assistant
    message with tool parts of these ``toolCallId``s, see :class:`AiSdkChecker`).

    Raises:
        ValueError: unknown protocol, AI SDK major or AG-UI profile.
    """
    if protocol == "agui":
        return AguiChecker(source, profile=profile)
    if protocol == "ai-sdk":
        return AiSdkChecker(major, source, continues=continues)
    raise ValueError(f"unknown protocol {protocol!r} (agui or ai-sdk)")


def check_bytes(
    data: bytes,
    *,
    protocol: Protocol | Literal["auto"] = "auto",
    major: int = 7,
    source: str = "<stream>",
    profile: str = "1.0",
    continues: Iterable[str] = (),
) -> Report:
    """Check one whole capture and return its :class:`~conformance.report.Report`
    (``continues``: see :func:`make_checker`).

    Raises:
        ValueError: unknown protocol, AI SDK major or AG-UI profile.
    """
    chosen: Protocol = detect_protocol(data) if protocol == "auto" else protocol
    checker = make_checker(chosen, major=major, source=source, profile=profile, continues=continues)
    form = detect_form(data)
    if form == "sse":
        checker.feed(data)
        checker.close()
        return checker.report
    rule = "agui/sse/invalid-json" if chosen == "agui" else "ai-sdk/sse/invalid-json"
    try:
        for value, line in _payloads(data, form):
            if isinstance(value, JsonError):
                index = checker.report.events
                checker.report.events += 1
                checker.report.violations.append(
                    Violation(rule, index, f"not JSON: {value}", line=line)
                )
            else:
                checker.feed_payload(value, line=line)
    except JsonError as exc:
        checker.report.violations.append(Violation(rule, None, f"the JSON array is invalid: {exc}"))
    checker.finish()
    return checker.report


def check_events(
    events: Iterable[Any], *, source: str = "<events>", profile: str = "1.0"
) -> Report:
    """Check a whole AG-UI event sequence already in memory (no framing) for ``@ag-ui/client``.

    ``events`` are AG-UI wire objects (``{"type": "RUN_STARTED", ...}``) or ``ag_ui.core``
    events (turned into their wire form by :func:`agui_codecs.events.event_to_wire`). The
    end-of-stream checks run, so a sequence that stops mid-run gets
    ``agui/hygiene/no-terminal-event``.
    """
    checker = AguiChecker(source, profile=profile)
    for event in events:
        checker.feed_payload(event if isinstance(event, Mapping) else event_to_wire(event))
    checker.finish()
    return checker.report
