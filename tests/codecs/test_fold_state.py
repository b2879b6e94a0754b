"""``RunFold.state``: the state a client holds after a run's STATE_SNAPSHOT / STATE_DELTA events.

The one state reducer of the codec library (the inspector's verdicts use it, issue 10). The
expected state comes from the real ``@ag-ui/client`` 1.0.0 (``tests/harness``, its
``agent.state`` after the run): hypothesis draws snapshots and RFC 6902 deltas, some of which
do not apply (the client then keeps the old state), and each run's fold must equal what the
client holds.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_clients import replay, require_harness

from agui_codecs.core import RunFold
from agui_codecs.sse import encode_json

SETTINGS = settings(
    deadline=None,
    max_examples=3,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
KEYS = st.sampled_from(["a", "b", "c"])
VALUES = st.one_of(st.integers(-5, 5), st.text(max_size=3), st.lists(st.integers(0, 3), max_size=2))


def patch(state: Any, delta: list[Any]) -> Any:
    try:
        return jsonpatch.JsonPatch(delta).apply(state, in_place=True)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as exc:
        raise ValueError(str(exc)) from exc


@st.composite
def operations(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(["add", "replace", "remove", "test", "move", "copy"]))
    out: dict[str, Any] = {"op": op, "path": "/" + draw(KEYS)}
    if op in ("move", "copy"):  # these read ``from`` first and may fail after a change
        out["from"] = "/" + draw(KEYS)
    elif op != "remove":
        out["value"] = draw(VALUES)
    return out


@st.composite
def state_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A run's state events: a snapshot first, then deltas and maybe a further snapshot."""
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": draw(st.dictionaries(KEYS, VALUES))}
    later = st.one_of(
        st.builds(
            lambda ops: {"type": "STATE_DELTA", "delta": ops},
            st.lists(operations(), min_size=1, max_size=3),
        ),
        st.builds(
            lambda s: {"type": "STATE_SNAPSHOT", "snapshot": s}, st.dictionaries(KEYS, VALUES)
        ),
    )
    return [snapshot, *draw(st.lists(later, max_size=5))]


def body(events: list[dict[str, Any]]) -> bytes:
    run = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        *events,
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    return b"".join(encode_json(orjson.dumps(e)) for e in run)


@SETTINGS
@given(runs=st.lists(state_events(), min_size=10, max_size=15))
def test_the_folded_state_is_the_state_the_client_holds(runs: list[list[dict[str, Any]]]) -> None:
    require_harness()
    results = replay([(str(i), "agui", body(events)) for i, events in enumerate(runs)])
    for i, events in enumerate(runs):
        result = results[str(i)]
        assert result["accepted"], result["error"]
        has_state, state = RunFold().apply_all(events).state(patch)
        assert has_state
        assert state == result["state"], (events, result["warnings"], result["logs"])


def test_no_snapshot_no_state_and_deltas_before_it_are_not_applied() -> None:
    delta = {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": 1}]}
    assert RunFold().apply_all([delta]).state(patch) == (False, None)
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"b": 2}}
    assert RunFold().apply_all([delta, snapshot]).state(patch) == (True, {"b": 2})
