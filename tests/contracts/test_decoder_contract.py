"""The decoder contract, run over every registered decoder (built-ins and entry-point plugins).

What ``agui_codecs.protocols.base`` promises of every decoder, checked on the recorded corpus of
its family (``tests/corpus``; map in ``decoder_runs.DECODER_FAMILIES``), in the way
``test_store_contract.py`` runs one suite over every store:

* the same events *and* the same error (class and code) whether the input is fed whole, one
  byte at a time or split anywhere (hypothesis);
* the decoded run is legal for ``@ag-ui/client`` 1.0.0 per the conformance kit
  (``conformance.check_events``), and so are both encoders' outputs for ``@ag-ui/client`` and
  ``ai`` 7 / 6 / 5 (``conformance.check_bytes``); the kit's verdicts are proven against the
  real clients by ``tests/conformance/test_differential.py``, and the real clients judge the
  same outputs in ``test_decoder_clients.py``;
* trailing garbage after the run's end is counted in ``decoder.trailing`` and changes nothing;
* an empty body ends with RUN_ERROR ``UPSTREAM_EMPTY``.

Truncation is in ``test_decoder_truncation.py``, random input in ``test_decoder_fuzz.py``.
A new decoder gets all of it by registering (and, for the corpus checks, by adding its family).
"""

from __future__ import annotations

from pathlib import Path

import eventstream
import pytest
from corpus import require_corpus
from decoder_checks import assert_legal_run
from decoder_runs import (
    DECODER_FAMILIES,
    corpus_cases,
    decode,
    decoder_names,
    error_key,
    translate,
    wire,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import MalformedUpstreamError, get_decoder
from agui_codecs.registry import BUILTIN_PROTOCOLS, protocols
from agui_codecs.transitions import AGUI_TERMINAL
from conformance import check_bytes

NAMES = decoder_names()
CASES = [pytest.param(name, path, id=f"{name}/{path.name}") for name, path in corpus_cases()]

KNOWN_WARNINGS: dict[str, frozenset[str]] = {
    # The agui decoder relays the runtime's own ids: a parentMessageId naming a message the
    # runtime never streamed, a tool call id reused as the result message id (.NET), a call
    # streamed with no arguments (pydantic-ai). Legal for the client; not ours to rewrite.
    # ag-ui-langgraph closes the run with its own internal runId (corpus
    # agui/langgraph-*.jsonl), which the decoder relays: accepted by the 1.0 client, fatal
    # under AG-UI 1.1 (agui/lifecycle/run-id-mismatch, issue 17). The LlamaIndex AG-UI
    # router stamps events in seconds and its MESSAGES_SNAPSHOT re-ids the streamed answer
    # (corpus agui/llamaindex-*.jsonl): silent-loss warnings of the runtime, relayed.
    "agui": frozenset(
        {
            "agui/hygiene/timestamp-in-seconds",
            "agui/hygiene/snapshot-renames-message",
            "agui/hygiene/parent-message-unknown",
            "agui/hygiene/id-shared-across-kinds",
            "agui/hygiene/tool-call-without-args",
            "agui/lifecycle/run-id-mismatch",
        }
    ),
}
"""Kit warnings a decoded corpus run may carry, per decoder (everything else must be clean)."""

ERROR_TAIL = "ai-sdk/stream/chunks-after-error"
"""The AI SDK encoder ends a failed run with ``error`` then ``finish`` (ARCHITECTURE.md
"Encoders"): the client ignores the ``finish``, which the kit reports as this warning."""

_GARBAGE_EVENT = eventstream.event("garbage", {"garbage": True})
GARBAGE = {  # per framing: (separator, a well-formed payload of no protocol, bytes not JSON)
    "sse": (b"\n\n", b'data: {"garbage": true}\n\n', b"data: ][ not json\n\n"),
    "jsonl": (b"\n", b'{"garbage": true}\n', b"][ not json\n"),
    "json": (b"", b'[{"garbage": true}]', b"]["),
    # AWS event-stream binary: a whole message of an unknown type, then one whose CRC is wrong
    "eventstream": (b"", _GARBAGE_EVENT, _GARBAGE_EVENT[:-1] + bytes([_GARBAGE_EVENT[-1] ^ 1])),
}
"""Bytes after a body's end, per framing. The separator first delimits the body's last payload
(a body may end without one); after a JSON array, anything but whitespace is malformed."""


def _framing(data: bytes) -> str:
    if data[:1] == b"\x00":  # an event-stream prelude (a message under 16 MiB)
        return "eventstream"
    head = data.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1]
    return "jsonl" if head == b"{" else "json" if head == b"[" else "sse"


# -- the registry -------------------------------------------------------------------------------
def test_every_built_in_decoder_has_a_corpus_family() -> None:
    built_in = {spec.name for spec in BUILTIN_PROTOCOLS}
    assert built_in <= set(DECODER_FAMILIES), sorted(built_in - set(DECODER_FAMILIES))
    for family in DECODER_FAMILIES.values():
        require_corpus(family)  # the corpus travels with the repository: never empty


