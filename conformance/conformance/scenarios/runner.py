"""Run the scenarios against an adapter endpoint and judge each one three ways.

For each scenario :func:`run_scenarios` POSTs a run whose user message names the scenario
(``scenario: <name>``) with the scenario tools declared as frontend tools (AG-UI ``tools``),
checks the stream live (:func:`conformance.live.run_live`), and when the run ends with tool
calls that got no result (frontend calls) sends the next run with the results, as a frontend
would (at most four runs). Then:

* the kit's verdict: every run's :class:`~conformance.report.Report`;
* the real client's verdict, when ``clients`` names a client harness (a folder holding
  ``replay.mjs`` and its ``node_modules``, such as this repository's ``tests/harness``; its
  protocol is in its README): each capture replayed through ``@ag-ui/client`` or ``ai``;
* data checks, on what the client would keep (events up to the first error the client
  throws): the text of the turns the model server served arrived whole and once, and every
  scripted tool call arrived with its name and arguments (JSON-equal).

``cancel`` reads a few events, goes away, and checks that the adapter stopped its model
request (the model server saw the disconnect).
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agui import AguiChecker
from ..ai_sdk import AiSdkChecker
from ..inputs import Checker, Protocol
from ..live import LiveResult, run_live
from ..report import Report
from .model_server import ModelServer
from .scripts import SCENARIOS, TOOLS, Calls, Scenario, Text

__all__ = ["ScenarioResult", "format_results", "run_scenarios"]

_MAX_RUNS = 4
_CANCEL_AFTER_EVENTS = 5
_DISCONNECT_WAIT_S = 60.0
_REPLAY_TIMEOUT_MS = 60_000


@dataclass(slots=True)
class ScenarioResult:
    """One scenario against one endpoint.

    Attributes:
        reports: the kit's report of every run (a frontend round trip has several).
        captures: the body of every run.
        client: the real client's verdict per run (``{"accepted", "error"}``), when a client
            harness was given.
        data: data-check findings (empty: every scripted byte arrived once).
        requests: the model requests of the scenario (``(api, turn)``).
    """

    scenario: str
    reports: list[Report] = field(default_factory=list)
    captures: list[bytes] = field(default_factory=list)
    client: list[dict[str, Any]] | None = None
    data: list[str] = field(default_factory=list)
    requests: list[tuple[str, int]] = field(default_factory=list)

    @property
    def rejected(self) -> bool:
        """The kit rejects one of the runs."""
        return any(r.rejected for r in self.reports)

    @property
    def ok(self) -> bool:
        """No run rejected (kit and client), and every data check passed."""
        client_ok = self.client is None or all(c["accepted"] for c in self.client)
        return not self.rejected and client_ok and not self.data


class _Fold:
    """What the client keeps: text per message, arguments per call, until the first error."""

    def __init__(self) -> None:
        self.report: Report | None = None
        self.texts: dict[str, list[str]] = {}
        self.calls: dict[str, tuple[str, list[str]]] = {}
        self.results: set[str] = set()
        self.dead = False

    def __call__(self, ev: dict[str, Any]) -> None:
        if self.dead or (self.report is not None and self.report.rejected):
            self.dead = True
            return
        kind = ev.get("type")
        if kind == "TEXT_MESSAGE_CONTENT":
            self.texts.setdefault(str(ev.get("messageId")), []).append(str(ev.get("delta")))
        elif kind == "TOOL_CALL_START":
            self.calls.setdefault(str(ev["toolCallId"]), (str(ev.get("toolCallName")), []))
        elif kind == "TOOL_CALL_ARGS" and str(ev.get("toolCallId")) in self.calls:
            self.calls[str(ev["toolCallId"])][1].append(str(ev.get("delta")))
        elif kind == "TOOL_CALL_RESULT":
            self.results.add(str(ev.get("toolCallId")))

    def fold_ai(self, capture: bytes) -> None:
        """The AI SDK form: text-delta by id, tool-input deltas / available input by call."""
        from ..framing import EventSourceSplitter

        splitter = EventSourceSplitter()
        for payload in splitter.feed(capture) + splitter.close():
            try:
                chunk = json.loads(payload.text)
            except ValueError:
                continue
            if not isinstance(chunk, dict):
                continue
            kind, cid = chunk.get("type"), str(chunk.get("toolCallId"))
            if kind == "text-delta":
                self.texts.setdefault(str(chunk.get("id")), []).append(str(chunk.get("delta")))
            elif kind == "tool-input-start":
                self.calls.setdefault(cid, (str(chunk.get("toolName")), []))
            elif kind == "tool-input-delta" and cid in self.calls:
                self.calls[cid][1].append(str(chunk.get("inputTextDelta")))
            elif kind == "tool-input-available" and not (self.calls.get(cid, ("", [""]))[1]):
                self.calls[cid] = (str(chunk.get("toolName")), [json.dumps(chunk.get("input"))])
            elif kind in ("tool-output-available", "tool-output-error"):
                self.results.add(cid)


def _agui_input(scenario: Scenario, run: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "threadId": f"thread-{scenario.name}",
        "runId": f"run-{scenario.name}-{run}",
        "state": {},
        "messages": messages,
        "tools": TOOLS,
        "context": [],
        "forwardedProps": {},
    }


def _ai_input(scenario: Scenario) -> dict[str, Any]:
    text = f"scenario: {scenario.name}. Go ahead."
    return {
        "id": f"chat-{scenario.name}",
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": text}]}],
        "tools": TOOLS,
    }


def _expected(server: ModelServer, scenario: Scenario) -> tuple[str, list[Any]]:
    text, calls = "", []
    for turn_no in server.served(scenario.name):
        for part in server.turn(scenario.name, turn_no):
            if isinstance(part, Text):
                text += part.text
            elif isinstance(part, Calls):
                calls += list(part.calls)
    return text, calls


def _data_checks(fold: _Fold, server: ModelServer, scenario: Scenario) -> list[str]:
    findings: list[str] = []
    text, calls = _expected(server, scenario)
    got = "".join("".join(parts) for parts in fold.texts.values())
    if got != text:
        if got and text and got == text * (len(got) // len(text)):
            findings.append("text arrived more than once")
        elif text.startswith(got):
            findings.append(f"text lost: {len(text) - len(got)} of {len(text)} characters missing")
        else:
            findings.append(f"text differs: expected {text[:60]!r}, got {got[:60]!r}")
    by_name: dict[str, list[str]] = {}
    for name, parts in fold.calls.values():
        by_name.setdefault(name, []).append("".join(parts))
    for call in calls:
        seen = by_name.get(call.name, [])
        if not seen:
            findings.append(f"tool call {call.name!r} never arrived")
            continue
        try:
            parsed = [json.loads(a) if a else None for a in seen]
        except ValueError:
            parsed = []
        if call.arguments not in parsed:
            findings.append(
                f"tool call {call.name!r}: arguments {seen[0][:60]!r} are not the scripted "
                f"{''.join(call.pieces)[:60]!r}"
            )
    return findings


def _round_trip(
    fold: _Fold, scenario: Scenario, messages: list[dict[str, Any]], run: int
) -> list[dict[str, Any]] | None:
    pending = [(cid, nc) for cid, nc in fold.calls.items() if cid not in fold.results]
    if not pending:
        return None
    calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": "".join(a)}}
        for cid, (name, a) in pending
    ]
    out = [*messages, {"id": f"a{run}", "role": "assistant", "toolCalls": calls}]
    fold.results.update(cid for cid, _ in pending)
    for cid, (name, _) in pending:
        result = scenario.results.get(name, f"unknown tool {name}")
        out.append({"id": f"t{run}-{cid}", "role": "tool", "toolCallId": cid, "content": result})
    return out


def _replay(clients: Path, jobs: list[tuple[str, str, bytes]]) -> dict[str, dict[str, Any]]:
    request = {
        "jobs": [
            {"id": i, "client": c, "body_b64": base64.b64encode(b).decode()} for i, c, b in jobs
        ],
        # a verdict, not a race: long captures (ag-ui-langgraph's RAW events make a reasoning run
        # 0.7 MB) take seconds on a loaded machine, and a harness timeout is no client verdict
        "timeout_ms": _REPLAY_TIMEOUT_MS,
    }
    done = subprocess.run(
        ["node", str((clients / "replay.mjs").resolve())],
        input=json.dumps(request).encode(),
        capture_output=True,
        cwd=clients,
        timeout=120 + len(jobs) * _REPLAY_TIMEOUT_MS / 1000,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"client harness failed: {done.stderr.decode('utf-8', 'replace')}")
    results: list[dict[str, Any]] = json.loads(done.stdout)["results"]
    return {r["id"]: r for r in results}


def _run_one(
    url: str,
    scenario: Scenario,
    server: ModelServer,
    protocol: Protocol,
    major: int,
    headers: dict[str, str],
    timeout: float,
) -> tuple[ScenarioResult, _Fold]:
    result = ScenarioResult(scenario.name)
    fold = _Fold()
    text = f"scenario: {scenario.name}. Go ahead."
    messages: list[dict[str, Any]] = [{"id": "u1", "role": "user", "content": text}]
    for run in range(1, _MAX_RUNS + 1):
        body = _ai_input(scenario) if protocol == "ai-sdk" else _agui_input(scenario, run, messages)

        def stop(checker: Checker) -> bool:
            return scenario.cancel and checker.report.events >= _CANCEL_AFTER_EVENTS

        checker: Checker = (
            AiSdkChecker(major, url) if protocol == "ai-sdk" else AguiChecker(url, on_event=fold)
        )
        fold.report = checker.report
        live: LiveResult = run_live(
            url,
            body,
            protocol=protocol,
            headers=headers,
            timeout=timeout,
            stop=stop,
            checker=checker,
        )
        result.reports.append(live.report)
        result.captures.append(live.capture)
        if protocol == "ai-sdk":
            fold.fold_ai(live.capture)
            break
        if scenario.cancel or live.report.rejected:
            break
        nxt = _round_trip(fold, scenario, messages, run)
        if nxt is None:
            break
        messages = nxt
    return result, fold


def run_scenarios(
    url: str,
    server: ModelServer,
    *,
    names: Sequence[str] | None = None,
    protocol: Protocol = "agui",
    major: int = 7,
    clients: Path | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> list[ScenarioResult]:
    """Run ``names`` (default: every scenario) against ``url``; the adapter must already call
    ``server`` for its model. Returns one :class:`ScenarioResult` per scenario.

    Raises:
        KeyError: an unknown scenario name.
        NetError: the endpoint cannot be reached.
    """
    out: list[ScenarioResult] = []
    for name in names or list(SCENARIOS):
        scenario = server.scenarios[name]
        before = len(server.requests)
        result, fold = _run_one(url, scenario, server, protocol, major, headers or {}, timeout)
        if scenario.cancel:
            # until the adapter drops its model request or reads it to the end
            deadline = time.monotonic() + _DISCONNECT_WAIT_S
            while (
                not server.disconnects.get(name)
                and not server.completed.get(name)
                and time.monotonic() < deadline
            ):
                time.sleep(0.05)
            if not server.disconnects.get(name):
                result.data.append("the model request went on after the client went away")
        else:
            result.data = _data_checks(fold, server, scenario)
        result.requests = [(api, turn) for api, n, turn in server.requests[before:] if n == name]
        out.append(result)
    if clients is not None:
        client = "agui" if protocol == "agui" else f"ai-v{major}"
        jobs = [(f"{r.scenario}|{n}", client, c) for r in out for n, c in enumerate(r.captures)]
        verdicts = _replay(clients, jobs)
        for r in out:
            r.client = [
                {
                    "accepted": verdicts[f"{r.scenario}|{n}"]["accepted"],
                    "error": verdicts[f"{r.scenario}|{n}"]["error"],
                }
                for n in range(len(r.captures))
            ]
    return out


def format_results(results: Sequence[ScenarioResult]) -> str:
    """One line per scenario (verdicts and data checks), then the kit's findings."""
    lines = [f"{'scenario':<16} {'kit':<9} {'client':<9} {'data':<5} findings"]
    for r in results:
        kit = "REJECTED" if r.rejected else "accepted"
        client = (
            "-"
            if r.client is None
            else ("accepted" if all(c["accepted"] for c in r.client) else "REJECTED")
        )
        fatal = next((rep.fatal for rep in r.reports if rep.fatal is not None), None)
        first = f"{fatal.rule_id}: {fatal.message}" if fatal else ""
        notes = "; ".join([first, *r.data] if first else r.data)
        lines.append(
            f"{r.scenario:<16} {kit:<9} {client:<9} {'ok' if not r.data else 'FAIL':<5} {notes}"
        )
    return "\n".join(lines) + "\n"
