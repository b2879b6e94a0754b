"""``agui-conformance`` (``conformance.cli.main``): check, run, corpus, rules; formats; exit codes."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import diffcorpus
import pytest
from loopback import serve

from conformance.cli import main

STREAMS = diffcorpus.STREAMS_DIR
GOOD = STREAMS / "agui" / "subagent-lifecycle.sse"
BAD = STREAMS / "agui" / "tool-args-after-end.sse"
AI_V7_ONLY = STREAMS / "ai-sdk" / "tool-approval-request-and-response.sse"


def test_check_prints_a_table_and_exits_0_when_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(GOOD)]) == 0
    out = capsys.readouterr().out
    assert "subagent-lifecycle.sse [agui]: accepted" in out


def test_check_exits_1_and_names_rule_index_and_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BAD), "--protocol", "agui"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "agui/verify/" in x)
    assert line.split()[:4] == ["error", "4", "agui/verify/tool-args-without-start", "a"]


def test_check_json_format_is_machine_readable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(BAD), "--format", "json"]) == 1
    body = json.loads(capsys.readouterr().out)
    (report,) = body["reports"]
    assert report["rejected"] and report["profile"] == "agui" and body["rejected"] == 1
    assert report["violations"][0] == {
        "rule": "agui/verify/tool-args-without-start", "severity": "error", "index": 4,
        "ids": ["a"], "message": "TOOL_CALL_ARGS: no open tool-call with id 'a'", "line": 9,
    }  # fmt: skip
    assert report["fatal"] == 0 and report["cascade"] == []


def test_check_junit_has_one_failure_per_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(AI_V7_ONLY), "--ai-sdk-major", "all", "--format", "junit"]) == 1
    suite = ET.fromstring(capsys.readouterr().out)
    assert suite.get("tests") == "3" and suite.get("failures") == "2"  # v6 and v5 reject
    names = [case.get("name") for case in suite]
    assert all(str(AI_V7_ONLY) in (n or "") for n in names)


def test_table_shows_five_violations_per_rule_unless_all(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}]
    events += [{"type": "CUSTOM", "name": "x", "value": i, "extra": i} for i in range(8)]
    events += [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    path = tmp_path / "noisy.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events))
    assert main(["check", str(path)]) == 0
    assert "... 3 more agui/schema/unknown-field" in capsys.readouterr().out
    assert main(["check", str(path), "--all"]) == 0
    assert capsys.readouterr().out.count("agui/schema/unknown-field") == 8


def test_check_and_run_reach_live_endpoints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse
    from starlette.routing import Route

    seen: list[Any] = []

    async def run(request: Request) -> StreamingResponse:
        seen.append(await request.json())

        async def body() -> AsyncIterator[bytes]:
            yield BAD.read_bytes()

        return StreamingResponse(body(), media_type="text/event-stream")

    async def capture(_: Request) -> Response:
        return Response(GOOD.read_bytes(), media_type="text/event-stream")

    app = Starlette(routes=[Route("/run", run, methods=["POST"]), Route("/capture", capture)])
    run_input = tmp_path / "run.json"
    run_input.write_text(json.dumps({"threadId": "t", "runId": "r", "messages": []}))
    with serve(app) as url:
        assert main(["check", f"{url}/capture"]) == 0
        assert main(["run", f"{url}/run", "--input", str(run_input)]) == 1
        assert main(["check", f"{url}/missing"]) == 2
    out = capsys.readouterr().out
    assert "agui/verify/tool-args-without-start" in out
    assert seen == [{"threadId": "t", "runId": "r", "messages": []}]


def test_corpus_summarises_a_directory_with_a_progress_bar(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (GOOD, BAD, AI_V7_ONLY):
        shutil.copy(path, tmp_path / path.name)
    (tmp_path / "README.md").write_text("not a stream")
    assert main(["corpus", str(tmp_path), "--progress"]) == 1  # one AG-UI stream is rejected
    captured = capsys.readouterr()
    assert "3 streams, 1 rejected" in captured.out  # README.md is skipped
    assert "[##############################] 3/3" in captured.err


def test_corpus_exit_status_counts_rejections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(BAD, tmp_path / BAD.name)
    assert main(["corpus", str(tmp_path)]) == 1
    assert capsys.readouterr().err == "", "no progress bar without a TTY or --progress"


def test_usage_and_io_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "/nonexistent/stream.sse"]) == 2
    assert main(["corpus", "/nonexistent"]) == 2
    assert "agui-conformance:" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["check"])
    assert exc.value.code == 2


def test_rules_lists_every_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance import RULES

    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(RULES)
