"""The public API of the conformance kit is what ``conformance.__all__`` names (httpx's
``tests/test_exported_members.py`` is the model): every name in ``__all__`` exists, every public
attribute of the package is in ``__all__`` (submodules aside), and the list is pinned here."""

from __future__ import annotations

from types import ModuleType

import conformance

PINNED = {
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
}


def test_all_is_pinned_and_unique() -> None:
    assert len(conformance.__all__) == len(set(conformance.__all__))
    assert set(conformance.__all__) == PINNED


def test_every_exported_name_exists() -> None:
    assert [name for name in conformance.__all__ if not hasattr(conformance, name)] == []


def test_every_public_member_is_exported() -> None:
    public = {
        name
        for name, value in vars(conformance).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public == set(conformance.__all__)
