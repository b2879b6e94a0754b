"""Gemini ``streamGenerateContent`` decoder (``agui_codecs.protocols.gemini.decoder``): tool calls.

Tool call ids (kept from the upstream, else synthesized deterministically from the
``responseId``) and Vertex streamed function-call arguments (``FunctionCall.partialArgs``
with ``jsonPath``, ``willContinue``), on hand-made fixtures read off the Gemini REST
reference and the recordings. The corpus is checked in ``test_gemini_corpus.py``, finish
reasons, errors and parts in ``test_gemini.py``.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from decoder_checks import assert_legal_run, wire
from gemini_fixtures import call_args, decode, of_type, response, sse

from agui_codecs.errors import MalformedUpstreamError
from agui_codecs.protocols.gemini.decoder import GeminiDecoder, apply_partial_args


def jsonl(*bodies: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(b) + b"\n" for b in bodies)


# -- tool call ids --------------------------------------------------------------------------
def test_function_call_without_id_gets_one_synthesized_id_everywhere() -> None:
    body = jsonl(
        response(
            {
                "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                "thoughtSignature": "sig-1",
            }
        ),
        response({"text": ""}, finish="STOP"),
    )
    events = decode(body)
    assert_legal_run(events)
    ids = {
        w["type"]: w.get("toolCallId", w.get("entityId"))
        for w in wire(events)
        if w["type"].startswith("TOOL_CALL") or w["type"] == "REASONING_ENCRYPTED_VALUE"
    }
    assert set(ids) == {
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "REASONING_ENCRYPTED_VALUE",
    }
    assert len(set(ids.values())) == 1
    assert wire(events)[-1]["outcome"]["pendingToolCallIds"] == [ids["TOOL_CALL_START"]]


def test_synthesized_call_ids_are_deterministic_and_unique_within_the_run() -> None:
    body = sse(
        response(
            {"functionCall": {"name": "a", "args": {}}}, {"functionCall": {"name": "a", "args": {}}}
        ),
        response({"functionCall": {"name": "b"}}, finish="STOP"),
    )
    first = [s["toolCallId"] for s in of_type(decode(body), "TOOL_CALL_START")]
    again = [s["toolCallId"] for s in of_type(decode(body, range(1, len(body))), "TOOL_CALL_START")]
    assert first == again
    assert len(set(first)) == 3
    assert all(i.startswith("resp-1") for i in first)  # derived from responseId


def test_function_call_id_from_upstream_is_kept() -> None:
    body = sse(
        response({"functionCall": {"id": "fc-7", "name": "a", "args": {"x": 1}}}, finish="STOP")
    )
    assert call_args(decode(body)) == {"fc-7": {"x": 1}}


# -- Vertex streamed function-call arguments ---------------------------------------------------
def partial(*args: dict[str, Any], more: bool = True) -> dict[str, Any]:
    """A response whose part carries ``functionCall.partialArgs`` (Vertex streamed args)."""
    call: dict[str, Any] = {"partialArgs": list(args)}
    if more:
        call["willContinue"] = True
    return response({"functionCall": call})


def streamed_call(
    name: str, *chunks: list[dict[str, Any]], terminal: bool = True
) -> list[dict[str, Any]]:
    out = [response({"functionCall": {"name": name, "willContinue": True}})]
    out += [partial(*c) for c in chunks]
    if terminal:
        out.append(response({"functionCall": {}}))
    return out


def test_partial_args_nested_paths_arrays_and_scalars_build_the_object() -> None:
    bodies = streamed_call(
        "cook",
        [{"jsonPath": "$.recipe.name", "stringValue": "Lasa", "willContinue": True}],
        [{"jsonPath": "$.recipe.name", "stringValue": "gna"}],
        [{"jsonPath": "$.recipe.ingredients[0].amount", "numberValue": 16}],
        [
            {"jsonPath": "$.recipe.ingredients[1].amount", "numberValue": 0.5},
            {"jsonPath": "$.recipe.vegan", "boolValue": False},
        ],
        [{"jsonPath": "$['odd key']", "nullValue": "NULL_VALUE"}],
    )
    events = decode(jsonl(*bodies, response({"text": ""}, finish="STOP")))
    assert_legal_run(events)
    assert list(call_args(events).values()) == [
        {
            "recipe": {
                "name": "Lasagna",
                "ingredients": [{"amount": 16}, {"amount": 0.5}],
                "vegan": False,
            },
            "odd key": None,
        }
    ]
    assert len(of_type(events, "TOOL_CALL_ARGS")) == 1  # buffered: one ARGS at completion


def test_partial_args_revisiting_an_earlier_path_still_give_valid_json() -> None:
    # Appending text per leaf would emit {"a":{"x":1},"b":2 and then need to reopen "a".
    bodies = streamed_call(
        "f",
        [{"jsonPath": "$.a.x", "numberValue": 1}],
        [{"jsonPath": "$.b", "numberValue": 2}],
        [{"jsonPath": "$.a.y", "stringValue": "late"}],
    )
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_legal_run(events)
    assert list(call_args(events).values()) == [{"a": {"x": 1, "y": "late"}, "b": 2}]


def test_partial_args_string_pieces_with_quotes_and_unicode_concatenate_exactly() -> None:
    pieces = ['He said "hi', '" \\ and ', "caf\u00e9 \U0001f600", ""]
    chunks = [[{"jsonPath": "$.s", "stringValue": p, "willContinue": True}] for p in pieces[:-1]]
    chunks.append([{"jsonPath": "$.s", "stringValue": pieces[-1]}])
    events = decode(sse(*streamed_call("say", *chunks), response(finish="STOP")))
    assert list(call_args(events).values()) == [{"s": "".join(pieces)}]


def test_partial_args_chunk_without_will_continue_completes_the_call() -> None:
    # google-stream-tool-call-array-arguments-missing-terminal-function-call (vercel/ai): the
    # last partialArgs chunk has no willContinue and no functionCall {} follows.
    bodies = [
        response({"functionCall": {"name": "writeItems", "willContinue": True}}),
        partial({"jsonPath": "$.operations[0].price", "numberValue": 0.5}),
        partial({"jsonPath": "$.operations[1].price", "numberValue": 0.3}, more=False),
        response({"text": "done"}, finish="STOP"),
    ]
    events = decode(jsonl(*bodies))
    assert_legal_run(events)
    types = [w["type"] for w in wire(events)]
    assert types.index("TOOL_CALL_END") < types.index("TEXT_MESSAGE_START")
    assert list(call_args(events).values()) == [{"operations": [{"price": 0.5}, {"price": 0.3}]}]


def test_keep_alive_function_call_with_only_will_continue_is_ignored() -> None:
    bodies = streamed_call("f", [{"jsonPath": "$.a", "stringValue": "1"}])
    bodies.insert(2, response({"functionCall": {"willContinue": True}}))
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_legal_run(events)
    assert list(call_args(events).values()) == [{"a": "1"}]


def test_streamed_call_left_open_is_completed_at_the_end_of_the_turn() -> None:
    bodies = streamed_call("f", [{"jsonPath": "$.a", "numberValue": 1}], terminal=False)
    events = decode(jsonl(*bodies, response(finish="STOP")))
    assert_legal_run(events)
    assert list(call_args(events).values()) == [{"a": 1}]


def test_partial_args_with_no_call_in_progress_is_a_malformed_upstream() -> None:
    body = jsonl(response({"text": "hi"}), partial({"jsonPath": "$.a", "numberValue": 1}))
    decoder = GeminiDecoder()
    events = decoder.feed(body) + decoder.close()
    assert_legal_run(events)
    assert wire(events)[-1]["code"] == "UPSTREAM_MALFORMED"
    assert isinstance(decoder.error, MalformedUpstreamError)


@pytest.mark.parametrize("path", ["a.b", "$.a[x]", "$..a", 7])
def test_unsupported_json_path_is_a_typed_error(path: Any) -> None:
    with pytest.raises(MalformedUpstreamError):
        apply_partial_args({}, {"jsonPath": path, "numberValue": 1})


def test_partial_args_array_index_past_the_cap_is_a_typed_error() -> None:
    with pytest.raises(MalformedUpstreamError):
        apply_partial_args({}, {"jsonPath": "$.a[999999999]", "numberValue": 1})
