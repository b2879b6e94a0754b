"""The AI SDK tool-approval answer, checked against the real client (issue 11 kind 7).

``ai`` 7.0.173 and 6.0.326 (``tests/harness``, ``approval-body.mjs``): a chat whose last
assistant message holds tool parts ``approval-requested`` answers them with
``chat.addToolApprovalResponse({id, approved, reason?})`` and posts the chat request on its own
(``sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses``). That posted
body is the expected one:

* the ``ai-sdk`` request builder, given the same conversation as AG-UI messages and the answers
  as ``resume[]`` entries, sends the same ``messages``;
* the gateway's AI SDK endpoint reads that body back as the same answers (``resume[]``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

from ag_ui.core import RunAgentInput
from real_clients import HARNESS_DIR, require_harness

from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input
from agui_codecs.protocols.ai_sdk.request import build_request

CALLS = [("c1", "delete_file", {"path": "draft.md"}), ("c2", "send_mail", {"to": "a@b.c"})]
ANSWER_SETS: list[list[dict[str, Any]]] = [
    [{"id": "ap-c1", "approved": True}],
    [{"id": "ap-c1", "approved": False, "reason": "keep it"}],
    [{"id": "ap-c1", "approved": True, "reason": "fine"}, {"id": "ap-c2", "approved": False}],
    [{"id": "ap-c2", "approved": True}, {"id": "ap-c1", "approved": True}],
]


def ui_messages(n: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "step-start"}]
    for call_id, name, args in CALLS[:n]:
        parts.append(
            {
                "type": f"tool-{name}",
                "toolCallId": call_id,
                "state": "approval-requested",
                "input": args,
                "approval": {"id": f"ap-{call_id}"},
            }
        )
    return [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Tidy up."}]},
        {"id": "a1", "role": "assistant", "parts": parts},
    ]


def agui_request(n: int, answers: list[dict[str, Any]]) -> ClientRequest:
    calls = [
        {"id": c, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for c, name, args in CALLS[:n]
    ]
    resume = []
    for answer in answers:
        payload: dict[str, Any] = {"approved": answer["approved"]}
        if "reason" in answer:
            payload["reason"] = answer["reason"]
        resume.append({"interruptId": answer["id"], "status": "resolved", "payload": payload})
    run_input = RunAgentInput.model_validate(
        {
            "threadId": "chat-1",
            "runId": "r2",
            "messages": [
                {"id": "u1", "role": "user", "content": "Tidy up."},
                {"id": "a1", "role": "assistant", "toolCalls": calls},
            ],
            "tools": [],
            "context": [],
            "state": None,
            "forwardedProps": {},
            "resume": resume,
        }
    )
    recorded = {f"ap-{c}": c for c, _, _ in CALLS[:n]}  # the stored interrupts' toolCallId
    return ClientRequest(run_input, interrupt_calls=recorded)


def real_bodies() -> dict[str, Any]:
    jobs = []
    for client in ("ai-v7", "ai-v6"):
        for index, answers in enumerate(ANSWER_SETS):
            n = max(int(a["id"][-1]) for a in answers)
            jobs.append(
                {
                    "id": f"{client}-{index}",
                    "client": client,
                    "messages": ui_messages(n),
                    "answers": answers,
                }
            )
    node = shutil.which("node")
    assert node is not None
    done = subprocess.run(
        [node, str(HARNESS_DIR / "approval-body.mjs")],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        cwd=HARNESS_DIR,
        timeout=120,
        check=True,
    )
    bodies: dict[str, Any] = json.loads(done.stdout)
    return bodies


def test_approval_answers_match_what_the_ai_sdk_client_posts() -> None:
    require_harness()
    bodies = real_bodies()
    for client in ("ai-v7", "ai-v6"):
        for index, answers in enumerate(ANSWER_SETS):
            real = bodies[f"{client}-{index}"]
            n = max(int(a["id"][-1]) for a in answers)
            ours = build_request(agui_request(n, answers), model="", params={})
            assert isinstance(ours, dict)
            assert ours["messages"] == real["messages"], (client, index)
            back = to_run_agent_input(AiSdkChatRequest.model_validate(real), run_id="r2")
            read = {e.interrupt_id: e.payload for e in back.resume or []}
            expected = {}
            for answer in answers:
                payload = {"approved": answer["approved"], "toolCallId": answer["id"][3:]}
                if "reason" in answer:
                    payload["reason"] = answer["reason"]
                expected[answer["id"]] = payload
            assert read == expected, (client, index)
