"""SARIF 2.1.0 output: one run of the ``agui-conformance`` tool, one result per violation.

Follows the OASIS SARIF 2.1.0 standard (``sarif-schema-2.1.0.json``) in the subset code
scanning services read: ``runs[0].tool.driver.rules`` holds every rule that has a result
(``id``, ``shortDescription``, ``fullDescription`` (why), ``help`` (fix), ``helpUri``,
``defaultConfiguration.level``), each result names its ``ruleId`` and ``ruleIndex``, its
``level`` (``error`` / ``warning`` / ``note`` for info) and a location: the checked file
(``artifactLocation.uri``) with the event's line when the reader knew it, and the event index
as a logical location. ``properties`` carry the profile, the ids, and ``fatal`` / ``cascade``
marks of :class:`~conformance.report.Report`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from .report import Report, Violation
from .rule_docs import doc
from .rules import RULES

__all__ = ["SARIF_SCHEMA", "format_sarif"]

SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL: Final = {"error": "error", "warning": "warning", "info": "note"}


def _rule(rule_id: str) -> dict[str, Any]:
    rule, text = RULES[rule_id], doc(rule_id)
    out: dict[str, Any] = {
        "id": rule_id,
        "name": rule_id.rsplit("/", 1)[1],
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": text.why},
        "help": {"text": text.fix or rule.summary},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"source": rule.source, "spec": text.spec},
    }
    if text.spec.startswith("http"):
        out["helpUri"] = text.spec
    return out


def _location(report: Report, v: Violation) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": report.source}}
    if v.line is not None:
        physical["region"] = {"startLine": v.line}
    location: dict[str, Any] = {"physicalLocation": physical}
    if v.index is not None:
        location["logicalLocations"] = [{"name": f"event {v.index}", "kind": "element"}]
    return location


def format_sarif(reports: Sequence[Report]) -> str:
    """The reports as one SARIF 2.1.0 log (indented JSON)."""
    used = sorted({v.rule_id for r in reports for v in r.violations})
    index = {rule_id: n for n, rule_id in enumerate(used)}
    results: list[dict[str, Any]] = []
    for report in reports:
        fatal = report.fatal
        cascade = {id(v) for v in report.cascade()}
        for v in report.violations:
            results.append(
                {
                    "ruleId": v.rule_id,
                    "ruleIndex": index[v.rule_id],
                    "level": _LEVEL[v.severity],
                    "message": {"text": v.message},
                    "locations": [_location(report, v)],
                    "properties": {
                        "profile": report.profile,
                        "index": v.index,
                        "ids": list(v.ids),
                        "fatal": v is fatal,
                        "cascade": id(v) in cascade,
                    },
                }
            )
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "agui-conformance",
                        "rules": [_rule(rule_id) for rule_id in used],
                    }
                },
                "results": results,
                "artifacts": [{"location": {"uri": r.source}} for r in reports],
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
