"""Real AG-UI runtimes behind the gateway, over HTTP on loopback (issue 4).

Each runtime (:mod:`agui_runtimes`: pydantic-ai's AG-UI adapter with a ``FunctionModel`` or a
``TestModel``; ag-ui-langgraph over a scripted fake chat model) is served by uvicorn on
127.0.0.1:0 and checked directly with the kit (``conformance.run_endpoint``). Then the gateway
(``gateway.app`` with its lifespan, under uvicorn on 127.0.0.1:0, as ``agui-gateway serve``
runs it) gets a route ``protocol = "agui"`` whose ``upstream_url`` is the runtime, and one run
goes through each client endpoint:

* ``POST /v1/agui/<route>`` with a RunAgentInput, checked live by the kit as it streams;
* ``POST /v1/ai-sdk/<route>`` with an AI SDK chat body, checked live for ``ai`` 7 and on the
  captured bytes for 5 and 6;
* ``GET /api/v1/agent/runs/{threadId}/events?runId=`` for both recorded runs.

The gateway's output has no error-level violation on any wire, the real clients
(``@ag-ui/client`` 1.0.0, ``ai`` 7/6/5) accept it and build the expected messages (assistant
text, the tool call with its arguments, the tool result), and RUN_FINISHED
``metadata.repairs`` names what the AG-UI normalizer had to fix.

What each runtime needed (asserted below, so a changed runtime or normalizer shows up here):

* pydantic-ai 2.68 (``FunctionModel``: text + tool call, tool result, text; ``TestModel``:
  tool call, tool result, text): no kit finding, no repair. A tool-only response opens an empty
  text message first, so the call's ``parentMessageId`` is announced.
* ag-ui-langgraph 0.0.47 (tool-only turn, tool result, answer): the kit finds RUN_STARTED
  without ``protocolVersion``, a TOOL_CALL_START whose ``parentMessageId`` (the LangChain
  message id) was never announced, and TOOL_CALL_RESULT reusing the tool call id as its
  ``messageId``; all warnings. Through the gateway, ``protocolVersion`` is present (RUN_STARTED
  is rebuilt; this is not counted as a repair) while the other two warnings pass through
  unchanged. When the arguments arrive whole in the chunk that opens the call (as Groq sends
  them) the runtime drops them: TOOL_CALL_START..END with no ARGS, which the normalizer
  repairs from the raw event (``repairs: {"tool-args-synthesized": 1}``); with streamed
  arguments nothing is repaired. RAW, STATE_SNAPSHOT and MESSAGES_SNAPSHOT pass through on
  the AG-UI wire.

Needs ``pydantic-ai-slim[ag-ui]``, ``ag-ui-langgraph``, ``fastapi`` (dev extras) and the Node
harness (``tests/harness``, ``npm ci``); skipped locally without them, failed under ``CI=true``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from agui_runtimes import ANSWER, PREAMBLE, langgraph_app, pydantic_ai_app, serve, serve_gateway
from corpus import require_modules
from real_clients import replay, require_harness

from conformance import Report, check_bytes, run_endpoint

pytestmark = [
    pytest.mark.timeout(180),
    # ag-ui-langgraph 0.0.47 still calls a LangGraph 1.x deprecated method
    pytest.mark.filterwarnings("ignore:`get_config_jsonschema` is deprecated:DeprecationWarning"),
]

ROUTE = "runtime"
PROMPT = "What is the weather in Paris?"

LANGGRAPH_KIT_FINDINGS = frozenset(
    {
        "agui/hygiene/missing-protocol-version",
        "agui/hygiene/parent-message-unknown",
        "agui/hygiene/id-shared-across-kinds",
    }
)
# the gateway adds protocolVersion, and gives the entity that reuses another kind's id its own
# (issue 11 identity: agui_codecs.identity, repair ``id-derived``)
LANGGRAPH_GATEWAY_FINDINGS = LANGGRAPH_KIT_FINDINGS - {
    "agui/hygiene/missing-protocol-version",
    "agui/hygiene/id-shared-across-kinds",
}


@dataclass(frozen=True)
class Case:
    """One runtime and what the gateway is expected to make of it."""

    modules: tuple[str, ...]
    app: Callable[[], Any]
    texts: tuple[str, ...]
    """Assistant texts, in order (empty ones left out)."""
    args: dict[str, Any]
    """The arguments of the one ``get_weather`` call."""
    repairs: dict[str, int] = field(default_factory=dict)
    """RUN_FINISHED ``metadata.repairs`` of the gateway's run."""
    kit_findings: frozenset[str] = frozenset()
    """Rule ids the kit reports on the runtime's own stream (all warnings)."""
    gateway_findings: frozenset[str] = frozenset()
    """Rule ids the kit reports on the gateway's AG-UI stream (all warnings)."""

    @property
    def tool_result(self) -> str:
        return f"sunny in {self.args['city']}"


