"""RunFold over ``*_CHUNK`` streams with subagent lanes holds what the real ``@ag-ui/client``
holds: the fold expands chunks with ``agui_codecs.core.ChunkExpander`` (transform.ts, one pending
stream per subagent), and the history it builds equals ``agent.messages`` after the client read
the same stream (subagent tags aside: history does not keep them)."""

from __future__ import annotations

import random
from typing import Any

import orjson
import pytest
from real_clients import replay, require_harness

from gateway.runs import RunFold, history_items_to_agui, run_item

pytestmark = pytest.mark.timeout(300)

_LANES = (None, "sa", "sb")


def chunk_stream(rng: random.Random) -> list[dict[str, Any]]:
    """A client-legal run of interleaved text and tool-call chunks over three lanes: the
    parent's and two subagents'. A chunk continues its lane's stream (with or without its id)
    or starts a new item there; lanes are tagged, so an id-less chunk is never ambiguous."""
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    events += [{"type": "SUBAGENT_STARTED", "subagentRunId": s, "name": s} for s in _LANES[1:]]
    open_item: dict[str | None, tuple[str, str]] = {}
    used: set[str] = set()
    for n in range(rng.randint(1, 14)):
        lane = rng.choice(_LANES)
        tag = {} if lane is None else {"subagentRunId": lane}
        current = open_item.get(lane)
        if current is not None and rng.random() < 0.6:
            kind, item = current
            key = "messageId" if kind == "text" else "toolCallId"
            chunk_type = "TEXT_MESSAGE_CHUNK" if kind == "text" else "TOOL_CALL_CHUNK"
            ev: dict[str, Any] = {"type": chunk_type, **tag}
            if rng.random() < 0.5:
                ev[key] = item
            ev["delta"] = f"{n}," if kind == "tool" else f"w{n} "
            events.append(ev)
            continue
        kind = rng.choice(("text", "tool"))
        item = f"{kind}-{n}"
        used.add(item)
        open_item[lane] = (kind, item)
        if kind == "text":
            events.append(
                {"type": "TEXT_MESSAGE_CHUNK", "messageId": item, "delta": f"w{n} ", **tag}
            )
        else:
            events.append(
                {
                    "type": "TOOL_CALL_CHUNK",
                    "toolCallId": item,
                    "toolCallName": "f",
                    "delta": "[",
                    **tag,
                }
            )
        if rng.random() < 0.15:
            events.append({"type": "CUSTOM", "name": "note", "value": n, **tag})
            del open_item[lane]  # a non-chunk event closes its lane's stream
    events += [{"type": "SUBAGENT_FINISHED", "subagentRunId": s} for s in _LANES[1:]]
    events.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    return events


def _untagged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in m.items() if k != "subagentRunId"} for m in messages]


def test_fold_of_chunk_lanes_holds_what_the_client_holds() -> None:
    require_harness()
    rng = random.Random(1042)
    streams = [chunk_stream(rng) for _ in range(40)]
    jobs = [
        (f"s{i}", "agui", b"".join(b"data: " + orjson.dumps(e) + b"\n\n" for e in events))
        for i, events in enumerate(streams)
    ]
    results = replay(jobs)
    for i, events in enumerate(streams):
        result = results[f"s{i}"]
        assert result["accepted"], (result["error"], events)
        item = run_item(RunFold().apply_all(events), run_id="r", status="completed")
        ours = history_items_to_agui([item]) if item is not None else []
        assert ours == _untagged(result["messages"]), events
