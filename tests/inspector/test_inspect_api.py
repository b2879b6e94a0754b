"""The inspector's HTTP side over a live gateway (``live_gateway.py``): the page and its files,
the JSON endpoints (threads, runs, verdicts), and the door they stand behind."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from ag_ui.core import EventType
from live_gateway import LiveGateway, frame, live_gateway

from gateway.inspect import STATIC_DIR


def script(thread_id: str, run_id: str) -> list[bytes]:
    ids = {"threadId": thread_id, "runId": run_id}
    return [
        frame({"type": "RUN_STARTED", **ids}),
        frame({"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}}),
        frame({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/b/c", "value": 2}]}),
        frame({"type": "RUN_FINISHED", **ids}),
    ]


def sse_ids(body: bytes) -> list[tuple[str, str]]:
    """``(id, event type)`` of each frame of an events-endpoint body."""
    out = []
    for block in body.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.split("\n") if ": " in line)
        if "id" in fields:
            out.append((fields["id"], fields["event"]))
    return out


async def get(gw: LiveGateway, path: str, key: str | None = None) -> httpx.Response:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(base_url=gw.base, timeout=10) as client:
        return await client.get(path, headers=headers)


async def test_the_page_and_its_files_are_served_with_a_strict_policy(tmp_path: Path) -> None:
    async with live_gateway(tmp_path, auth="required") as gw:
        page = await get(gw, "/inspect")  # no data in it: no credential asked
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        for name, kind in (("inspect.js", "text/javascript"), ("inspect.css", "text/css")):
            reply = await get(gw, f"/inspect/static/{name}")
            assert reply.status_code == 200 and reply.headers["content-type"].startswith(kind)
            assert reply.content == (STATIC_DIR / name).read_bytes()
            assert f"/inspect/static/{name}" in page.text
        for name in ("index.html", "..%2Fverdicts.py", "nope.js"):
            missing = await get(gw, f"/inspect/static/{name}")
            assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"


def test_the_page_listens_for_every_ag_ui_event_type() -> None:
    # the events endpoint names each frame `event: <TYPE>`: an EventSource delivers a named
    # event only to a listener of that name (WHATWG HTML, "dispatch the event")
    script_text = (STATIC_DIR / "inspect.js").read_text(encoding="utf-8")
    listed = re.search(r"const EVENT_TYPES = \[(.*?)\];", script_text, re.S)
    assert listed is not None
    names = re.findall(r"'([A-Z_]+)'", listed.group(1))
    assert sorted(names) == sorted(e.value for e in EventType)


async def test_threads_runs_and_verdicts(tmp_path: Path) -> None:
    async with live_gateway(tmp_path) as gw:
        await gw.start("t1", "r1", script("t1", "r1"))
        await gw.wait_ended("t1", "r1")
        await gw.start("t2", "r2", script("t2", "r2"))
        await gw.wait_ended("t2", "r2")
        threads = (await get(gw, "/inspect/api/threads")).json()["threads"]
        assert [(t["threadId"], t["runs"]) for t in threads] == [("t2", 1), ("t1", 1)]
        runs = (await get(gw, "/inspect/api/runs?threadId=t1")).json()
        assert runs["threadId"] == "t1"
        (run,) = runs["runs"]
        assert (run["runId"], run["status"], run["route"], run["error"]) == (
            "r1",
            "completed",
            "agent",
            None,
        )
        assert run["startedAt"] <= run["finishedAt"]

        async with httpx.AsyncClient(base_url=gw.base, timeout=10) as client:
            events = await client.get("/api/v1/agent/runs/t1/events?runId=r1")
        ids = sse_ids(events.content)
        verdicts = (await get(gw, "/inspect/api/verdicts?threadId=t1&runId=r1")).json()
        assert verdicts["events"] == len(ids) and verdicts["lastCursor"] == ids[-1][0]
        assert verdicts["status"] == "completed" and verdicts["rejected"] is False
        delta = next(cursor for cursor, kind in ids if kind == "STATE_DELTA")
        assert [(f["cursor"], f["rule"], f["severity"]) for f in verdicts["findings"]] == [
            (delta, "agui/hygiene/state-patch-failed", "warning")
        ]
        assert verdicts["state"] == {"a": 1} and verdicts["truncated"] is False


async def test_bad_parameters_are_refused(tmp_path: Path) -> None:
    async with live_gateway(tmp_path) as gw:
        cases: list[tuple[str, int, str]] = [
            ("/inspect/api/runs", 400, "INVALID_PARAMETER"),
            ("/inspect/api/threads?limit=0", 400, "INVALID_PARAMETER"),
            ("/inspect/api/verdicts?threadId=t1", 400, "INVALID_PARAMETER"),
            ("/inspect/api/verdicts?threadId=t1&runId=nope", 404, "RUN_NOT_FOUND"),
            ("/inspect/api/runs?threadId=%E2%80%A8", 422, "INVALID_ID"),
        ]
        for path, status, code in cases:
            reply = await get(gw, path)
            assert (reply.status_code, reply.json()["error"]["code"]) == (status, code), path


async def test_the_json_endpoints_stand_behind_the_door(tmp_path: Path) -> None:
    async with live_gateway(tmp_path, auth="required") as gw:
        acme, beta = await gw.key("acme"), await gw.key("beta")
        await gw.start("t1", "r1", script("t1", "r1"), key=acme)
        await gw.wait_ended("t1", "r1", key=acme)
        paths = [
            "/inspect/api/threads",
            "/inspect/api/runs?threadId=t1",
            "/inspect/api/verdicts?threadId=t1&runId=r1",
        ]
        for path in paths:
            refused = await get(gw, path)
            assert refused.status_code == 401 and refused.json()["error"]["code"] == (
                "UNAUTHENTICATED"
            )
            assert (await get(gw, path, acme)).status_code == 200
        # another tenant sees nothing of acme's: no thread, no run, a missing run
        assert (await get(gw, paths[0], beta)).json() == {"threads": []}
        assert (await get(gw, paths[1], beta)).json()["runs"] == []
        assert (await get(gw, paths[2], beta)).status_code == 404
        # a scoped token reads its run's events only, not the inspector's JSON
        async with httpx.AsyncClient(base_url=gw.base, timeout=10) as client:
            minted: dict[str, Any] = (
                await client.post(
                    "/api/v1/agent/runs/t1/token?runId=r1",
                    headers={"authorization": f"Bearer {acme}"},
                )
            ).json()
        for path in paths:
            assert (await get(gw, path, minted["token"])).status_code == 403
