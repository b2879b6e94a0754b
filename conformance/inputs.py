"""Reading captured streams: detect their form and protocol, and check them whole.

A capture is one of (the first non-blank byte after an optional BOM decides, as in
:mod:`agui_codecs.framing`):

* ``sse``: a ``text/event-stream`` response body, checked byte for byte with each client's
  own splitter (framing rules included);
* ``jsonl``: one JSON event per line (``{`` first), framing rules skipped;
* ``json``: a JSON array of events (``[`` first), framing rules skipped.

The protocol is ``agui`` (``SCREAMING_CASE`` event types) or ``ai-sdk`` (``kebab-case`` chunk
types); ``auto`` reads the first payload's type.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

from agui_codecs.events import event_to_wire

from .agui import AguiChecker
from .ai_sdk import AiSdkChecker
from .framing import AguiSplitter, JsonError, parse_json
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


def _payloads(data: bytes, form: Form) -> Iterator[Any]:
    text = data.decode("utf-8", "replace").removeprefix("\ufeff")
    if form == "json":
        value = parse_json(text)
        yield from value if isinstance(value, list) else [value]
        return
    for line in text.splitlines():
        if line.strip():
            try:
                yield parse_json(line)
            except JsonError as exc:
                yield exc


def detect_protocol(data: bytes) -> Protocol:
    """``agui`` when the first event type is upper case (``RUN_STARTED``), else ``ai-sdk``."""
    form = detect_form(data)
    first: Any = None
    try:
        if form == "sse":
            splitter = AguiSplitter()
            for payload in [*splitter.feed(data), *splitter.close()]:
                if payload.text.strip() != "[DONE]":
                    first = parse_json(payload.text)
                    break
        else:
            first = next(iter(_payloads(data, form)), None)
    except (JsonError, StopIteration):
        first = None
    kind = first.get("type") if isinstance(first, dict) else None
    return "ai-sdk" if isinstance(kind, str) and kind and kind == kind.lower() else "agui"


def make_checker(protocol: Protocol, *, major: int = 7, source: str = "<stream>") -> Checker:
    """A fresh checker for ``protocol`` (``major`` selects the AI SDK version).

    Raises:
        ValueError: unknown protocol or AI SDK major.
    """
    if protocol == "agui":
        return AguiChecker(source)
    if protocol == "ai-sdk":
        return AiSdkChecker(major, source)
    raise ValueError(f"unknown protocol {protocol!r} (agui or ai-sdk)")


def check_bytes(
    data: bytes,
    *,
    protocol: Protocol | Literal["auto"] = "auto",
    major: int = 7,
    source: str = "<stream>",
) -> Report:
    """Check one whole capture and return its :class:`~conformance.report.Report`.

    Raises:
        ValueError: unknown protocol or AI SDK major.
    """
    chosen: Protocol = detect_protocol(data) if protocol == "auto" else protocol
    checker = make_checker(chosen, major=major, source=source)
    form = detect_form(data)
    if form == "sse":
        checker.feed(data)
        checker.close()
        return checker.report
    rule = "agui/sse/invalid-json" if chosen == "agui" else "ai-sdk/sse/invalid-json"
    try:
        for value in _payloads(data, form):
            if isinstance(value, JsonError):
                index = checker.report.events
                checker.report.events += 1
                checker.report.violations.append(Violation(rule, index, f"not JSON: {value}"))
            else:
                checker.feed_payload(value)
    except JsonError as exc:
        checker.report.violations.append(Violation(rule, None, f"the JSON array is invalid: {exc}"))
    checker.finish()
    return checker.report


def check_events(events: Iterable[Any], *, source: str = "<events>") -> Report:
    """Check a whole AG-UI event sequence already in memory (no framing) for ``@ag-ui/client``.

    ``events`` are AG-UI wire objects (``{"type": "RUN_STARTED", ...}``) or ``ag_ui.core``
    events (turned into their wire form by :func:`agui_codecs.events.event_to_wire`). The
    end-of-stream checks run, so a sequence that stops mid-run gets
    ``agui/hygiene/no-terminal-event``.
    """
    checker = AguiChecker(source)
    for event in events:
        checker.feed_payload(event if isinstance(event, Mapping) else event_to_wire(event))
    checker.finish()
    return checker.report
