"""Replay SSE bodies through the real JavaScript clients (the Node harness in ``tests/harness``).

The harness drives ``@ag-ui/client`` 1.0.0 (``HttpAgent.runAgent``) and the Vercel AI SDK
``ai`` 7 / 6 / 5 chat machinery (``AbstractChat`` + ``DefaultChatTransport``, what ``useChat``
wraps) against a local HTTP endpoint that serves the given bytes, so each client parses,
validates, verifies and builds messages exactly as in a browser. See ``tests/harness/README.md``.

Usage from a test (tests directly under ``tests/`` can ``import real_clients``)::

    from real_clients import replay, require_harness

    def test_text_stream_is_accepted() -> None:
        require_harness()
        results = replay([("t1", "agui", agui_bytes), ("t2", "ai-v7", ai_sdk_bytes)])
        assert results["t1"]["accepted"], results["t1"]["error"]

One ``replay`` call starts one Node process for all its jobs: batch them.

Counting: when ``GATEWAY_TEST_REPLAY_LOG`` names a file, every ``replay`` call appends one JSON
line ``{"test": <PYTEST_CURRENT_TEST>, "jobs": {client: n}}`` to it (see :func:`replay_totals`),
so a suite run can report how many real-client replays it made, per client.
"""

from __future__ import annotations

import base64
import functools
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypedDict

__all__ = [
    "AI_SDK_CLIENTS",
    "CLIENTS",
    "HARNESS_DIR",
    "REPLAY_LOG_ENV",
    "ReplayResult",
    "available",
    "replay",
    "replay_totals",
    "require_harness",
]

HARNESS_DIR: Final[Path] = Path(__file__).resolve().parent.parent / "harness"
"""The Node harness folder (``package.json``, ``replay.mjs``; ``node_modules`` after ``npm ci``)."""

CLIENTS: Final[tuple[str, ...]] = ("agui", "ai-v7", "ai-v6", "ai-v5")
"""Client names a job may use."""

AI_SDK_CLIENTS: Final[tuple[str, ...]] = ("ai-v7", "ai-v6", "ai-v5")
"""The AI SDK majors, newest first."""

REPLAY_LOG_ENV: Final[str] = "GATEWAY_TEST_REPLAY_LOG"
"""Environment variable naming the file :func:`replay` appends its job counts to."""

_REQUIRED_PACKAGES: Final[tuple[str, ...]] = ("@ag-ui/client", "ai", "ai-v6", "ai-v5")
_MIN_NODE_MAJOR: Final[int] = 20
_BASE_TIMEOUT_S: Final[float] = 120.0
_PER_JOB_TIMEOUT_S: Final[float] = 1.0


class ReplayResult(TypedDict, total=False):
    """One job's outcome, as reported by ``replay.mjs``.

    Always present: ``id``, ``client``, ``accepted``, ``error``, ``streamError``, ``messages``,
    ``warnings``, ``logs``, ``harnessError``.

    - ``accepted``: the client processed the stream without surfacing an error. A stream that
      ends with an AG-UI ``RUN_ERROR`` or an AI SDK ``error`` chunk is accepted (a legal,
      well-formed end) and its text is in ``streamError``.
    - ``error``: why the client rejected the stream (error name and message), ``"timeout"`` if
      the job did not settle in time, else ``None``.
    - ``messages``: the client's final messages: AG-UI ``agent.messages``; AI SDK
      ``chat.messages`` without the user message the harness sent (so normally one assistant
      ``UIMessage`` with its ``parts``).
    - ``warnings``: everything the client printed with ``console.warn`` (e.g. AG-UI unknown
      event types dropped, unknown fields stripped, legacy nulls converted).
    - ``logs``: other console output, prefixed with its level (e.g. ``"error: Agent execution
      failed: ..."``).

    AG-UI extras: ``runErrors`` (``[{message, code}]``), ``state``, ``result``,
    ``pendingInterrupts``. AI SDK extras: ``status`` (chat status), ``finishReason``,
    ``isAbort`` (the ``onFinish`` flag).
    """

    id: str
    client: str
    accepted: bool
    error: str | None
    streamError: str | None
    messages: list[dict[str, Any]]
    warnings: list[str]
    logs: list[str]
    harnessError: bool
    runErrors: list[dict[str, Any]]
    state: Any
    result: Any
    pendingInterrupts: list[dict[str, Any]]
    status: str
    finishReason: str | None
    isAbort: bool | None


@functools.cache
def _node_major(node: str) -> int | None:
    try:
        done = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    version = done.stdout.strip().lstrip("v")
    try:
        return int(version.split(".", 1)[0])
    except ValueError:
        return None


def available() -> tuple[bool, str]:
    """Tell whether the harness can run here.

    Returns:
        ``(True, "")`` when ``node`` (major >= 20) is on PATH and ``tests/harness/node_modules``
        holds the pinned clients; otherwise ``(False, reason)`` with a reason that says how to
        fix it (``cd tests/harness && npm ci``, done by ``make test``).
    """
    node = shutil.which("node")
    if node is None:
        return False, "node is not on PATH (install Node.js >= 20 to run the real-client tests)"
    major = _node_major(node)
    if major is None:
        return False, f"could not read the version of {node}"
    if major < _MIN_NODE_MAJOR:
        return False, f"node {major} is too old: the real-client harness needs Node.js >= 20"
    modules = HARNESS_DIR / "node_modules"
    missing = [
        name for name in _REQUIRED_PACKAGES if not (modules / name / "package.json").is_file()
    ]
    if missing:
        names = ", ".join(missing)
        return False, f"{modules} lacks {names}: run `npm ci` in {HARNESS_DIR} (`make test` does)"
    return True, ""


