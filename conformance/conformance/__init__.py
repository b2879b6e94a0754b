"""agui-conformance: check AG-UI and AI SDK UI message streams against the real clients' rules.

Every error-level rule is one a real client enforces (``@ag-ui/client`` 1.0.0; ``ai`` 5.0.277,
6.0.326, 7.0.173), proven by the differential tests in ``tests/conformance``; warnings are
hygiene (legal but harmful). Entry points:

* :func:`check_bytes` — one captured stream (SSE body, JSON lines or JSON array) -> ``Report``;
* :func:`check_events` — an AG-UI event sequence in memory (wire dicts or ``ag_ui.core``
  events) -> ``Report``;
* :class:`AguiChecker` / :class:`AiSdkChecker` — incremental checkers (``feed`` bytes);
* :func:`run_endpoint` — POST a RunAgentInput to a live AG-UI endpoint, check as it streams;
* :func:`run_live` — check a live AG-UI or AI SDK endpoint over the stdlib (transport faults
  as violations);
* :data:`RULES` — the rule catalogue (stable ids, :class:`Rule`, :data:`Severity`); the CLI is
  ``agui-conformance`` (:mod:`conformance.cli`);
* report types: :class:`Report`, :class:`Violation` and the formatters :func:`format_table`,
  :func:`format_json`, :func:`format_junit`, :func:`format_sarif`.

These names are the public API (``tests/conformance/test_exported_members.py`` pins them).

Uses ``agui_codecs`` (legal transitions from :mod:`agui_codecs.transitions`), never gateway
internals.
"""

from .agui import AguiChecker
from .ai_sdk import AiSdkChecker
from .inputs import check_bytes, check_events, detect_form, detect_protocol, make_checker
from .live import LiveResult, run_live
from .net import NetError, fetch, run_endpoint
from .report import Report, Violation, format_json, format_junit, format_table
from .rules import RULES, Rule, Severity
from .sarif import format_sarif

__all__ = [
    "RULES",
    "AguiChecker",
    "AiSdkChecker",
    "LiveResult",
    "NetError",
    "Report",
    "Rule",
    "Severity",
    "Violation",
    "check_bytes",
    "check_events",
    "detect_form",
    "detect_protocol",
    "fetch",
    "format_json",
    "format_junit",
    "format_sarif",
    "format_table",
    "make_checker",
    "run_endpoint",
    "run_live",
]
