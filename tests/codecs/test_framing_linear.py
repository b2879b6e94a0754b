"""Every framing is linear in its input, however it is chunked (issue 12, item 4).

A 4 MiB line arriving in 128-byte reads (32,768 ``feed()`` calls) was quadratic in JSON-lines
framing: each read searched the whole held line for its LF again (9.6 s of CPU on the event
loop). No wall clock here (``bench/framing_linear.py`` times it): the tests count the bytes
each framer *scans*, which a quadratic framer multiplies by the number of reads. The count is
read from the framer's own cursors, so a framer that rescans shows it:

* JSON lines: every ``bytearray.find`` on the held buffer is counted by a ``bytearray``
  subclass put in the framer's place (bytes from the search start to the end);
* JSON array and SSE: the bytes between the framer's scan cursor and the end of its buffer at
  each ``feed()`` (what its scan loop walks).

Bound: at most twice the input (each byte scanned once, plus the lines' ends), where a
quadratic framer scans about ``size * reads / 2``.
"""

from __future__ import annotations

from typing import Any, SupportsIndex

import pytest

from agui_codecs.framing import FrameDecoder
from agui_codecs.sse import SSEDecoder

SIZE = 4 * 1024 * 1024
READ = 128


class CountingBuffer(bytearray):
    """A bytearray that counts the bytes every ``find`` may look at."""

    scanned = 0

    def find(self, sub: Any, start: SupportsIndex | None = None, *args: Any) -> int:
        begin = 0 if start is None else int(start)
        CountingBuffer.scanned += max(0, len(self) - begin)
        return super().find(sub, start, *args)


def chunks(body: bytes) -> list[bytes]:
    return [body[i : i + READ] for i in range(0, len(body), READ)]


def test_a_4_mib_json_line_in_128_byte_reads_is_scanned_about_once() -> None:
    body = b'{"x": "' + b"a" * SIZE + b'"}\n{"y": 1}\n'
    framer = FrameDecoder("jsonl", max_event_size=2 * SIZE)
    framer._pending = CountingBuffer()
    CountingBuffer.scanned = 0
    frames = [f for c in chunks(body) for f in framer.feed(c)] + framer.close()
    assert [f.error for f in frames] == [None, None] and frames[1].data == {"y": 1}
    assert CountingBuffer.scanned <= 2 * len(body), CountingBuffer.scanned


def test_a_4_mib_json_array_element_in_128_byte_reads_is_scanned_about_once() -> None:
    body = b'[{"x": "' + b"a" * SIZE + b'"}, {"y": 1}]'
    framer = FrameDecoder("json", max_event_size=2 * SIZE)
    scanned = 0
    frames = []
    for c in chunks(body):
        scanned += len(framer._pending) + len(c) - framer._scan
        frames += framer.feed(c)
    frames += framer.close()
    assert [f.error for f in frames] == [None, None] and frames[1].data == {"y": 1}
    assert scanned <= 2 * len(body), scanned


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"])
def test_a_4_mib_sse_line_in_128_byte_reads_is_scanned_about_once(line_end: bytes) -> None:
    body = b"data: " + b"a" * SIZE + line_end + line_end + b"data: 2" + line_end * 2
    decoder = SSEDecoder(max_event_size=2 * SIZE)
    scanned = 0
    events = []
    for c in chunks(body):
        scanned += len(decoder._buf) + len(c) - decoder._scan
        events += decoder.feed(c)
    assert [e.data for e in events] == ["a" * SIZE, "2"]
    assert scanned <= 2 * len(body), scanned


def test_the_count_sees_a_rescanning_framer() -> None:
    # The oracle can fail: the count of a framer that searches the whole held line on every
    # read (as JSON lines did before issue 12) is far above the bound.
    buffer = CountingBuffer()
    CountingBuffer.scanned = 0
    for c in chunks(b"a" * (SIZE // 16)):
        buffer += c
        buffer.find(b"\n", 0)
    assert CountingBuffer.scanned > 100 * (SIZE // 16)
