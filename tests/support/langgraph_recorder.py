"""Record LangGraph Platform run streams of ``langgraph_graph.py`` (not run by the suite).

Needs the LangGraph API server in-memory edition, which the repository does not depend on
(``pip install langgraph-api langgraph-runtime-inmem`` in a separate environment)::

    python tests/support/langgraph_recorder.py tests/corpus/langgraph

The server (``langgraph_api.cli.run_server`` on 127.0.0.1) writes every byte; this script
creates a thread per scenario and saves each ``POST /threads/{thread_id}/runs/stream`` body
exactly as received.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import httpx

PORT = 2931
GRAPH = str(Path(__file__).with_name("langgraph_graph.py")) + ":graph"


def _serve() -> None:
    from langgraph_api.cli import run_server

    run_server(port=PORT, graphs={"agent": GRAPH}, disable_persistence=True, open_browser=False)


def _stream(client: httpx.Client, thread: str, body: dict[str, Any]) -> bytes:
    response = client.post(f"/threads/{thread}/runs/stream", json=body, timeout=60)
    response.raise_for_status()
    return response.content


def main(folder: Path) -> None:
    server = multiprocessing.Process(target=_serve, daemon=True)
    server.start()
    base = f"http://127.0.0.1:{PORT}"
    with httpx.Client(base_url=base) as client:
        for _ in range(120):
            try:
                if client.get("/ok").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.5)
        modes = ["messages-tuple", "updates", "custom"]

        def run(name: str, text: str | None, **extra: Any) -> bytes:
            thread = client.post("/threads", json={}).json()["thread_id"]
            extra.setdefault("thread", thread)
            body: dict[str, Any] = {"assistant_id": "agent", "stream_mode": modes,
                                    "stream_subgraphs": True}  # fmt: skip
            if text is not None:
                body["input"] = {"messages": [{"role": "human", "content": text}]}
            body.update({k: v for k, v in extra.items() if k != "thread"})
            data = _stream(client, extra["thread"], body)
            (folder / name).write_bytes(data)
            return data

        folder.mkdir(parents=True, exist_ok=True)
        thread = client.post("/threads", json={}).json()["thread_id"]
        run("weather-tool-subgraph-custom-interrupt.sse", "weather in Paris?", thread=thread)
        run("weather-resume-command-final-answer.sse", None, thread=thread,
            command={"resume": "yes"})  # fmt: skip
        run("text-messages-tuple.sse", "hello there")
        run("error-event.sse", "fail now")
        modes = ["messages", "updates"]
        run("text-messages-partial.sse", "hello again")
    server.terminate()
    print(json.dumps(sorted(p.name for p in folder.iterdir())))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
