"""The kit's "continues a message" option (issue 11, kind 4): ``AiSdkChecker(continues=...)``,
``check_bytes(..., continues=...)``, ``agui-conformance check --continues ID``.

A stream answering a call of the message it continues (the ai v6/v7 tool-approval flow:
``tool-output-denied`` / ``tool-output-available`` for a call of the previous response) is
rejected by the real client when the chat holds no such part, and accepted when the chat's last
message holds it (``tests/harness``: ``initial_messages``). The kit must say the same: an error
without the option, nothing with it.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from real_clients import replay, require_harness

from conformance import AiSdkChecker, check_bytes
from conformance.cli import main

CHUNKS = [
    {"type": "start", "messageId": "msg-1"},
    {"type": "tool-output-denied", "toolCallId": "call-1"},
    {"type": "tool-output-available", "toolCallId": "call-2", "output": {"ok": True}},
    {"type": "start-step"},
    {"type": "text-start", "id": "t"},
    {"type": "text-delta", "id": "t", "delta": "done"},
    {"type": "text-end", "id": "t"},
    {"type": "finish-step"},
    {"type": "finish", "finishReason": "stop"},
]
BODY = b"".join(b"data: " + orjson.dumps(c) + b"\n\n" for c in CHUNKS) + b"data: [DONE]\n\n"
EARLIER = ("call-1", "call-2")


def history() -> list[dict[str, object]]:
    """The chat before the continuation: both calls' approvals answered (ai v6/v7)."""
    parts: list[dict[str, object]] = [{"type": "step-start"}]
    for cid, approved in (("call-1", False), ("call-2", True)):
        parts.append(
            {
                "type": "tool-lookup",
                "toolCallId": cid,
                "state": "approval-responded",
                "input": {},
                "approval": {"id": f"a-{cid}", "approved": approved},
            }
        )
    return [
        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {"id": "msg-1", "role": "assistant", "parts": parts},
    ]


@pytest.mark.parametrize("major", [6, 7])
def test_the_kit_says_what_the_client_says_with_and_without_the_option(major: int) -> None:
    require_harness()
    client = f"ai-v{major}"
    results = replay(
        [
            ("fresh", client, BODY),
            ("continued", client, BODY, {"initial_messages": history()}),
        ]
    )
    assert not results["fresh"]["accepted"]  # no part for call-1 in a fresh message
    assert "call-1" in str(results["fresh"]["error"])
    assert results["continued"]["accepted"], results["continued"]["error"]
    states = {
        p["toolCallId"]: p["state"]
        for m in results["continued"]["messages"]
        for p in m.get("parts", [])
        if "toolCallId" in p
    }
    assert states == {"call-1": "output-denied", "call-2": "output-available"}

    fresh = check_bytes(BODY, protocol="ai-sdk", major=major)
    assert [v.rule_id for v in fresh.errors] == ["ai-sdk/stream/tool-chunk-for-unknown-call"] * 2
    continued = check_bytes(BODY, protocol="ai-sdk", major=major, continues=EARLIER)
    assert not continued.errors and not continued.warnings


def test_the_option_names_calls_not_a_blanket_pass() -> None:
    checker = AiSdkChecker(7, continues=["call-1"])
    checker.feed(BODY)
    checker.close()
    assert [v.ids for v in checker.report.errors] == [("call-2",)]


def test_the_cli_takes_continues(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "continuation.sse"
    path.write_bytes(BODY)
    assert main(["check", str(path), "--protocol", "ai-sdk"]) == 1
    capsys.readouterr()
    args = ["check", str(path), "--protocol", "ai-sdk", "--ai-sdk-major", "all"]
    assert main([*args, "--continues", "call-1", "--continues", "call-2"]) == 1  # v5: denied
    out = capsys.readouterr().out
    assert "unknown-type" in out and "tool-chunk-for-unknown-call" not in out
    assert main(["check", str(path), "--continues", "call-1", "--continues", "call-2"]) == 0
