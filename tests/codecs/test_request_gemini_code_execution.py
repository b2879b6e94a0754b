"""Gemini code execution goes back as the model's own parts, never as a ``functionCall``
(issue 11, kinds 5/6).

Expected parts come from the recorded stream (tests/corpus/gemini/code-execution.sse: the
``executableCode`` part with its ``thoughtSignature`` and the ``codeExecutionResult`` part, as
Gemini sent them; their optional ``id`` is not kept by the decoder) and the Gemini API
reference (``Part.executableCode {language, code}``, ``Part.codeExecutionResult {outcome,
output}``).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ag_ui.core import RunAgentInput
from corpus import CORPUS_DIR, require_corpus
from gemini_fixtures import upstream
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.gemini.request import build_request, to_gemini


def run_input(messages: list[dict[str, Any]], tools: tuple[str, ...] = ()) -> RunAgentInput:
    return RunAgentInput.model_validate(
        {
            "threadId": "t1",
            "runId": "r2",
            "messages": messages,
            "tools": [{"name": n, "description": n, "parameters": {}} for n in tools],
            "context": [],
            "state": None,
            "forwardedProps": {},
        }
    )


def recorded_parts() -> tuple[dict[str, Any], dict[str, Any]]:
    require_corpus("gemini")
    parts = [
        p
        for body in upstream(CORPUS_DIR / "gemini" / "code-execution.sse")
        for c in body.get("candidates", [])
        for p in c.get("content", {}).get("parts", [])
    ]
    [code] = [p for p in parts if "executableCode" in p]
    [ran] = [p for p in parts if "codeExecutionResult" in p]
    return code, ran


def code_history(*, flagged: bool, signed: bool) -> list[dict[str, Any]]:
    """The recorded code execution as ``@ag-ui/client`` holds it (the decoder's call and
    result shapes; the signature as the call's ``encryptedValue``)."""
    code, ran = recorded_parts()
    source = {k: code["executableCode"][k] for k in ("language", "code")}
    call: dict[str, Any] = {
        "id": "code-1",
        "type": "function",
        "function": {"name": "code_execution", "arguments": json.dumps(source)},
    }
    if flagged:
        call["metadata"] = {"providerExecuted": True}
    if signed:
        call["encryptedValue"] = code["thoughtSignature"]
    result = {k: ran["codeExecutionResult"][k] for k in ("outcome", "output")}
    return [
        {"id": "u1", "role": "user", "content": "Compute."},
        {"id": "a1", "role": "assistant", "toolCalls": [call]},
        {"id": "t1", "role": "tool", "toolCallId": "code-1", "content": json.dumps(result)},
        {"id": "m1", "role": "assistant", "content": "It is -428330955.97745."},
        {"id": "u2", "role": "user", "content": "Thanks."},
    ]


def test_recorded_code_execution_goes_back_as_its_parts() -> None:
    code, ran = recorded_parts()
    executable = {k: code["executableCode"][k] for k in ("language", "code")}
    result = {k: ran["codeExecutionResult"][k] for k in ("outcome", "output")}
    for flagged in (True, False):  # the result's shape alone also tells
        messages = code_history(flagged=flagged, signed=True)
        body = build_request(ClientRequest(run_input(messages)), model="gemini-2.5-pro", params={})
        assert body["contents"] == [
            {"role": "user", "parts": [{"text": "Compute."}]},
            {
                "role": "model",
                "parts": [
                    {"executableCode": executable, "thoughtSignature": code["thoughtSignature"]},
                    {"codeExecutionResult": result},
                    {"text": "It is -428330955.97745."},
                ],
            },
            {"role": "user", "parts": [{"text": "Thanks."}]},
        ]


def test_a_declared_code_execution_function_stays_a_function_call() -> None:
    messages = code_history(flagged=False, signed=False)
    body = to_gemini(run_input(messages, ("code_execution",)), model="gemini-2.5-pro")
    names = [
        p["functionCall"]["name"]
        for c in body["contents"]
        for p in c["parts"]
        if "functionCall" in p
    ]
    assert names == ["code_execution"]


# -- the property ------------------------------------------------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"id": "u0", "role": "user", "content": "go"}]
    client_calls: list[str] = []
    rebuilt = 0
    for turn in range(draw(st.integers(1, 4))):
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        for k in range(draw(st.integers(0, 3))):
            call_id = f"c{turn}-{k}"
            if draw(st.booleans()):
                calls.append({"id": call_id, "type": "function", "function": {"name": "lookup"}})
                calls[-1]["function"]["arguments"] = "{}"
                client_calls.append(call_id)
                content = draw(st.sampled_from(["18C", '{"outcome": "OUTCOME_OK"}']))
            else:
                source = json.dumps({"language": "PYTHON", "code": f"print({k})"})
                call = {"id": call_id, "type": "function", "function": {"name": "code_execution"}}
                call["function"]["arguments"] = source
                flagged = draw(st.booleans())
                if flagged:
                    call["metadata"] = {"providerExecuted": True}
                calls.append(call)
                content = draw(st.sampled_from(['{"outcome": "OUTCOME_OK", "output": "1"}', "x"]))
                rebuilt += content != "x"
                if content == "x" and not flagged:  # indistinguishable from a client call
                    content = '{"outcome": "OUTCOME_FAILED"}'
                    rebuilt += 1
            results.append({"role": "tool", "toolCallId": call_id, "content": content})
        assistant: dict[str, Any] = {"id": f"a{turn}", "role": "assistant"}
        if calls:
            assistant["toolCalls"] = calls
        else:
            assistant["content"] = f"answer {turn}"
        messages.append(assistant)
        for n, result in enumerate(draw(st.permutations(results))):
            messages.append({"id": f"t{turn}-{n}", **result})
            if draw(st.booleans()):
                messages.append({"id": f"u{turn}-{n}", "role": "user", "content": "ok"})
    return {"messages": messages, "client_calls": client_calls, "rebuilt": rebuilt}


@settings(max_examples=150, deadline=None)
@given(histories())
def test_no_code_execution_goes_out_as_a_function_call(case: dict[str, Any]) -> None:
    body = to_gemini(run_input(case["messages"], ("lookup",)), model="gemini-2.5-pro")
    parts = [p for c in body["contents"] for p in c["parts"]]
    calls = [p["functionCall"]["id"] for p in parts if "functionCall" in p]
    responses = [p["functionResponse"]["id"] for p in parts if "functionResponse" in p]
    assert calls == case["client_calls"]
    assert Counter(responses) == Counter(case["client_calls"])
    codes = [n for n, p in enumerate(parts) if "executableCode" in p]
    assert len(codes) == case["rebuilt"]
    assert all("codeExecutionResult" in parts[n + 1] for n in codes)
    assert sum("codeExecutionResult" in p for p in parts) == case["rebuilt"]