CASES = {
    "pydantic-ai-function": Case(
        modules=("pydantic_ai.ui.ag_ui",),
        app=lambda: pydantic_ai_app("function"),
        texts=(PREAMBLE, ANSWER),
        args={"city": "Paris"},
    ),
    "pydantic-ai-test": Case(
        modules=("pydantic_ai.ui.ag_ui",),
        app=lambda: pydantic_ai_app("test"),
        texts=(ANSWER,),
        args={"city": "a"},  # TestModel generates the arguments from the tool's schema
    ),
    "langgraph-streamed-args": Case(
        modules=("ag_ui_langgraph", "fastapi", "langgraph"),
        app=lambda: langgraph_app("streamed"),
        texts=(ANSWER,),
        args={"city": "Paris"},
        repairs={"id-derived": 1},  # the id LangGraph gives two kinds (the kit's finding above)
        kit_findings=LANGGRAPH_KIT_FINDINGS,
        gateway_findings=LANGGRAPH_GATEWAY_FINDINGS,
    ),
    "langgraph-whole-args": Case(
        modules=("ag_ui_langgraph", "fastapi", "langgraph"),
        app=lambda: langgraph_app("whole"),
        texts=(ANSWER,),
        args={"city": "Paris"},
        repairs={"tool-args-synthesized": 1, "id-derived": 1},
        kit_findings=LANGGRAPH_KIT_FINDINGS | {"agui/hygiene/tool-call-without-args"},
        gateway_findings=LANGGRAPH_GATEWAY_FINDINGS,
    ),
}


