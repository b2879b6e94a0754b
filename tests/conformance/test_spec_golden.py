"""The AG-UI ``spec/1.1`` conformance streams of ag-ui-protocol/ag-ui as golden tests of the
kit's ``--profile 1.1`` (issue 17), with the fatal-rule streams of the spec's draft.

The streams are data under ``tests/corpus/agui-spec/`` (MANIFEST entry in
``tests/corpus/MANIFEST.md``). Each is framed as SSE (``data: <json>`` and a blank line, as the
upstream TypeScript lane serves it) and checked; the fixture's expectations map to the kit's
report as follows:

* ``outcome: failed`` <=> the report is rejected (an error-level violation), ``completed`` <=>
  it is not;
* ``noWarnings`` => no warning (and no error); notices (info) are allowed: they are the kit's
  "the client does not care" level;
* ``warnings`` (non-empty) => at least one violation is reported, except for fixtures that pin
  a client era (``client.maxProtocolVersion``): their warnings come from the client's own
  downgrade shims for an old peer, which a stream checker cannot see.

The rule the client would throw at (the report's fatal violation) is pinned per failing
fixture in :data:`FATAL`. The same streams are also replayed through the stock
``@ag-ui/client`` 1.0.0, whose verdict must equal the kit's ``--profile 1.0`` verdict (the
draft's fatal rules are warnings there).

Expectations about the client's rebuilt conversation (``messages``, ``state``, ``request``)
are the client's reducer, not the stream's legality, and are not asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from corpus import CORPUS_DIR
from diffcorpus import frame
from real_clients import replay, require_harness

from conformance import check_bytes

SPEC_DIR = CORPUS_DIR / "agui-spec"


def _fixtures() -> list[Any]:
    out = []
    for version in ("1.1", "draft"):
        folder = SPEC_DIR / version
        listed = (folder / "MANIFEST.txt").read_text("utf-8").split()
        for name in listed:
            out.append(pytest.param(folder / name, id=f"{version}/{name.removesuffix('.json')}"))
    return out


FIXTURES = _fixtures()

FATAL = {
    "chunk-conflicting-role-fatal": "agui/chunks/field-disagrees-with-opener",
    "chunk-conflicting-tool-name-fatal": "agui/chunks/field-disagrees-with-opener",
    "content-without-start-fatal": "agui/verify/text-content-without-start",
    "custom-closes-chunk-stream-fatal": "agui/chunks/first-chunk-without-id",
    "event-after-run-finished-fatal": "agui/verify/event-after-run-finished",
    "first-chunk-missing-id-fatal": "agui/chunks/first-chunk-without-id",
    "first-event-not-run-started-fatal": "agui/verify/first-event-not-run-started",
    "first-tool-chunk-missing-name-fatal": "agui/chunks/first-tool-chunk-without-name",
    "malformed-known-field-fatal": "agui/schema/invalid-field",
    "nested-run-started-fatal": "agui/verify/run-started-while-active",
    "open-message-at-run-finished-fatal": "agui/verify/run-finished-while-open",
    "reasoning-discipline-verified": "agui/verify/reasoning-message-content-without-start",
    "reasoning-message-wrong-role-fatal": "agui/schema/invalid-field",
    "run-finished-with-active-subagent-fatal": "agui/verify/run-finished-while-open",
    "step-finished-without-start-fatal": "agui/verify/step-finished-not-started",
    "subagent-attribution-mismatch-fatal": "agui/verify/subagent-owner-mismatch",
    "subagent-finished-unstarted-fatal": "agui/verify/subagent-not-active",
    "subagent-started-missing-name-fatal": "agui/schema/missing-field",
    "unknown-enum-value-role-fatal": "agui/schema/invalid-field",
    "unknown-outcome-array-fatal": "agui/schema/invalid-field",
    "duplicate-interrupt-id-fatal": "agui/lifecycle/duplicate-interrupt-id",
    "run-finished-wrong-run-id-fatal": "agui/lifecycle/run-id-mismatch",
    "run-finished-wrong-thread-id-fatal": "agui/lifecycle/thread-id-mismatch",
    "second-run-on-another-thread-fatal": "agui/lifecycle/second-thread",
    "truncated-stream-fails-the-run": "agui/hygiene/no-terminal-event",
}
"""The rule the kit reports first for each failing fixture (its ``errorContains``, in our
terms)."""


def test_the_corpus_matches_its_manifests() -> None:
    for version, count in (("1.1", 68), ("draft", 5)):
        folder = SPEC_DIR / version
        listed = sorted((folder / "MANIFEST.txt").read_text("utf-8").split())
        assert listed == sorted(p.name for p in folder.glob("*.json"))
        assert len(listed) == count


@pytest.mark.parametrize("path", FIXTURES)
def test_spec_stream_verdict(path: Path) -> None:
    fixture = json.loads(path.read_text("utf-8"))
    assert fixture["name"] == path.stem
    expect = fixture["expect"]
    report = check_bytes(frame(fixture["stream"]), protocol="agui", profile="1.1")
    found = [v.to_json() for v in report.violations]
    assert report.rejected == (expect["outcome"] == "failed"), found
    if report.fatal is not None:
        assert report.fatal.rule_id == FATAL[path.stem], found
    if expect.get("noWarnings"):
        assert report.errors == [] and report.warnings == [], found
    if expect.get("warnings") and "client" not in fixture:
        assert report.violations, "the spec expects a warning"


def test_the_stock_client_agrees_with_the_1_0_profile_on_every_spec_stream() -> None:
    require_harness()
    bodies = {}
    for param in FIXTURES:
        path = param.values[0]
        bodies[path.stem] = frame(json.loads(path.read_text("utf-8"))["stream"])
    results = replay([(name, "agui", body) for name, body in bodies.items()])
    disagree = {
        name: (results[name]["error"], [v.rule_id for v in check_bytes(body).errors])
        for name, body in bodies.items()
        if check_bytes(body, protocol="agui").rejected == results[name]["accepted"]
    }
    assert disagree == {}
    lenient = {n for n in bodies if n in FATAL and results[n]["accepted"]}
    assert lenient == {  # the 1.1 draft's fatal rules, which 1.0.0 does not enforce
        "duplicate-interrupt-id-fatal", "run-finished-wrong-run-id-fatal",
        "run-finished-wrong-thread-id-fatal", "second-run-on-another-thread-fatal",
        "truncated-stream-fails-the-run",
    }  # fmt: skip
