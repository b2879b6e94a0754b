"""Decoder contract: an upstream cut short, at every frame boundary of every corpus file.

A body that stops right after any payload (SSE event, JSON line, array element) must still
give a run the real clients accept: the events decoded before the cut exactly as in the whole
run, then whatever was open closed, then one terminal event, which is RUN_ERROR
``UPSTREAM_TRUNCATED`` (``UPSTREAM_EMPTY`` before the run began), with the same typed error
in ``decoder.error``. Two exceptions, both the protocol's own: a cut after the run's final
event changes nothing, and a protocol that ends runs at EOF (Gemini, an OpenAI JSON-lines dump,
an AI SDK stream after ``finish``) finishes normally once its finish marker has come, and is
never reported truncated at a later cut.

The cuts are made by closing a copy of one decoder fed payload by payload
(``decoder_runs.cuts``); a sample is checked against fresh decoders of the prefix. The real
clients judge an early, a middle and a late cut of each file in ``test_decoder_clients.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from decoder_checks import kit_report
from decoder_runs import corpus_cases, cuts, decode, error_key, translate, wire

from agui_codecs import RemoteProtocolError

CASES = [pytest.param(name, path, id=f"{name}/{path.name}") for name, path in corpus_cases()]

TRUNCATION_CODES = frozenset({"UPSTREAM_TRUNCATED", "UPSTREAM_EMPTY"})
CLOSERS = frozenset(
    {"TEXT_MESSAGE_END", "TOOL_CALL_END", "REASONING_MESSAGE_END", "REASONING_END", "STEP_FINISHED"}
)
"""What EOF may add before RUN_ERROR: the END of whatever was open."""
HELD = "REASONING_ENCRYPTED_VALUE"
"""Also what a reasoning message held until its END (``RunBuilder.hold_reasoning_encrypted``:
an OpenRouter ``reasoning_details`` entry's envelope), right before that END."""
CUT_CALL_WARNINGS = frozenset(
    {"agui/hygiene/tool-call-without-args", "agui/hygiene/tool-args-not-json"}
)


@pytest.mark.parametrize(("name", "path"), CASES)
def test_every_cut_keeps_what_came_closes_what_is_open_and_ends_typed(
    name: str, path: Path
) -> None:
    whole = wire(translate(name, path).events)
    whole_warnings = {v.rule_id for v in kit_report(whole).warnings}
    finished_at: int | None = None
    assert cuts(name, path), "a corpus file has at least two payloads"
    for cut in cuts(name, path):
        fed, tail = wire(cut.fed), wire(cut.tail)
        where = f"cut at byte {cut.at}"
        assert fed == whole[: len(fed)], where  # what came before the cut is kept as it was
        report = kit_report(fed + tail)
        assert report.errors == [], (where, [v.to_json() for v in report.errors])
        # Nothing left open, a terminal event; only a call the cut closed may lack its (whole)
        # arguments: TOOL_CALL_END marks it incomplete and the AI SDK encoder sends
        # tool-input-error for it (ARCHITECTURE.md conventions).
        cut_calls = {e["toolCallId"] for e in tail if e["type"] == "TOOL_CALL_END"}
        new_warnings = [
            v.to_json()
            for v in report.warnings
            if v.rule_id not in whole_warnings
            and not (v.rule_id in CUT_CALL_WARNINGS and set(v.ids) <= cut_calls)
        ]
        assert new_warnings == [], (where, new_warnings)
        if not tail:  # the cut came after a run's final event: nothing more to say
            assert fed and fed[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR"), where
            continue
        last = tail[-1]
        if last["type"] == "RUN_FINISHED":  # EOF after the protocol's finish marker
            finished_at = cut.at if finished_at is None else finished_at
            assert cut.error is None, where
            continue
        assert finished_at is None, f"{where}: truncated again after finishing at {finished_at}"
        assert last["type"] == "RUN_ERROR" and last["code"] in TRUNCATION_CODES, (where, last)
        if tail[0]["type"] == "RUN_STARTED":  # nothing had begun: only the end of the run
            assert fed == [] and last["code"] == "UPSTREAM_EMPTY", where
            tail = tail[1:]
        assert {e["type"] for e in tail[:-1]} <= CLOSERS | {HELD}, (
            where,
            [e["type"] for e in tail],
        )
        for n, event in enumerate(tail[:-1]):  # a held value only right before its message's END
            if event["type"] == HELD:
                after = tail[n + 1]
                assert after["type"] == "REASONING_MESSAGE_END", (where, after)
                assert after["messageId"] == event["entityId"], (where, after)
        assert cut.error is not None and cut.error[1] == last["code"], (where, cut.error)
        assert cut.error[0] in ("RemoteProtocolError", "MalformedUpstreamError"), where


@pytest.mark.parametrize(("name", "path"), CASES)
def test_a_closed_copy_is_what_a_fresh_decoder_of_the_prefix_gives(name: str, path: Path) -> None:
    every = cuts(name, path)
    data = path.read_bytes()
    for cut in {id(c): c for c in (every[0], every[len(every) // 2], every[-1])}.values():
        events, decoder = decode(name, data[: cut.at])
        assert wire(events) == wire(cut.events), f"cut at byte {cut.at}"
        assert error_key(decoder) == cut.error
        assert decoder.error is None or isinstance(decoder.error, RemoteProtocolError)
