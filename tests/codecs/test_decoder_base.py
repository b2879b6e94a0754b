"""``StreamDecoder`` (``agui_codecs.protocols.base``) tested directly, with a dummy decoder.

The error policy of the module docstring: a malformed upstream ends the run with the typed
error's code; a bug in a subclass (any other exception out of ``handle``, ``finalize``,
``begins_next_run``) ends it with ``INTERNAL_DECODER_ERROR`` and a fixed message, logged with
its traceback on the ``agui_codecs`` logger and counted in ``INTERNAL_ERRORS``; everything open
is closed first; nothing raises out of ``feed`` / ``close`` but caller misuse. The dummy's
payloads are JSON lines ``{"do": <action>, ...}``.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import pytest
from decoder_checks import assert_legal_run, wire

from agui_codecs import (
    InternalDecoderError,
    LocalProtocolError,
    MalformedUpstreamError,
    RemoteProtocolError,
)
from agui_codecs.builder import RunBuilder
from agui_codecs.framing import DONE, Frame
from agui_codecs.protocols.base import INTERNAL_ERRORS, StreamDecoder, upstream_error


class Dummy(StreamDecoder):
    """``{"do": "text", "v": ...}``, ``{"do": "tool"}``, ``{"do": "finish"}``,
    ``{"do": "malformed"}``, ``{"do": "bug", "exc": <name>}``; ``[DONE]`` finishes."""

    name: ClassVar[str] = "dummy"
    provider: ClassVar[str] = "dummy"
    finalize_bug = False
    forget_finalize = False

    def handle(self, frame: Frame) -> None:
        if frame.data is DONE:
            self.run.finish(finish_reason="stop")
            return
        payload = self.obj(frame.data, "dummy payload")
        self.run.start(upstream_id="up")
        action = payload["do"]  # a KeyError here is a bug of the dummy, by design
        if action == "text":
            self.run.text(payload["v"])
        elif action == "tool":
            self.run.tool_start("k", "f", "call-1")
            self.run.tool_args("k", '{"a"')
        elif action == "finish":
            self.run.finish(finish_reason="stop")
        elif action == "malformed":
            raise MalformedUpstreamError("the dummy payload says it is malformed")
        elif action == "bug":
            raise BUGS[payload["exc"]]

    def finalize(self) -> None:
        if self.finalize_bug:
            raise RuntimeError("finalize exploded")
        if not self.forget_finalize:
            self.run.fail("UPSTREAM_TRUNCATED", "dummy stream cut")


BUGS: dict[str, Exception] = {
    "KeyError": KeyError("secret-key"),
    "TypeError": TypeError("NoneType is not subscriptable"),
    "AttributeError": AttributeError("'str' object has no attribute 'get'"),
    "ValueError": ValueError("bad value"),
    "IndexError": IndexError("list index out of range"),
    "ZeroDivisionError": ZeroDivisionError("division by zero"),
    "RecursionError": RecursionError("maximum recursion depth exceeded"),
    "LocalProtocolError": LocalProtocolError("RunBuilder misused"),
}


def lines(*payloads: str) -> bytes:
    return b"".join(p.encode() + b"\n" for p in payloads)


def run(decoder: StreamDecoder, body: bytes) -> list[dict[str, Any]]:
    return wire(decoder.feed(body) + decoder.close())


@pytest.fixture
def internal_count() -> Any:
    start = INTERNAL_ERRORS["dummy"]
    return lambda: INTERNAL_ERRORS["dummy"] - start


# -- a bug of ours is not the upstream's fault ----------------------------------------------------
@pytest.mark.parametrize("exc", sorted(BUGS))
def test_a_bug_in_handle_ends_the_run_as_an_internal_error_not_the_upstreams_fault(
    exc: str, caplog: pytest.LogCaptureFixture, internal_count: Any
) -> None:
    decoder = Dummy()
    body = lines('{"do": "text", "v": "Hel"}', f'{{"do": "bug", "exc": "{exc}"}}')
    with caplog.at_level(logging.ERROR, logger="agui_codecs"):
        evs = run(decoder, body)
    assert [e["type"] for e in evs] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",  # what came before the bug is kept
        "TEXT_MESSAGE_END",  # what was open is closed first
        "RUN_ERROR",
    ]
    assert evs[-1]["code"] == "INTERNAL_DECODER_ERROR"
    assert evs[-1]["message"] == "internal decoder error"  # no class name, no detail
    assert isinstance(decoder.error, InternalDecoderError)
    assert not isinstance(decoder.error, RemoteProtocolError)
    assert decoder.error.decoder == "dummy"
    assert decoder.error.__cause__ is BUGS[exc]
    assert internal_count() == 1
    [record] = [r for r in caplog.records if r.name == "agui_codecs"]
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None and record.exc_info[1] is BUGS[exc]  # the traceback
    assert_legal_run(evs)


def test_a_keyerror_on_a_missing_field_is_internal_too() -> None:
    decoder = Dummy()
    evs = run(decoder, lines('{"no": "action"}'))  # the dummy reads payload["do"] blindly
    assert evs[-1]["code"] == "INTERNAL_DECODER_ERROR"
    assert isinstance(decoder.error, InternalDecoderError)
    assert isinstance(decoder.error.__cause__, KeyError)


def test_an_open_tool_call_is_closed_incomplete_before_the_internal_error() -> None:
    evs = run(Dummy(), lines('{"do": "tool"}', '{"do": "bug", "exc": "TypeError"}'))
    assert [e["type"] for e in evs][-3:] == ["TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_ERROR"]
    assert evs[-2]["metadata"] == {"incomplete": True}


def test_input_after_an_internal_error_is_trailing() -> None:
    decoder = Dummy()
    evs = decoder.feed(lines('{"do": "bug", "exc": "ValueError"}', '{"do": "text", "v": "x"}'))
    assert decoder.ended and decoder.trailing == 1
    assert decoder.feed(lines('{"do": "finish"}')) == []
    assert decoder.trailing == 2
    assert decoder.close() == []
    assert wire(evs)[-1]["code"] == "INTERNAL_DECODER_ERROR"


def test_a_bug_in_finalize_is_internal(internal_count: Any) -> None:
    decoder = Dummy()
    decoder.finalize_bug = True
    evs = run(decoder, lines('{"do": "text", "v": "cut"}'))
    assert evs[-1]["code"] == "INTERNAL_DECODER_ERROR"
    assert isinstance(decoder.error, InternalDecoderError)
    assert internal_count() == 1


class MultiDummy(Dummy):
    multi_run = True
    name: ClassVar[str] = "dummy"

    def begins_next_run(self, frame: Frame) -> bool:
        if frame.data == {"do": "next-bug"}:
            raise AttributeError("begins_next_run exploded")
        if frame.data == {"do": "next"}:
            self.run.next_run()
            return True
        return False


def test_a_bug_in_begins_next_run_stops_the_stream_as_internal(internal_count: Any) -> None:
    decoder = MultiDummy()
    evs = run(decoder, lines('{"do": "finish"}', '{"do": "next-bug"}', '{"do": "next"}'))
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_FINISHED"]  # that run had ended
    assert isinstance(decoder.error, InternalDecoderError)
    assert internal_count() == 1
    assert decoder.trailing == 2


def test_a_multi_run_decoder_begins_the_next_run_on_its_signal() -> None:
    decoder = MultiDummy()
    evs = run(decoder, lines('{"do": "finish"}', '{"do": "next"}', '{"do": "finish"}'))
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_FINISHED"] * 2
    assert evs[2]["runId"] == f"{evs[0]['runId']}-2"
    assert decoder.error is None
    assert_legal_run(evs)


class BrokenBuilder(RunBuilder):
    def close_all(self) -> None:
        raise RuntimeError("closing exploded")


def test_when_closing_fails_too_the_run_still_ends_with_one_run_error() -> None:
    decoder = Dummy()
    decoder.run = BrokenBuilder(provider="dummy")
    evs = run(decoder, lines('{"do": "text", "v": "a"}', '{"do": "bug", "exc": "KeyError"}'))
    assert evs[-1]["type"] == "RUN_ERROR" and evs[-1]["code"] == "INTERNAL_DECODER_ERROR"
    assert [e["type"] for e in evs].count("RUN_ERROR") == 1
    assert isinstance(decoder.error, InternalDecoderError)


# -- the upstream's faults ------------------------------------------------------------------------
def test_a_malformed_payload_is_the_upstreams_fault_with_its_detail(
    caplog: pytest.LogCaptureFixture, internal_count: Any
) -> None:
    decoder = Dummy()
    with caplog.at_level(logging.ERROR, logger="agui_codecs"):
        evs = run(decoder, lines('{"do": "text", "v": "a"}', '{"do": "malformed"}'))
    assert evs[-1]["code"] == "UPSTREAM_MALFORMED"
    assert evs[-1]["message"] == "the dummy payload says it is malformed"
    assert isinstance(decoder.error, MalformedUpstreamError)
    assert internal_count() == 0 and caplog.records == []


def test_bad_json_is_malformed_after_the_good_payloads() -> None:
    decoder = Dummy()
    evs = run(decoder, lines('{"do": "text", "v": "kept"}', "{not json"))
    assert [e["type"] for e in evs][2:] == ["TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_ERROR"]
    assert evs[-1]["code"] == "UPSTREAM_MALFORMED"


def test_a_payload_that_is_not_an_object_is_malformed_through_obj() -> None:
    decoder = Dummy()
    assert run(decoder, lines("[1, 2]"))[-1]["code"] == "UPSTREAM_MALFORMED"
    assert isinstance(decoder.error, MalformedUpstreamError)


@pytest.mark.parametrize("body", [b"", b"  \n\r\n", b": comment\n\n"])
def test_an_empty_body_is_upstream_empty(body: bytes) -> None:
    decoder = Dummy()
    evs = run(decoder, body)
    assert [e["type"] for e in evs] == ["RUN_STARTED", "RUN_ERROR"]
    assert evs[-1]["code"] == "UPSTREAM_EMPTY"
    assert isinstance(decoder.error, MalformedUpstreamError)


def test_eof_before_the_end_is_truncated_and_an_error_of_the_input() -> None:
    decoder = Dummy()
    evs = run(decoder, lines('{"do": "text", "v": "cut"}'))
    assert evs[-1]["code"] == "UPSTREAM_TRUNCATED"
    assert isinstance(decoder.error, RemoteProtocolError)
    assert decoder.error.code == "UPSTREAM_TRUNCATED"


def test_a_subclass_that_forgets_to_end_the_run_at_eof_is_truncated_by_the_base() -> None:
    decoder = Dummy()
    decoder.forget_finalize = True
    evs = run(decoder, lines('{"do": "text", "v": "cut"}'))
    assert evs[-1]["code"] == "UPSTREAM_TRUNCATED"
    assert_legal_run(evs)


def test_payloads_after_the_end_are_counted_as_trailing_in_any_feed() -> None:
    decoder = Dummy()
    evs = decoder.feed(lines('{"do": "finish"}', '{"do": "text", "v": "late"}'))
    assert decoder.trailing == 1
    assert decoder.feed(lines('{"do": "text", "v": "later"}') + b"not json\n") == []
    assert decoder.trailing == 3
    assert decoder.close() == []
    assert [e["type"] for e in wire(evs)] == ["RUN_STARTED", "RUN_FINISHED"]
    assert decoder.error is None


def test_fail_from_the_caller_closes_and_ends_with_its_code() -> None:
    decoder = Dummy()
    evs = decoder.feed(lines('{"do": "text", "v": "a"}'))
    decoder.fail("UPSTREAM_TIMEOUT", "upstream timed out")
    evs += decoder.close()
    assert [e["type"] for e in wire(evs)][-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert wire(evs)[-1]["code"] == "UPSTREAM_TIMEOUT"
    assert decoder.error is None  # not a fault of the input: the caller knows why


# -- caller misuse raises -------------------------------------------------------------------------
def test_feed_after_close_is_the_callers_bug() -> None:
    decoder = Dummy()
    decoder.close()
    with pytest.raises(LocalProtocolError):
        decoder.feed(b"{}\n")
    assert decoder.close() == []


def test_feed_of_text_instead_of_bytes_is_the_callers_bug() -> None:
    with pytest.raises(LocalProtocolError):
        Dummy().feed("{}\n")  # type: ignore[arg-type]


# -- helpers --------------------------------------------------------------------------------------
def test_obj_and_arr_accept_their_shape_and_raise_malformed_otherwise() -> None:
    assert StreamDecoder.obj({"a": 1}, "x") == {"a": 1}
    assert StreamDecoder.arr([1], "x") == [1]
    assert StreamDecoder.arr(None, "x") == []
    for bad in ([], "s", 1, None):
        with pytest.raises(MalformedUpstreamError, match="x is not a JSON object"):
            StreamDecoder.obj(bad, "x")
    for bad in ({}, "s", 1, True):
        with pytest.raises(MalformedUpstreamError, match="x is not a JSON array"):
            StreamDecoder.arr(bad, "x")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ({"code": "invalid_api_key", "message": "bad key"}, ("invalid_api_key", "bad key")),
        ({"type": "overloaded_error"}, ("overloaded_error", "upstream reported overloaded_error")),
        ({"code": 429, "message": "slow down"}, ("HTTP_429", "slow down")),
        ({"code": True, "message": "m"}, ("UPSTREAM_ERROR", "m")),
        ({"code": "", "type": ""}, ("UPSTREAM_ERROR", "upstream reported UPSTREAM_ERROR")),
        ("plain text", ("UPSTREAM_ERROR", "plain text")),
        (None, ("UPSTREAM_ERROR", "upstream reported an error")),
    ],
)
def test_upstream_error_reads_code_and_message(error: Any, expected: tuple[str, str]) -> None:
    assert upstream_error(error) == expected
