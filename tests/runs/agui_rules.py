"""The AG-UI 1.0 verify rules the prelude and resumed streams must pass, for the run tests.

A thin wrapper over the project's conformance kit (``conformance.agui.AguiChecker``, whose
error-level verdicts are proven against ``@ag-ui/client`` 1.0 in tests/conformance): schema,
chunk expansion and every ``verifyEvents`` rule. Streams may end mid-run (a resumed tail), so
the end-of-stream hygiene check is not run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conformance.agui import AguiChecker


class VerifyError(AssertionError):
    """A stream the real client would reject; the message names the event index and rule."""


def verify(events: Iterable[dict[str, Any]]) -> None:
    """Raise :class:`VerifyError` naming the first error-level violation, if any."""
    checker = AguiChecker()
    for event in events:
        checker.feed_payload(event)
    errors = checker.report.errors
    if errors:
        first = errors[0]
        raise VerifyError(f"event {first.index}: {first.rule_id}: {first.message}")
