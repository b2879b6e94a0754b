"""The zod-semantics schema interpreter (``conformance.schema``) and the generated AG-UI schema.

Semantics follow ``@ag-ui/client`` 1.0.0 ``src/enforce/strip.ts`` and zod 4 parsing; the
stored differential streams (``unknown-message-role-in-snapshot``, ``unknown-outcome-type``,
``interrupt-outcome-without-interrupts``, ``state-delta-bad-pointer``, ...) show the same
behaviour in the real client.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from real_clients import HARNESS_DIR, require_harness

from conformance.agui import agui_event_schema
from conformance.ai_sdk_schema import chunk_schema, known_in
from conformance.schema import strip_unknown, validate

OBJ = {
    "type": "object",
    "properties": {
        "a": {"type": "string"},
        "n": {"type": "integer", "minimum": 0, "maximum": 9},
        "items": {"type": "array", "items": {"oneOf": [
            {"type": "object", "properties": {"k": {"const": "x"}, "v": {"type": "string"}},
             "required": ["k", "v"]},
            {"type": "object", "properties": {"k": {"const": "y"}}, "required": ["k"]},
        ]}},
        "slot": {"oneOf": [{"type": "object", "properties": {"k": {"const": "x"}}, "required": ["k"]},
                           {"type": "object", "properties": {"k": {"const": "z"}}, "required": ["k"]}]},
        "raw": {"x-not-null": True},
        "meta": {"type": "object"},
    },
    "required": ["a"],
}  # fmt: skip


def test_strip_removes_unknown_keys_and_unknown_union_members() -> None:
    value = {"a": "s", "b": 1, "items": [{"k": "x", "v": "1", "extra": 1}, {"k": "w"}],
             "slot": {"k": "q"}, "meta": {"free": {"deep": 1}}}  # fmt: skip
    stripped, removed = strip_unknown(value, OBJ)
    assert stripped == {"a": "s", "items": [{"k": "x", "v": "1"}], "meta": {"free": {"deep": 1}}}
    assert sorted(removed) == [("/b", "field"), ("/items/0/extra", "field"),
                               ("/items/1", "member"), ("/slot", "member")]  # fmt: skip
    assert value["b"] == 1, "the input is not modified"


def test_spec_open_objects_keep_unknown_keys() -> None:
    schema = {"type": "object", "properties": {"op": {"const": "remove"}}, "specOpen": True}
    assert strip_unknown({"op": "remove", "value": 1}, schema) == ({"op": "remove", "value": 1}, [])


def test_validate_follows_javascript_numbers_and_null_rules() -> None:
    assert validate({"a": "s", "n": 3.0}, OBJ) == []
    kinds = {i.path: i.kind for i in validate({"n": 1.5, "raw": None, "meta": [1]}, OBJ)}
    assert kinds == {"/a": "missing", "/n": "invalid", "/raw": "null", "/meta": "invalid"}
    assert [i.kind for i in validate({"a": None}, OBJ)] == ["null"]
    assert [i.path for i in validate({"a": "s", "n": 10}, OBJ)] == ["/n"]
    assert [i.path for i in validate({"a": "s", "n": True}, OBJ)] == ["/n"]


def test_generated_agui_schema_covers_the_31_event_types() -> None:
    schema = agui_event_schema()
    assert len(schema) == 31
    assert "THINKING_START" not in schema
    start = schema["TEXT_MESSAGE_START"]
    assert start["properties"]["rawEvent"] == {"x-not-null": True}
    assert start["properties"]["metadata"] == {"type": "object"}


def test_ai_sdk_chunk_vocabulary_per_major() -> None:
    assert chunk_schema(5, "tool-output-denied") is None
    assert chunk_schema(6, "tool-output-denied") is not None
    assert chunk_schema(6, "reset-step") is None
    assert known_in("tool-approval-response") == [7]
    assert chunk_schema(5, "data-anything") is not None
    finish = chunk_schema(6, "finish")
    assert finish is not None
    assert validate({"type": "finish", "finishReason": "unknown"}, finish) != []
    assert (
        validate({"type": "finish", "finishReason": "unknown"}, chunk_schema(5, "finish") or {})
        == []
    )


def test_checked_in_agui_schema_is_what_the_generator_writes() -> None:
    require_harness()
    script = Path(__file__).resolve().parent / "tools" / "gen_agui_schema.mjs"
    done = subprocess.run(["node", str(script)], capture_output=True, check=True, timeout=120,
                          cwd=HARNESS_DIR)  # fmt: skip
    data = (
        Path(__file__).resolve().parents[2]
        / "conformance"
        / "conformance"
        / "data"
        / "agui-1.0.0.schema.json"
    )
    assert json.loads(done.stdout) == json.loads(data.read_text("utf-8"))
