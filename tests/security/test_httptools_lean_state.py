"""The httptools protocol's per-connection state in lighter containers (issue 13: memory per
open stream, :mod:`gateway.http_httptools`): its pipelined-request queue behaves as uvicorn's
``deque`` does under the operations uvicorn 0.55 makes (``appendleft``, ``pop``, truth,
``httptools_impl.py``)."""

from __future__ import annotations

from collections import deque

from hypothesis import given
from hypothesis import strategies as st

from gateway.http_httptools import _Pipeline

ops = st.lists(st.one_of(st.integers(0, 99), st.none()), max_size=40)  # None: pop if any


@given(ops=ops)
def test_the_pipeline_queue_is_the_deque_uvicorn_had(ops: list[int | None]) -> None:
    lean, reference = _Pipeline(), deque[int]()
    for op in ops:
        assert bool(lean) == bool(reference)
        if op is None:
            if reference:
                assert lean.pop() == reference.pop()
        else:
            lean.appendleft(op)
            reference.appendleft(op)
    assert list(lean) == list(reference)
