"""Reports people can act on (issue 17): severities, the fatal error and its cascade, --fail-on,
``explain``, the rules page, SARIF, exit codes in --help, and the CRLF auto-detection fix."""

from __future__ import annotations

import json
from pathlib import Path

import diffcorpus
import pytest
from diffcorpus import frame

from conformance import RULES, check_bytes
from conformance.cli import EXIT_CODES, main
from conformance.inputs import detect_protocol
from conformance.rule_docs import doc, explain, rules_markdown

ROOT = Path(__file__).resolve().parents[2]
RS = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.0"}
RF = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}

# the pydantic-ai interleaving shape: two parallel calls, a's END before a's last ARGS
INTERLEAVED = frame([
    RS,
    {"type": "TOOL_CALL_START", "toolCallId": "a", "toolCallName": "f"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": '{"x":'},
    {"type": "TOOL_CALL_END", "toolCallId": "a"},
    {"type": "TOOL_CALL_START", "toolCallId": "b", "toolCallName": "g"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": "1}"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "b", "delta": "{}"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "a", "delta": " "},
    {"type": "TOOL_CALL_END", "toolCallId": "b"},
    {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "h"},
    {"type": "TOOL_CALL_END", "toolCallId": "c"},
    {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "h"},
    RF,
])  # fmt: skip


def test_first_error_is_fatal_and_its_cascade_shares_its_ids() -> None:
    report = check_bytes(INTERLEAVED, protocol="agui")
    assert report.fatal is not None
    assert (report.fatal.rule_id, report.fatal.index) == ("agui/verify/tool-args-without-start", 5)
    cascade = report.cascade()
    assert [(v.rule_id, v.index) for v in cascade] == [("agui/verify/tool-args-without-start", 7)]
    # an independent later fault is not in the cascade
    later = [v for v in report.errors if v is not report.fatal and v not in cascade]
    assert [v.ids for v in later] == [("c",)]
    body = report.to_json()
    assert body["fatal"] == report.violations.index(report.fatal)
    assert body["cascade"] == [report.violations.index(v) for v in cascade]


def test_table_marks_the_fatal_error_and_indents_its_cascade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "interleaved.sse"
    path.write_bytes(INTERLEAVED)
    assert main(["check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    fatal = next(n for n, line in enumerate(lines) if "<- the client stops here" in line)
    assert lines[fatal].split()[:3] == ["error", "5", "agui/verify/tool-args-without-start"]
    assert lines[fatal + 1].lstrip().startswith("↳ error")


def test_severities_and_fail_on(tmp_path: Path) -> None:
    notice_only = tmp_path / "no-version.sse"
    notice_only.write_bytes(frame([{k: v for k, v in RS.items() if k != "protocolVersion"}, RF]))
    report = check_bytes(notice_only.read_bytes())
    assert [(v.rule_id, v.severity) for v in report.violations] == [
        ("agui/hygiene/missing-protocol-version", "info")
    ]
    assert not report.rejected and report.failed("info") and not report.failed("warning")
    assert main(["check", str(notice_only)]) == 0
    assert main(["check", str(notice_only), "--fail-on", "info"]) == 1
    warned = tmp_path / "no-end.sse"
    warned.write_bytes(frame([RS]))
    assert main(["check", str(warned)]) == 0
    assert main(["check", str(warned), "--fail-on", "warning"]) == 1
    assert main(["check", str(warned), "--profile", "1.1"]) == 1  # truncation is fatal in 1.1
    bad = tmp_path / "bad.sse"
    bad.write_bytes(INTERLEAVED)
    assert main(["check", str(bad), "--fail-on", "never"]) == 0


def test_missing_protocol_version_is_a_notice_as_the_client_is_quiet() -> None:
    """``@ag-ui/client`` 1.0.0 ``warnOnProducerDeclaration``: absent or older is quiet, newer or
    not MAJOR.MINOR warns (src/agent/agent.ts)."""

    def ids(version: str | None) -> list[tuple[str, str]]:
        start = (
            dict(RS)
            if version is not None
            else {k: v for k, v in RS.items() if k != "protocolVersion"}
        )
        if version is not None:
            start["protocolVersion"] = version
        return [(v.rule_id, v.severity) for v in check_bytes(frame([start, RF])).violations]

    assert ids(None) == [("agui/hygiene/missing-protocol-version", "info")]
    assert ids("1.0") == [] and ids("0.9") == []
    assert ids("1.1") == [("agui/hygiene/protocol-version-newer", "warning")]
    assert ids("1") == [("agui/hygiene/protocol-version-uninterpretable", "warning")]


def test_explain_prints_what_why_fix_source_and_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "agui/verify/tool-args-without-start"]) == 0
    out = capsys.readouterr().out
    for head in (
        "What:",
        "Why:",
        "Fix:",
        "Source: @ag-ui/client 1.0.0 src/verify/verify.ts",
        "Spec:",
    ):
        assert head in out
    assert main(["explain", "tool-args"]) == 2
    assert "agui/verify/tool-args-without-start?" in capsys.readouterr().err


def test_every_rule_has_prose() -> None:
    for rule_id in RULES:
        text = doc(rule_id)
        assert text.why and text.spec, rule_id
        assert explain(rule_id).startswith(rule_id)


def test_rules_page_is_current() -> None:
    """docs/conformance-rules.md is generated: `agui-conformance rules --markdown`."""
    page = (ROOT / "docs" / "conformance-rules.md").read_text("utf-8")
    assert page == rules_markdown(), (
        "run: agui-conformance rules --markdown > docs/conformance-rules.md"
    )
    assert all(f"### `{rule_id}`" in page for rule_id in RULES)


def test_exit_codes_are_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "exit status:" in out
    for code in EXIT_CODES:
        assert f"  {code}  " in out
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    assert "exit status:" in capsys.readouterr().out


def test_sarif_log_has_rules_results_levels_and_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "interleaved.sse"
    path.write_bytes(INTERLEAVED)
    assert main(["check", str(path), "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {r["ruleId"] for r in run["results"]}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    (first,) = [r for r in run["results"] if r["properties"]["fatal"]]
    assert first["level"] == "error" and first["ruleId"] == "agui/verify/tool-args-without-start"
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 11}  # event 5 starts on line 11 (two lines per event)
    assert first["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(path)


# -- auto-detection ------------------------------------------------------------------------------
def test_crlf_framed_ai_sdk_body_is_detected_as_ai_sdk() -> None:
    """sse-starlette frames with CRLF by default; the AG-UI splitter would merge the body."""
    body = frame([{"type": "start"}, {"type": "finish"}], done=True)
    for framing in (body, body.replace(b"\n", b"\r\n"), body.replace(b"\n", b"\r")):
        assert detect_protocol(framing) == "ai-sdk"
        assert not check_bytes(framing).rejected
    agui = frame([RS, RF])
    for framing in (agui, agui.replace(b"\n", b"\r\n")):
        assert detect_protocol(framing) == "agui"


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (diffcorpus.STREAMS_DIR / "ai-sdk").glob("*.sse"))
)
def test_stored_ai_sdk_streams_keep_their_detection_with_crlf(name: str) -> None:
    body = (diffcorpus.STREAMS_DIR / "ai-sdk" / name).read_bytes()
    if detect_protocol(body) == "ai-sdk":
        assert detect_protocol(body.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")) == "ai-sdk"


def test_jsonl_line_with_a_raw_line_separator_is_one_event() -> None:
    event = {"type": "CUSTOM", "name": "n", "value": "a\u2028b"}
    body = "\n".join(json.dumps(e, ensure_ascii=False) for e in (RS, event, RF)).encode()
    report = check_bytes(body)
    assert report.events == 3 and not report.rejected
