"""The step-boundary rule over generated agent streams (issue 19 item 1, the seed design's
"error retry and checkpoint"): an AG-UI agent streams steps (optional text, then tool calls
each with its result) and the connection drops after any event. The oracle is computed from
the script, not from the gateway: the cut is safe right after RUN_STARTED or right after a
step's last tool result; anywhere else text or an unfinished call was sent.

Safe: the run is retried once with every completed step carried (assistant ``toolCalls`` plus
``tool`` messages, AG-UI "Messages"), the client's run is legal (the conformance kit's
``verifyEvents`` rules) and holds every result exactly once. Unsafe: no retry, a legal run
ending with RUN_ERROR, nothing the upstream sent before the cut lost.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import orjson
import respx
from decoder_checks import assert_legal_run
from gwtest import RUN_INPUT, GatedStream, drive
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from resilience import ANSWER, agui_sse, build, scripted

AGENT_URL = "https://agent.test/run"
ROUTES = f"""
[[routes]]
name = "agent"
upstream_url = "{AGENT_URL}"
protocol = "agui"
"""

CUT_CALL_WARNINGS = ("agui/hygiene/tool-call-without-args", "agui/hygiene/tool-args-not-json")

steps_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.text("abc ", min_size=1, max_size=5)), st.integers(1, 2)),
    min_size=1,
    max_size=3,
)


def script(steps: list[tuple[str | None, int]]) -> tuple[list[dict[str, Any]], set[int]]:
    """The agent's events for ``steps`` and the cut points (events sent) that are safe."""
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "thread-1", "runId": "r"}]
    safe = {1}
    for n, (text, calls) in enumerate(steps):
        message = f"a{n}"
        if text is not None:
            events += [
                {"type": "TEXT_MESSAGE_START", "messageId": message, "role": "assistant"},
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": message, "delta": text},
                {"type": "TEXT_MESSAGE_END", "messageId": message},
            ]
        for c in range(calls):
            call = f"call-{n}-{c}"
            events += [
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": call,
                    "toolCallName": "lookup",
                    "parentMessageId": message,
                },
                {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": '{"q":1}'},
                {"type": "TOOL_CALL_END", "toolCallId": call},
            ]
        for c in range(calls):
            call = f"call-{n}-{c}"
            events.append(
                {
                    "type": "TOOL_CALL_RESULT",
                    "messageId": f"t-{call}",
                    "toolCallId": call,
                    "content": f"result {call}",
                    "role": "tool",
                }
            )
        safe.add(len(events))
    return events, safe


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(steps=steps_strategy, data=st.data())
def test_a_cut_anywhere_is_retried_exactly_at_safe_boundaries(
    tmp_path: Path, steps: list[tuple[str | None, int]], data: st.DataObject
) -> None:
    events, safe = script(steps)
    cut = data.draw(st.integers(1, len(events)), label="events sent before the reset")
    router = respx.MockRouter(assert_all_called=False, assert_all_mocked=True)
    gw = build(tmp_path, router, ROUTES)
    first = GatedStream([agui_sse(*events[:cut])], raise_at_end=httpx.ReadError("reset"))
    route = router.post(AGENT_URL).mock(
        side_effect=scripted(
            httpx.Response(200, stream=first), httpx.Response(200, content=agui_sse(*ANSWER))
        )
    )
    out = [e for e in asyncio.run(drive(gw.app, "/v1/agui/agent", RUN_INPUT)).data()]
    kinds = [e["type"] for e in out]
    sent = events[1:cut]
    if cut in safe:
        assert_legal_run(out)
        assert route.call_count == 2
        assert kinds[-1] == "RUN_FINISHED"
        results = [e for e in sent if e["type"] == "TOOL_CALL_RESULT"]
        assert [e for e in out if e["type"] == "TOOL_CALL_RESULT"] == results
        retried = orjson.loads(route.calls[1].request.content)["messages"]
        assert retried[0] == RUN_INPUT["messages"][0]
        tools = [m for m in retried if m["role"] == "tool"]
        assert [(m["toolCallId"], m["content"]) for m in tools] == [
            (e["toolCallId"], e["content"]) for e in results
        ]
        calls = [c["id"] for m in retried if m["role"] == "assistant" for c in m["toolCalls"]]
        assert calls == [e["toolCallId"] for e in sent if e["type"] == "TOOL_CALL_START"]
        texts = "".join(m.get("content") or "" for m in retried if m["role"] == "assistant")
        assert texts == "".join(e["delta"] for e in sent if e["type"] == "TEXT_MESSAGE_CONTENT")
        assert out[-3]["delta"] == "It is sunny."
    else:
        # a call cut before or inside its arguments is closed as the decoder closes it
        assert_legal_run(out, allowed_warnings=CUT_CALL_WARNINGS)
        assert route.call_count == 1
        assert kinds[-1] == "RUN_ERROR" and out[-1]["code"] == "UPSTREAM_DISCONNECTED"
        # everything the upstream sent reached the client, in order, then the closings; only
        # ENDs move later (the agui decoder holds an END while its item's phase goes on, so
        # that late content can still join it: issue 11)
        ends = ("TOOL_CALL_END", "TEXT_MESSAGE_END")
        body = [e for e in sent if e["type"] not in ends]
        assert [e for e in out[1:] if e["type"] not in ends][: len(body)] == body
        assert all(e in out for e in sent if e["type"] in ends)