# -- input-free ---------------------------------------------------------------------------------
def _reads_sse(name: str) -> bool:
    """True unless the registry builds ``name``'s decoder with a framing other than SSE/auto."""
    spec = protocols().get(name)
    return spec is None or spec.framing in ("auto", "sse")


_EMPTY_BODIES = [(name, body) for name in NAMES for body in (b"", b"\n\r\n  \t")] + [
    (name, b": keep-alive\n\n: ping\n\n") for name in NAMES if _reads_sse(name)
]
"""Bodies with no payload; SSE comments (keep-alives) carry none only where SSE is read."""


@pytest.mark.parametrize(("name", "body"), _EMPTY_BODIES)
def test_an_empty_body_ends_with_upstream_empty(name: str, body: bytes) -> None:
    events, decoder = decode(name, body)
    assert [e["type"] for e in wire(events)] == ["RUN_STARTED", "RUN_ERROR"]
    assert wire(events)[-1]["code"] == "UPSTREAM_EMPTY"
    assert isinstance(decoder.error, MalformedUpstreamError)
    assert decoder.error.code == "UPSTREAM_EMPTY"
    assert_legal_run(events)


# -- every corpus file --------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "path"), CASES)
def test_whole_and_byte_by_byte_give_the_same_events_and_error(name: str, path: Path) -> None:
    data = path.read_bytes()
    whole = translate(name, path)
    events, decoder = decode(name, data, range(1, len(data)))
    assert wire(events) == wire(whole.events)
    assert error_key(decoder) == whole.error


@pytest.mark.parametrize(("name", "path"), CASES)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_splits_give_the_same_events_and_error(
    name: str, path: Path, data: st.DataObject
) -> None:
    body = path.read_bytes()
    splits = data.draw(st.lists(st.integers(1, max(1, len(body) - 1)), max_size=40))
    whole = translate(name, path)
    events, decoder = decode(name, body, splits)
    assert wire(events) == wire(whole.events)
    assert error_key(decoder) == whole.error


@pytest.mark.parametrize(("name", "path"), CASES)
def test_the_decoded_run_and_both_outputs_are_legal_per_the_kit(name: str, path: Path) -> None:
    run = translate(name, path)
    allowed = KNOWN_WARNINGS.get(name, frozenset())
    assert_legal_run(run.events, allowed_warnings=allowed)
    assert wire(run.events)[-1]["type"] in AGUI_TERMINAL
    agui = check_bytes(run.agui, protocol="agui")
    assert agui.errors == [], [v.to_json() for v in agui.errors]
    assert {v.rule_id for v in agui.warnings} <= allowed
    failed = wire(run.events)[-1]["type"] == "RUN_ERROR"
    for major in (5, 6, 7):
        report = check_bytes(run.ai_sdk, protocol="ai-sdk", major=major)
        assert report.errors == [], (major, [v.to_json() for v in report.errors])
        assert {v.rule_id for v in report.warnings} <= ({ERROR_TAIL} if failed else set())


@pytest.mark.parametrize(("name", "path"), CASES)
def test_a_run_error_comes_with_its_typed_error_or_from_the_upstream(name: str, path: Path) -> None:
    """Every RUN_ERROR names a code; a decoder fault (``decoder.error``) is the code of the
    last RUN_ERROR, and a recording is never our fault (no ``INTERNAL_DECODER_ERROR``)."""
    run = translate(name, path)
    last = wire(run.events)[-1]
    if run.error is not None:
        assert last["type"] == "RUN_ERROR" and last["code"] == run.error[1]
    assert run.error is None or run.error[0] != "InternalDecoderError"


@pytest.mark.parametrize(("name", "path"), CASES)
def test_trailing_garbage_after_the_end_is_counted_and_changes_nothing(
    name: str, path: Path
) -> None:
    data = path.read_bytes()
    separator, payload, malformed = GARBAGE[_framing(data)]
    whole = translate(name, path)
    decoder = get_decoder(name)
    events = decoder.feed(data + separator)
    if decoder.run.ended:  # the protocol's own final event came: anything after it is trailing
        before = decoder.trailing
        events += decoder.feed(payload) + decoder.feed(malformed) + decoder.close()
        assert wire(events) == wire(whole.events)
        assert error_key(decoder) == whole.error
        # Two payloads; after a JSON array the framing fails once and then reads nothing.
        assert decoder.trailing - before == (1 if _framing(data) == "json" else 2)
    else:
        # This protocol ends a run at EOF (Gemini; JSON lines without [DONE]): bytes after the
        # body are part of it, and a malformed tail is a typed error that keeps what came first.
        fed = len(events)
        events += decoder.feed(malformed) + decoder.close()
        assert wire(events)[:fed] == wire(whole.events)[:fed]
        assert wire(events)[-1]["type"] == "RUN_ERROR"
        assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
        assert isinstance(decoder.error, MalformedUpstreamError)
        assert_legal_run(events, allowed_warnings=KNOWN_WARNINGS.get(name, frozenset()))
