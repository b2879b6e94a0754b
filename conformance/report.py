"""Violations, the report of one checked stream, and the three output formats.

A :class:`Violation` is one rule broken at one event; a :class:`Report` collects them for one
stream and one client profile (``agui``, ``ai-sdk@5``, ``ai-sdk@6``, ``ai-sdk@7``). The stream
is rejected by that client exactly when the report has an error-level violation
(:attr:`Report.rejected`). Formats: :func:`format_table` (human), :func:`format_json`
(machine: one object, stable keys) and :func:`format_junit` (JUnit XML: one test case per
stream, one failure per error, warnings in ``system-out``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .rules import Severity, rule

__all__ = ["Report", "Violation", "format_json", "format_junit", "format_table"]


@dataclass(frozen=True, slots=True)
class Violation:
    """One rule broken at one event.

    Attributes:
        rule_id: a key of :data:`conformance.rules.RULES`.
        index: 0-based index of the event in the input (the SSE event, JSON line or array
            element), or ``None`` for stream-level findings.
        message: one line saying what is wrong.
        ids: the message / tool call / step ids involved.
    """

    rule_id: str
    index: int | None
    message: str
    ids: tuple[str, ...] = ()

    @property
    def severity(self) -> Severity:
        """``error`` (a real client rejects the stream) or ``warning``."""
        return rule(self.rule_id).severity

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: ``rule``, ``severity``, ``index``, ``ids``, ``message``."""
        return {
            "rule": self.rule_id,
            "severity": self.severity,
            "index": self.index,
            "ids": list(self.ids),
            "message": self.message,
        }


@dataclass(slots=True)
class Report:
    """The verdict on one stream for one client profile.

    Attributes:
        source: file name or URL.
        profile: ``"agui"`` or ``"ai-sdk@<major>"``.
        events: number of events (payloads) read.
        violations: in the order found.
    """

    source: str
    profile: str
    events: int = 0
    violations: list[Violation] = field(default_factory=list)

    @property
    def errors(self) -> list[Violation]:
        """Error-level violations."""
        return [v for v in self.violations if v.severity == "error"]

    @property
    def warnings(self) -> list[Violation]:
        """Warning-level violations."""
        return [v for v in self.violations if v.severity == "warning"]

    @property
    def rejected(self) -> bool:
        """True when the profile's real client would reject the stream."""
        return any(v.severity == "error" for v in self.violations)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of the whole report."""
        return {
            "source": self.source,
            "profile": self.profile,
            "events": self.events,
            "rejected": self.rejected,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "violations": [v.to_json() for v in self.violations],
        }


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(
    reports: Sequence[Report], *, verbose: bool = True, limit_per_rule: int | None = 5
) -> str:
    """Human-readable text: per stream a verdict line and, if ``verbose``, one line per
    violation (``severity  index  rule  ids  message``), at most ``limit_per_rule`` per rule
    (the rest counted in one line); several streams end with a summary table."""
    lines: list[str] = []
    for report in reports:
        verdict = "REJECTED" if report.rejected else "accepted"
        lines.append(
            f"{report.source} [{report.profile}]: {verdict}, {report.events} events, "
            f"{len(report.errors)} errors, {len(report.warnings)} warnings"
        )
        if verbose:
            seen: dict[str, int] = {}
            for v in report.violations:
                seen[v.rule_id] = seen.get(v.rule_id, 0) + 1
                if limit_per_rule is not None and seen[v.rule_id] > limit_per_rule:
                    continue
                where = "-" if v.index is None else str(v.index)
                ids = ",".join(v.ids) or "-"
                lines.append(
                    f"  {v.severity:<7} {where:>5}  {v.rule_id:<46} {_clip(ids, 24):<24} "
                    f"{v.message}"
                )
            for rule_id, count in seen.items():
                if limit_per_rule is not None and count > limit_per_rule:
                    lines.append(f"  ... {count - limit_per_rule} more {rule_id}")
    if len(reports) > 1:
        width = max(len(r.source) for r in reports)
        lines.append("")
        lines.append(f"{'stream':<{width}}  profile    events errors warnings verdict")
        for r in reports:
            lines.append(
                f"{r.source:<{width}}  {r.profile:<9} {r.events:>7} {len(r.errors):>6} "
                f"{len(r.warnings):>8} {'REJECTED' if r.rejected else 'ok'}"
            )
        rejected = sum(r.rejected for r in reports)
        lines.append(f"{len(reports)} streams, {rejected} rejected")
    return "\n".join(lines) + "\n"


def format_json(reports: Sequence[Report]) -> str:
    """``{"reports": [...], "rejected": n}`` as indented JSON."""
    body = {"reports": [r.to_json() for r in reports], "rejected": sum(r.rejected for r in reports)}
    return json.dumps(body, indent=2, ensure_ascii=False) + "\n"


def format_junit(reports: Sequence[Report]) -> str:
    """JUnit XML: one ``testcase`` per stream, a ``failure`` per error-level violation."""
    failures = sum(r.rejected for r in reports)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuite name="agui-conformance" tests="{len(reports)}" failures="{failures}">',
    ]
    for r in reports:
        name = quoteattr(f"{r.source} [{r.profile}]")
        out.append(f'  <testcase classname="agui-conformance" name={name}>')
        for v in r.errors:
            message = quoteattr(f"{v.rule_id}: {v.message}")
            out.append(f"    <failure message={message} type={quoteattr(v.rule_id)}>")
            out.append(escape(json.dumps(v.to_json(), ensure_ascii=False)))
            out.append("    </failure>")
        if r.warnings:
            text = "\n".join(f"{v.rule_id} @{v.index}: {v.message}" for v in r.warnings)
            out.append(f"    <system-out>{escape(text)}</system-out>")
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