def require_harness() -> None:
    """Skip the calling test when the harness is unavailable; fail it instead under CI.

    Raises:
        pytest's ``Skipped`` outcome locally, ``Failed`` under ``CI=true``
        (:func:`corpus.require_service`), so real-client tests never silently skip in CI.
    """
    from corpus import require_service

    ok, reason = available()
    require_service(ok, f"real-client harness unavailable: {reason}")


Job = tuple[str, str, bytes] | tuple[str, str, bytes, Mapping[str, Any]]


def replay(
    jobs: Sequence[Job],
    *,
    timeout_ms: int | None = None,
    concurrency: int | None = None,
) -> dict[str, ReplayResult]:
    """Replay raw SSE response bodies through the real clients in one Node process.

    Args:
        jobs: ``(id, client, body)`` tuples: a unique id, a client name from ``CLIENTS``
            (``"agui"``, ``"ai-v7"``, ``"ai-v6"``, ``"ai-v5"``) and the exact response body bytes.
            An optional fourth element is a mapping of extra job options passed through to the
            harness: ``chunk_size`` (serve the body N bytes at a time), ``hold_open`` (never end
            the response), ``timeout_ms`` (this job only), ``initial_messages`` (client-native
            messages already in the chat; for the AI SDK, ending with an assistant message makes
            the request a continuation), ``prompt`` (AI SDK user text).
        timeout_ms: per-job timeout inside the harness (default 30000). A job that does not
            settle in time is reported ``accepted=False`` with ``error="timeout"``.
        concurrency: jobs in flight at once inside the harness (default 8).

    Returns:
        The results keyed by job id (see ``ReplayResult``).

    Raises:
        ValueError: an unknown client name, a duplicate id or a body that is not bytes.
        RuntimeError: the harness is unavailable, Node exits non-zero or times out (the message
            carries Node's stderr), its output is not the expected JSON, or a job failed inside
            the harness itself (``harnessError``) rather than in the client.
    """
    request_jobs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for job in jobs:
        job_id, client, body = job[0], job[1], job[2]
        options: Mapping[str, Any] = job[3] if len(job) > 3 else {}
        if client not in CLIENTS:
            raise ValueError(
                f"job {job_id!r}: unknown client {client!r}; expected one of {CLIENTS}"
            )
        if job_id in seen:
            raise ValueError(f"duplicate job id {job_id!r}")
        if not isinstance(body, bytes | bytearray | memoryview):
            raise ValueError(f"job {job_id!r}: body must be bytes, got {type(body).__name__}")
        seen.add(job_id)
        request_jobs.append(
            {
                **options,
                "id": job_id,
                "client": client,
                "body_b64": base64.b64encode(bytes(body)).decode("ascii"),
            }
        )
    if not request_jobs:
        return {}

    ok, reason = available()
    if not ok:
        raise RuntimeError(f"real-client harness unavailable: {reason}")

    request: dict[str, Any] = {"jobs": request_jobs}
    if timeout_ms is not None:
        request["timeout_ms"] = timeout_ms
    if concurrency is not None:
        request["concurrency"] = concurrency
    _log_counts(request_jobs)
    timeout_s = _BASE_TIMEOUT_S + _PER_JOB_TIMEOUT_S * len(request_jobs)
    node = shutil.which("node") or "node"
    try:
        done = subprocess.run(
            [node, str(HARNESS_DIR / "replay.mjs")],
            input=json.dumps(request).encode("utf-8"),
            capture_output=True,
            cwd=HARNESS_DIR,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        stderr = (exc.stderr or b"").decode("utf-8", "replace")
        raise RuntimeError(
            f"replay.mjs did not finish within {timeout_s:.0f} s "
            f"({len(request_jobs)} jobs); stderr:\n{stderr}"
        ) from exc
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0:
        raise RuntimeError(f"replay.mjs exited with {done.returncode}; stderr:\n{stderr}")
    try:
        response = json.loads(done.stdout)
        results: list[ReplayResult] = response["results"]
    except (ValueError, KeyError, TypeError) as exc:
        head = done.stdout[:2000].decode("utf-8", "replace")
        raise RuntimeError(
            f"replay.mjs printed no result JSON: {head!r}; stderr:\n{stderr}"
        ) from exc

    by_id = {result["id"]: result for result in results}
    missing = seen - by_id.keys()
    if missing:
        raise RuntimeError(
            f"replay.mjs returned no result for {sorted(missing)}; stderr:\n{stderr}"
        )
    broken = [result for result in results if result.get("harnessError")]
    if broken:
        details = "; ".join(f"{r['id']}: {r.get('error')}" for r in broken)
        raise RuntimeError(f"the harness itself failed (not a client verdict): {details}")
    return by_id


def _log_counts(jobs: Sequence[Mapping[str, Any]]) -> None:
    log = os.environ.get(REPLAY_LOG_ENV)
    if not log:
        return
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job["client"]] = counts.get(job["client"], 0) + 1
    line = {"test": os.environ.get("PYTEST_CURRENT_TEST", ""), "jobs": counts}
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def replay_totals(log: str | os.PathLike[str]) -> dict[str, int]:
    """Sum a ``GATEWAY_TEST_REPLAY_LOG`` file: ``{client: jobs, ..., "calls": replay calls}``.

    Usage: ``python tests/support/real_clients.py <log>`` prints the totals as JSON.
    """
    totals: dict[str, int] = {"calls": 0}
    for text in Path(log).read_text("utf-8").splitlines():
        if text.strip():
            totals["calls"] += 1
            for client, n in json.loads(text)["jobs"].items():
                totals[client] = totals.get(client, 0) + n
    return totals


if __name__ == "__main__":
    import sys

    print(json.dumps(replay_totals(sys.argv[1]), sort_keys=True))
