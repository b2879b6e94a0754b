"""Asks the real clients about every stored stream and writes ``streams/VERDICTS.json``.

The file records, per stream and client, whether the client accepted it and the start of its
error text. ``test_differential.py`` checks our verdicts against it when Node is missing and
checks it against the live clients when Node is there, so the record cannot go stale
unnoticed. Run after ``make_streams.py``::

    .venv/bin/python tests/conformance/tools/record_verdicts.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE.parent.parent / "support")]

import diffcorpus  # noqa: E402
from real_clients import replay  # noqa: E402

CLIENTS = {"agui": ("agui",), "ai-sdk": ("ai-v7", "ai-v6", "ai-v5")}


def main() -> int:
    jobs = [
        (f"{client}|{name}", client, body)
        for name, protocol, body in diffcorpus.stored_streams()
        for client in CLIENTS[protocol]
    ]
    results = replay(jobs)
    record: dict[str, dict[str, dict[str, object]]] = {}
    for job_id, result in sorted(results.items()):
        client, name = job_id.split("|", 1)
        record.setdefault(name, {})[client] = {
            "accepted": result["accepted"],
            "error": (result["error"] or "")[:160] or None,
        }
    out = diffcorpus.STREAMS_DIR / "VERDICTS.json"
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(jobs)} verdicts from the real clients in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
