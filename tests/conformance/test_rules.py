"""The rule catalogue: stable ids, and a witness stream for every rule the wire can reach.

Each witness (``diffcorpus.AGUI_WITNESSES`` / ``AI_SDK_WITNESSES``) is a minimal stream that
breaks exactly one rule. Here: the checker reports that rule for it, and an error-level witness
is rejected. The differential test replays the same witnesses through the real clients, which
is what proves that error-level rules are real rejections and warnings are not.
"""

from __future__ import annotations

import re

import diffcorpus
import pytest

from agui_codecs.transitions import Fault, UiFault
from conformance import RULES, check_bytes

IN_PROCESS_ONLY = {"agui/verify/subagent-field-invalid", "agui/verify/null-subagent-run-id"}
"""verify.ts checks the zod schema always catches first on the wire (null or missing fields)."""


def test_rule_ids_are_stable_and_well_formed() -> None:
    for rule_id, rule in RULES.items():
        assert rule.id == rule_id
        assert re.fullmatch(
            r"(agui|ai-sdk)/(sse|compat|schema|chunks|verify|stream|hygiene|lifecycle|transport)"
            r"/[a-z0-9-]+",
            rule_id,
        )
        assert rule.severity in ("error", "warning", "info")
        assert all(s in ("error", "warning", "info", None) for s in rule.profiles.values())
        assert rule.summary and rule.source
    assert {f"agui/verify/{f.value}" for f in Fault} <= set(RULES)
    assert {f"ai-sdk/stream/{f.value}" for f in UiFault} <= set(RULES)


def test_every_rule_has_a_witness_or_is_in_process_only() -> None:
    witnessed = set(diffcorpus.AGUI_WITNESSES) | set(diffcorpus.AI_SDK_WITNESSES)
    live_only = {r for r in RULES if "/transport/" in r}  # tests/conformance/test_live.py
    missing = set(RULES) - witnessed - IN_PROCESS_ONLY - live_only - {"agui/sse/buffer-overflow"}
    assert missing == set()


@pytest.mark.parametrize("rule_id", sorted(diffcorpus.AGUI_WITNESSES))
def test_agui_witness_breaks_its_rule(rule_id: str) -> None:
    report = check_bytes(diffcorpus.AGUI_WITNESSES[rule_id], protocol="agui")
    assert rule_id in {v.rule_id for v in report.violations}, report.violations
    assert report.rejected == (RULES[rule_id].severity == "error")


@pytest.mark.parametrize("rule_id", sorted(diffcorpus.AI_SDK_WITNESSES))
def test_ai_sdk_witness_breaks_its_rule(rule_id: str) -> None:
    major, body = diffcorpus.AI_SDK_WITNESSES[rule_id]
    report = check_bytes(body, protocol="ai-sdk", major=major)
    assert rule_id in {v.rule_id for v in report.violations}, report.violations
    assert report.rejected == (RULES[rule_id].severity == "error")


def test_buffer_overflow_without_event_boundary_is_rejected() -> None:
    body = b"data: " + b"x" * (10 * 1024 * 1024 + 1)
    report = check_bytes(body, protocol="agui")
    assert [v.rule_id for v in report.errors] == ["agui/sse/buffer-overflow"]
