"""A small AWS event-stream *encoder* for tests, and botocore's reading of a body (``application/vnd.amazon.eventstream``).

Written from the Smithy "Amazon Event Stream Specification" (the binary layout: total length,
headers length, prelude CRC32, headers, payload, message CRC32; header value type 7 = UTF-8
string with a 2-byte length), independently of the codec's framing, so the decoder can be fed
bodies built here; ``tests/codecs/test_bedrock_eventstream.py`` proves the bytes are what
botocore's own parser reads.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from botocore.eventstream import EventStreamBuffer

__all__ = ["MODEL_STREAM_ERROR", "botocore_frames", "encode_message", "event", "exception"]

# vercel/ai packages/amazon-bedrock/src/__fixtures__/model-stream-error-exception.eventstream.base64.txt
# (commit 5f264fa2efefb27a58459413d943af08b21cf01a, Apache-2.0): one exception message.
MODEL_STREAM_ERROR = base64.b64decode(
    "AAAA3QAAAGfHkZB6DTptZXNzYWdlLXR5cGUHAAlleGNlcHRpb24POmV4Y2VwdGlvbi10eXBlBwAZbW9kZWxTdHJlYW1F"
    "cnJvckV4Y2VwdGlvbg06Y29udGVudC10eXBlBwAQYXBwbGljYXRpb24vanNvbnsibWVzc2FnZSI6Ik1vZGVsIFN0cmVh"
    "bSBFcnJvciIsIm9yaWdpbmFsU3RhdHVzQ29kZSI6NTAwLCJvcmlnaW5hbE1lc3NhZ2UiOiJUaGUgbW9kZWwgc3RyZWFt"
    "IGZhaWxlZC4ifVczQxM="
)


def botocore_frames(body: bytes) -> list[dict[str, object]]:
    """What boto3 reads: ``{<:event-type or :exception-type>: <JSON payload>}`` per message."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    out = []
    for message in buffer:
        kind = message.headers.get(":event-type") or message.headers.get(":exception-type")
        out.append({kind: json.loads(message.payload) if message.payload else {}})
    return out


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return (
        struct.pack(">B", len(raw_name))
        + raw_name
        + b"\x07"
        + struct.pack(">H", len(raw_value))
        + raw_value
    )


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` and ``payload``."""
    raw_headers = b"".join(_header(k, v) for k, v in headers.items())
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + raw_headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(kind: str, payload: Any) -> bytes:
    """An ``event`` message of ``:event-type`` ``kind`` with a JSON payload."""
    headers = {":event-type": kind, ":content-type": "application/json", ":message-type": "event"}
    return encode_message(headers, json.dumps(payload).encode())


def exception(kind: str, payload: Any) -> bytes:
    """An ``exception`` message of ``:exception-type`` ``kind`` with a JSON payload."""
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_message(headers, json.dumps(payload).encode())
