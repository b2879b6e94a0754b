"""The writer's serialized events (``gateway/runs/writer.py`` ``_serialized``): an exact-size
copy of ``orjson.dumps`` (whose bytes keep their whole output buffer), byte for byte the same,
and None where orjson refuses the event (the store's write then reports it)."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from gateway.runs.writer import _serialized

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


@given(event=st.dictionaries(st.text(), json_values, max_size=8))
def test_the_copy_is_orjson_output_byte_for_byte(event: dict[str, Any]) -> None:
    raw = _serialized(event)
    assert raw == orjson.dumps(event)
    assert type(raw) is bytes


def test_an_event_orjson_refuses_is_none() -> None:
    assert _serialized({"type": "CUSTOM", "value": object()}) is None
