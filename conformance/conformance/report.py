"""Violations, the report of one checked stream, and the text, JSON and JUnit formats.

A :class:`Violation` is one rule broken at one event, with the severity its rule has under the
report's profile; a :class:`Report` collects them for one stream and one client profile
(``agui``, ``agui@1.1``, ``ai-sdk@5``, ``ai-sdk@6``, ``ai-sdk@7``). The stream is rejected by
that client exactly when the report has an error-level violation (:attr:`Report.rejected`).

The client stops at the first error (:attr:`Report.fatal`): the later violations that share an
id with it are its cascade (:meth:`Report.cascade`), the rest were never reached by the client
but are reported so that one run shows every fault. Formats: :func:`format_table` (human: the
fatal error marked, its cascade indented under it), :func:`format_json` (machine: one object,
stable keys), :func:`format_junit` (JUnit XML: one test case per stream, one failure per
error, warnings and notices in ``system-out``) and SARIF (:mod:`conformance.sarif`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .rules import SEVERITY_RANK, Severity, rule

__all__ = ["FailOn", "Report", "Violation", "format_json", "format_junit", "format_table"]

FailOn = str
"""``error``, ``warning``, ``info`` or ``never``: the lowest severity that fails a CLI run."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One rule broken at one event.

    Attributes:
        rule_id: a key of :data:`conformance.rules.RULES`.
        index: 0-based index of the event in the input (the SSE event, JSON line or array
            element), or ``None`` for stream-level findings.
        message: one line saying what is wrong.
        ids: the message / tool call / step ids involved.
        severity: under the report's profile; by default the rule's own severity.
        line: 1-based line of the event in the input, when known.
    """

    rule_id: str
    index: int | None
    message: str
    ids: tuple[str, ...] = ()
    severity: Severity = field(default=None)  # type: ignore[arg-type]
    line: int | None = None

    def __post_init__(self) -> None:
        if self.severity is None:
            object.__setattr__(self, "severity", rule(self.rule_id).severity)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: ``rule``, ``severity``, ``index``, ``ids``, ``message`` (and
        ``line`` when known)."""
        out: dict[str, Any] = {
            "rule": self.rule_id,
            "severity": self.severity,
            "index": self.index,
            "ids": list(self.ids),
            "message": self.message,
        }
        if self.line is not None:
            out["line"] = self.line
        return out


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
    def notices(self) -> list[Violation]:
        """Info-level violations."""
        return [v for v in self.violations if v.severity == "info"]

    @property
    def rejected(self) -> bool:
        """True when the profile's real client would reject the stream."""
        return any(v.severity == "error" for v in self.violations)

    @property
    def fatal(self) -> Violation | None:
        """The first error: where the client throws and stops reading."""
        return next((v for v in self.violations if v.severity == "error"), None)

    def cascade(self) -> list[Violation]:
        """Violations after :attr:`fatal` that share an id with it (its follow-on faults)."""
        fatal = self.fatal
        if fatal is None or not fatal.ids:
            return []
        ids = set(fatal.ids)
        at = self.violations.index(fatal)
        return [v for v in self.violations[at + 1 :] if ids & set(v.ids)]

    def failed(self, fail_on: FailOn = "error") -> bool:
        """True when a violation is at least ``fail_on`` severe (``never``: always False).

        Raises:
            ValueError: unknown ``fail_on``.
        """
        if fail_on == "never":
            return False
        if fail_on not in SEVERITY_RANK:
            raise ValueError(f"unknown severity {fail_on!r} (error, warning, info or never)")
        floor = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[v.severity] >= floor for v in self.violations)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict of the whole report: counts per severity, ``fatal`` (the position
        of the first error in ``violations``, or null) and ``cascade`` (positions of its
        follow-on faults)."""
        fatal = self.fatal
        position = {id(v): n for n, v in enumerate(self.violations)}
        return {
            "source": self.source,
            "profile": self.profile,
            "events": self.events,
            "rejected": self.rejected,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "notices": len(self.notices),
            "fatal": None if fatal is None else position[id(fatal)],
            "cascade": [position[id(v)] for v in self.cascade()],
            "violations": [v.to_json() for v in self.violations],
        }


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _line(v: Violation, indent: str = "  ", mark: str = "") -> str:
    where = "-" if v.index is None else str(v.index)
    ids = ",".join(v.ids) or "-"
    return (
        f"{indent}{v.severity:<7} {where:>5}  {v.rule_id:<46} {_clip(ids, 24):<24} "
        f"{v.message}{mark}"
    )


def format_table(
    reports: Sequence[Report], *, verbose: bool = True, limit_per_rule: int | None = 5
) -> str:
    """Human-readable text: per stream a verdict line and, if ``verbose``, one line per
    violation (``severity  index  rule  ids  message``), at most ``limit_per_rule`` per rule
    (the rest counted in one line). The fatal error is marked ``<- the client stops here``
    and its cascade is indented under it (``↳``). Several streams end with a summary table."""
    lines: list[str] = []
    for report in reports:
        verdict = "REJECTED" if report.rejected else "accepted"
        lines.append(
            f"{report.source} [{report.profile}]: {verdict}, {report.events} events, "
            f"{len(report.errors)} errors, {len(report.warnings)} warnings, "
            f"{len(report.notices)} notices"
        )
        if verbose:
            fatal = report.fatal
            cascade = report.cascade()
            in_cascade = {id(v) for v in cascade}
            seen: dict[str, int] = {}
            for v in report.violations:
                if id(v) in in_cascade:
                    continue
                seen[v.rule_id] = seen.get(v.rule_id, 0) + 1
                if limit_per_rule is not None and seen[v.rule_id] > limit_per_rule:
                    continue
                if v is fatal:
                    lines.append(_line(v, mark="  <- the client stops here"))
                    shown = cascade if limit_per_rule is None else cascade[:limit_per_rule]
                    lines += [_line(c, indent="    ↳ ") for c in shown]
                    if len(shown) < len(cascade):
                        lines.append(f"    ↳ ... {len(cascade) - len(shown)} more follow-on")
                else:
                    lines.append(_line(v))
            for rule_id, count in seen.items():
                if limit_per_rule is not None and count > limit_per_rule:
                    lines.append(f"  ... {count - limit_per_rule} more {rule_id}")
    if len(reports) > 1:
        width = max(len(r.source) for r in reports)
        lines.append("")
        lines.append(f"{'stream':<{width}}  profile    events errors warnings notices verdict")
        for r in reports:
            lines.append(
                f"{r.source:<{width}}  {r.profile:<9} {r.events:>7} {len(r.errors):>6} "
                f"{len(r.warnings):>8} {len(r.notices):>7} {'REJECTED' if r.rejected else 'ok'}"
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
        rest = r.warnings + r.notices
        if rest:
            text = "\n".join(f"{v.severity} {v.rule_id} @{v.index}: {v.message}" for v in rest)
            out.append(f"    <system-out>{escape(text)}</system-out>")
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