def run_input(thread_id: str, run_id: str) -> dict[str, Any]:
    """A RunAgentInput as ``@ag-ui/client`` ``HttpAgent`` posts it."""
    return {
        "threadId": thread_id,
        "runId": run_id,
        "state": {},
        "messages": [{"id": f"u-{thread_id}", "role": "user", "content": PROMPT}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }


CHAT_ID = "t-chat"
CHAT_BODY = {  # what ``ai`` 7 ``DefaultChatTransport`` posts for a first message
    "id": CHAT_ID,
    "trigger": "submit-message",
    "messages": [{"id": "u-chat", "role": "user", "parts": [{"type": "text", "text": PROMPT}]}],
}


def events_of(body: bytes) -> list[dict[str, Any]]:
    """The JSON ``data:`` payloads of an SSE body (``[DONE]`` left out)."""
    out = []
    for block in body.decode().split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: ") and line != "data: [DONE]":
                out.append(json.loads(line[6:]))
    return out


def terminal(body: bytes) -> dict[str, Any]:
    last = events_of(body)[-1]
    assert last["type"] == "RUN_FINISHED", last
    return last


def described(report: Report) -> list[dict[str, Any]]:
    return [v.to_json() for v in report.violations]


@dataclass
class Exchange:
    """What one runtime and the gateway in front of it sent."""

    case: Case
    direct: Report
    """The kit's live report on the runtime's own stream."""
    agui: bytes
    agui_report: Report
    ai_sdk: bytes
    ai_sdk_report: Report
    """Live, for ``ai`` 7."""
    agui_events: bytes
    """The durable events endpoint, for the AG-UI endpoint's run."""
    ai_sdk_events: bytes
    """The durable events endpoint, for the AI SDK endpoint's run."""
    ai_sdk_run_id: str


def post_and_check(url: str, body: dict[str, Any], **kit: Any) -> tuple[Report, bytes]:
    """POST ``body``; the kit checks the stream as it arrives and the bytes are kept."""
    captured = bytearray()
    report = run_endpoint(url, body, on_bytes=captured.extend, timeout=60, **kit)
    return report, bytes(captured)


@pytest.fixture(scope="module", params=list(CASES))
def exchange(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Exchange]:
    case = CASES[request.param]
    require_modules(*case.modules)
    workdir = tmp_path_factory.mktemp(request.param)
    with serve(case.app()) as runtime:
        direct, _ = post_and_check(f"{runtime}/", run_input("t-direct", "r-direct"))
        routes = f'[[routes]]\nname = "{ROUTE}"\nupstream_url = "{runtime}/"\nprotocol = "agui"\n'
        with serve_gateway(routes, Path(workdir)) as gateway, httpx.Client(timeout=60) as http:
            agui_report, agui = post_and_check(
                f"{gateway}/v1/agui/{ROUTE}", run_input("t-agui", "r-agui")
            )
            ai_sdk_report, ai_sdk = post_and_check(
                f"{gateway}/v1/ai-sdk/{ROUTE}", CHAT_BODY, protocol="ai-sdk", major=7
            )
            history = http.get(f"{gateway}/api/v1/agent/history", params={"threadId": CHAT_ID})
            assert history.status_code == 200, history.text
            ai_sdk_run_id = history.json()["items"][-1]["runId"]

            def recorded(thread_id: str, run_id: str) -> bytes:
                response = http.get(
                    f"{gateway}/api/v1/agent/runs/{thread_id}/events", params={"runId": run_id}
                )
                assert response.status_code == 200, response.text
                assert response.headers["content-type"].startswith("text/event-stream")
                return response.content

            yield Exchange(
                case=case,
                direct=direct,
                agui=agui,
                agui_report=agui_report,
                ai_sdk=ai_sdk,
                ai_sdk_report=ai_sdk_report,
                agui_events=recorded("t-agui", "r-agui"),
                ai_sdk_events=recorded(CHAT_ID, ai_sdk_run_id),
                ai_sdk_run_id=ai_sdk_run_id,
            )


def test_runtime_stream_has_only_the_known_kit_findings(exchange: Exchange) -> None:
    report = exchange.direct
    assert report.events > 5
    assert report.errors == [], described(report)
    assert {v.rule_id for v in report.violations} == exchange.case.kit_findings, described(report)


def test_gateway_agui_stream_passes_every_error_rule(exchange: Exchange) -> None:
    for report in (exchange.agui_report, check_bytes(exchange.agui, protocol="agui")):
        assert report.errors == [], described(report)
        assert {v.rule_id for v in report.violations} == exchange.case.gateway_findings
    started = events_of(exchange.agui)[0]
    assert started["type"] == "RUN_STARTED"
    assert (started["threadId"], started["runId"]) == ("t-agui", "r-agui")
    assert started["protocolVersion"] == "1.0"


@pytest.mark.parametrize("major", [5, 6, 7])
def test_gateway_ai_sdk_stream_is_clean_for_every_major(exchange: Exchange, major: int) -> None:
    assert exchange.ai_sdk_report.violations == [], described(exchange.ai_sdk_report)
    report = check_bytes(exchange.ai_sdk, protocol="ai-sdk", major=major)
    assert report.violations == [], described(report)
    assert exchange.ai_sdk.endswith(b"data: [DONE]\n\n")


def test_repairs_are_reported_on_run_finished(exchange: Exchange) -> None:
    """The normalizer's repairs, in RUN_FINISHED ``metadata.repairs`` of both runs."""
    for body in (exchange.agui, exchange.agui_events, exchange.ai_sdk_events):
        metadata = terminal(body).get("metadata", {})
        assert metadata.get("repairs", {}) == exchange.case.repairs
        assert metadata["provider"] == "agui"
        assert metadata["finishReason"] == "stop"


def test_durable_events_pass_the_checker_and_match_the_live_stream(exchange: Exchange) -> None:
    for body in (exchange.agui_events, exchange.ai_sdk_events):
        report = check_bytes(body, protocol="agui")
        assert report.errors == [], described(report)
        assert {v.rule_id for v in report.violations} == exchange.case.gateway_findings
    assert events_of(exchange.agui_events) == events_of(exchange.agui)
    started = events_of(exchange.ai_sdk_events)[0]
    assert (started["threadId"], started["runId"]) == (CHAT_ID, exchange.ai_sdk_run_id)


def _agui_view(messages: list[dict[str, Any]]) -> dict[str, Any]:
    assistant = [m for m in messages if m["role"] == "assistant"]
    calls = [c for m in assistant for c in m.get("toolCalls", [])]
    return {
        "texts": sorted(m["content"] for m in assistant if m.get("content")),
        "calls": [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls],
        "results": [
            (m["toolCallId"] in {c["id"] for c in calls}, m["content"])
            for m in messages
            if m["role"] == "tool"
        ],
    }


def _ai_sdk_view(messages: list[dict[str, Any]]) -> dict[str, Any]:
    assert [m["role"] for m in messages] == ["assistant"], messages
    parts = messages[0]["parts"]
    return {
        "texts": [p["text"] for p in parts if p["type"] == "text" and p["text"]],
        "tools": [
            (p["type"], p["state"], p["input"], p["output"])
            for p in parts
            if p["type"].startswith("tool-")
        ],
    }


def test_real_clients_accept_the_streams_and_build_the_messages(exchange: Exchange) -> None:
    require_harness()
    case = exchange.case
    agui_bodies = {
        "agui-live": exchange.agui,
        "agui-events": exchange.agui_events,
        "agui-events-of-ai-sdk-run": exchange.ai_sdk_events,
    }
    jobs = [(name, "agui", body) for name, body in agui_bodies.items()]
    jobs += [(client, client, exchange.ai_sdk) for client in ("ai-v7", "ai-v6", "ai-v5")]
    results = replay(jobs)
    assert {k: r["error"] for k, r in results.items() if not r["accepted"]} == {}
    assert {k: r["warnings"] for k, r in results.items() if r["warnings"]} == {}

    expected_agui = {
        "texts": sorted(case.texts),
        "calls": [("get_weather", case.args)],
        "results": [(True, case.tool_result)],
    }
    for name in agui_bodies:
        assert _agui_view(results[name]["messages"]) == expected_agui, name
    expected_ai = {
        "texts": list(case.texts),
        "tools": [("tool-get_weather", "output-available", case.args, case.tool_result)],
    }
    for client in ("ai-v7", "ai-v6", "ai-v5"):
        assert _ai_sdk_view(results[client]["messages"]) == expected_ai, client
        assert results[client]["finishReason"] == "stop", client
