"""Verdicts proven against the real clients: for every stream and client, our error-level
verdict equals the client's reject (issue 4, "Done when").

Streams (``diffcorpus``): the hand-made cases in ``streams/``, our encoders' output for every
corpus file a registered decoder reads, the raw AG-UI and AI SDK corpus families, the ``agui``
decoder's output for the AG-UI family, and every mutation kind applied to good streams. One
Node process replays them all through ``@ag-ui/client`` 1.0.0 and ``ai`` 7 / 6 / 5.
"""

from __future__ import annotations

import json
from typing import Any

import diffcorpus
from corpus import CORPUS_DIR
from real_clients import replay, require_harness

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.protocols.agui.decoder import AguiDecoder
from conformance import check_bytes

CLIENTS = {"agui": ("agui",), "ai-sdk": ("ai-v7", "ai-v6", "ai-v5")}
VERDICTS = diffcorpus.STREAMS_DIR / "VERDICTS.json"


def _decoded_agui_family() -> list[diffcorpus.Stream]:
    out: list[diffcorpus.Stream] = []
    folder = CORPUS_DIR / "agui"
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        decoder = AguiDecoder()
        events = decoder.feed(path.read_bytes()) + decoder.close()
        agui, ai = AguiEncoder(), AiSdkEncoder()
        out.append((f"decoded/agui/{path.stem}", "agui", b"".join(map(agui.encode, events))))
        ai_body = b"".join(map(ai.encode, events)) + ai.close()
        out.append((f"decoded/ai-sdk/{path.stem}", "ai-sdk", ai_body))
    return out


def _all_streams() -> list[diffcorpus.Stream]:
    stored = diffcorpus.stored_streams()
    good = diffcorpus.corpus_streams(CORPUS_DIR) + _decoded_agui_family()
    return stored + diffcorpus.witness_streams() + good + list(diffcorpus.mutants(good))


STREAMS = _all_streams()


def _verdict(body: bytes, protocol: str, client: str) -> Any:
    major = 7 if client == "agui" else int(client[-1])
    return check_bytes(body, protocol=protocol, major=major)  # type: ignore[arg-type]


def test_differential_corpus_holds_at_least_100_streams() -> None:
    assert len(STREAMS) >= 100, len(STREAMS)
    assert len({name for name, _, _ in STREAMS}) == len(STREAMS), "stream names must be unique"


def test_every_mutation_kind_produces_a_mutant() -> None:
    made = {name.split("/")[2] for name, _, _ in STREAMS if name.startswith("mutant/")}
    kinds = set(diffcorpus.AGUI_MUTATIONS) | set(diffcorpus.AI_SDK_MUTATIONS)
    kinds |= set(diffcorpus.BYTE_MUTATIONS)
    assert kinds <= made, sorted(kinds - made)


def test_stored_streams_match_recorded_client_verdicts() -> None:
    """Runs without Node: the verdicts in VERDICTS.json were recorded from the real clients
    (``tools/record_verdicts.py``) and are re-checked live by the test below."""
    recorded = json.loads(VERDICTS.read_text("utf-8"))
    disagreements = []
    for name, protocol, body in diffcorpus.stored_streams():
        for client in CLIENTS[protocol]:
            expected = recorded[name][client]
            report = _verdict(body, protocol, client)
            if report.rejected == expected["accepted"]:
                disagreements.append((name, client, expected, [v.rule_id for v in report.errors]))
    assert disagreements == []


def test_verdicts_equal_real_client_rejects() -> None:
    require_harness()
    jobs, ours = [], {}
    for name, protocol, body in STREAMS:
        for client in CLIENTS[protocol]:
            job = f"{client}|{name}"
            jobs.append((job, client, body))
            ours[job] = _verdict(body, protocol, client)
    results = replay(jobs)
    disagreements = [
        (job, result["error"], [v.to_json() for v in ours[job].errors][:3])
        for job, result in sorted(results.items())
        if ours[job].rejected == result["accepted"]
    ]
    assert disagreements == [], f"{len(disagreements)} of {len(jobs)} verdicts disagree"
    recorded = json.loads(VERDICTS.read_text("utf-8"))
    stale = [
        (job, result["accepted"])
        for job, result in results.items()
        if job.split("|", 1)[1] in recorded
        and recorded[job.split("|", 1)[1]][result["client"]]["accepted"] != result["accepted"]
    ]
    assert stale == [], "rerun tests/conformance/tools/record_verdicts.py"
