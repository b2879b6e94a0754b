"""Split invariance: for any bytes and any split into ``feed()`` calls, every decoder and every
framer gives the same output (events or frames) and the same error as one ``feed()``.

TCP delivers a body in packets of any size, so nothing a client sees may depend on where they
fall: the WHATWG event-stream algorithm (HTML §9.2.6) is defined on the byte stream, "a CR
followed by a LF is one line end" included when the two arrive in separate reads
(``docs/protocols.md`` §1.1). The inputs are :mod:`fuzz_inputs`' hostile bodies (mutated
corpus files of the decoder's family and of the others, generated tokens, hostile payloads),
fed whole and in random splits (one byte at a time included), to:

* every registered decoder (``decoder_runs.decoder_names``: built-ins and plugins) with its
  spec's framing and with each framing forced (``auto``, ``sse``, ``jsonl``, ``json``);
  compared: the events' wire form, ``decoder.error`` (class, code, message), ``trailing``;
* :class:`~agui_codecs.framing.FrameDecoder` in every framing; compared: the frames (data,
  event, error class, code, message);
* :class:`~agui_codecs.sse.SSEDecoder`; compared: the events, ``last_event_id``, ``retry``,
  ``comments`` and the error raised (class, message).

``GATEWAY_TEST_FUZZ_EXAMPLES`` raises the number of examples (default 40 per case).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from decoder_runs import DECODER_FAMILIES, decoder_names, wire
from fuzz_inputs import bodies, feed_split, splits
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agui_codecs import get_decoder
from agui_codecs.framing import FrameDecoder
from agui_codecs.sse import SSEDecoder, SSEEvent

NAMES = decoder_names()
EXAMPLES = int(os.environ.get("GATEWAY_TEST_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FRAMINGS = ("auto", "sse", "jsonl", "json")


def _error(error: BaseException | None) -> tuple[str, str | None, str] | None:
    if error is None:
        return None
    return (type(error).__name__, getattr(error, "code", None), str(error))


def decoder_outcome(
    name: str, body: bytes, cuts: list[int], options: dict[str, Any]
) -> tuple[Any, ...]:
    """What one decoder gave for ``body`` cut at ``cuts``: events, error, trailing, escape."""
    decoder = get_decoder(name, **options)
    events, escaped = feed_split(decoder.feed, decoder.close, body, cuts)
    return (wire(events), _error(decoder.error), decoder.trailing, _error(escaped))


def frame_outcome(framing: str, body: bytes, cuts: list[int], limit: int) -> tuple[Any, ...]:
    framer = FrameDecoder(framing, max_event_size=limit)  # type: ignore[arg-type]
    frames, escaped = feed_split(framer.feed, framer.close, body, cuts)
    return (
        [(repr(f.data), f.event, _error(f.error)) for f in frames],
        _error(escaped),
    )


def sse_outcome(body: bytes, cuts: list[int], limit: int) -> tuple[Any, ...]:
    decoder = SSEDecoder(max_event_size=limit)
    events, escaped = feed_split(decoder.feed, decoder.close, body, cuts)
    return (events, decoder.last_event_id, decoder.retry, decoder.comments, _error(escaped))


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.data())
def test_every_decoder_gives_the_same_events_and_error_for_any_split(
    name: str, data: st.DataObject
) -> None:
    body = data.draw(bodies(DECODER_FAMILIES.get(name)), label="body")
    framing = data.draw(st.sampled_from([None, *FRAMINGS]), label="framing")
    options: dict[str, Any] = {} if framing is None else {"framing": framing}
    if data.draw(st.booleans(), label="small limit"):
        options["max_event_size"] = data.draw(st.integers(16, 2048), label="max_event_size")
    cuts = data.draw(splits(body), label="cuts")
    whole = decoder_outcome(name, body, [], options)
    assert whole[3] is None, whole[3]  # nothing escapes feed()/close() (test_decoder_fuzz)
    assert decoder_outcome(name, body, cuts, options) == whole


@pytest.mark.parametrize("framing", FRAMINGS)
@FUZZ
@given(data=st.data())
def test_every_framing_gives_the_same_frames_for_any_split(
    framing: str, data: st.DataObject
) -> None:
    family = data.draw(st.sampled_from([None, *sorted(set(DECODER_FAMILIES.values()))]))
    body = data.draw(bodies(family), label="body")
    limit = data.draw(st.sampled_from([64, 1024, 8 * 1024 * 1024]), label="max_event_size")
    cuts = data.draw(splits(body), label="cuts")
    assert frame_outcome(framing, body, cuts, limit) == frame_outcome(framing, body, [], limit)


@FUZZ
@given(data=st.data())
def test_the_sse_decoder_gives_the_same_events_for_any_split(data: st.DataObject) -> None:
    family = data.draw(st.sampled_from([None, *sorted(set(DECODER_FAMILIES.values()))]))
    body = data.draw(bodies(family), label="body")
    limit = data.draw(st.sampled_from([64, 1024, 8 * 1024 * 1024]), label="max_event_size")
    cuts = data.draw(splits(body), label="cuts")
    assert sse_outcome(body, cuts, limit) == sse_outcome(body, [], limit)


# -- regressions: inputs the property found (each failed before its fix) ------------------


def test_crlf_that_arrived_whole_does_not_swallow_the_next_feeds_blank_line() -> None:
    # WHATWG §9.2.6: "data: 1" CRLF, then LF (the blank line) + "data: 2" LF LF: two events.
    decoder = SSEDecoder()
    events = decoder.feed(b"data: 1\r\n") + decoder.feed(b"\ndata: 2\n\n")
    assert events == [SSEEvent("1"), SSEEvent("2")]


def test_crlf_boundary_gives_the_same_run_through_a_decoder_in_one_or_two_feeds() -> None:
    body = (
        b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
        b'"delta":{"role":"assistant","content":"hi"}}]}\r\n'
        b'\ndata: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
        b'"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    )
    cut = body.index(b"\r\n") + 2
    whole = decoder_outcome("openai-chat", body, [], {})
    assert whole[1] is None and whole[0][-1]["type"] == "RUN_FINISHED"
    assert decoder_outcome("openai-chat", body, [cut], {}) == whole


@pytest.mark.parametrize("framing", ["sse", "jsonl", "json"])
def test_a_long_payload_fails_the_limit_whole_or_in_pieces(framing: str) -> None:
    payload = b'{"x": "' + b"a" * 5000 + b'"}'
    body = {
        "sse": b"data: " + payload + b"\n\n",
        "jsonl": payload + b"\n",
        "json": b"[" + payload + b"]",
    }[framing]
    whole = frame_outcome(framing, body, [], 1024)
    assert whole[0][-1][2] is not None and whole[0][-1][2][1] == "UPSTREAM_EVENT_TOO_LARGE"
    assert frame_outcome(framing, body, list(range(128, len(body), 128)), 1024) == whole


def test_a_value_right_after_another_stays_one_json_array_element_whatever_the_chunking() -> None:
    # "[1aaa…{}": the scalar's element must not restart at "{" (the held tail was measured
    # against max_event_size at feed ends only, so the verdict depended on the chunking).
    body = b"[1" + b"a" * 3000 + b"{}"
    whole = frame_outcome("json", body, [], 1024)
    assert whole[0][-1][2] is not None and whole[0][-1][2][1] == "UPSTREAM_EVENT_TOO_LARGE"
    assert frame_outcome("json", body, [2000], 1024) == whole


def test_an_element_too_large_before_a_bad_bracket_is_too_large_whatever_the_chunking() -> None:
    # Found by tests/fuzz/run.py: whole, the loop reached the stray "}" first (MALFORMED);
    # split, the held tail failed the size check at a read's end first (TOO_LARGE).
    body = b'[{"x": "' + b"a" * 2000 + b'"}}]'
    whole = frame_outcome("json", body, [], 1024)
    assert whole[0][-1][2] is not None and whole[0][-1][2][1] == "UPSTREAM_EVENT_TOO_LARGE"
    assert frame_outcome("json", body, [1500], 1024) == whole


def test_a_string_before_the_json_arrays_bracket_is_malformed_whatever_the_chunking() -> None:
    # Found by tests/fuzz/run.py (langgraph body, framing forced to json): a long string
    # before "[" was held as an element, so a read's end judged it too large first.
    body = b'"' + b"a" * 3000 + b'" [{"x": 1}]'
    whole = frame_outcome("json", body, [], 1024)
    assert whole[0][-1][2] is not None and whole[0][-1][2][1] == "UPSTREAM_MALFORMED"
    assert frame_outcome("json", body, [1500], 1024) == whole
