"""What the retry layer costs a run that needs no retry, against the bare upstream in the same run.

Two timings over the same mocked OpenAI Chat stream (``--deltas`` text deltas, one network
chunk each, served by ``httpx.MockTransport``), both in AG-UI events per CPU second of this process (``time.process_time``: a shared, loaded
machine skews wall-clock rates):

* ``bare``:     :meth:`gateway.upstream.Upstream.events` with one decoder (the path before
  issue 19);
* ``attempts``: :func:`gateway.attempts.run_attempts` over the same upstream (what every run
  goes through now: the sent-log, metadata.attempts, the deployment pool).

Also the time to the first event of each (the retry layer must not hold content back).

Run: ``python bench/attempts_overhead.py [--deltas N] [--repeat N]`` (best of N, default 5).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import AsyncIterator

import httpx
import orjson
from ag_ui.core import RunAgentInput

from agui_codecs import get_decoder
from agui_codecs.protocols import ClientRequest
from gateway.attempts import RunPlan, run_attempts
from gateway.config import RouteConfig
from gateway.upstream import Upstream, build_body

ROUTE = RouteConfig(
    name="gpt", protocol="openai-chat", upstream_url="https://bench.test/v1", model="m"
)
RUN = RunAgentInput.model_validate(
    {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi"}],
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": {},
    }
)


def _chunks(deltas: int) -> list[bytes]:
    def frame(delta: dict[str, object], finish: str | None = None) -> bytes:
        body = {
            "id": "c",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        return b"data: " + orjson.dumps(body) + b"\n\n"

    out = [frame({"role": "assistant", "content": ""})]
    out += [frame({"content": "word "}) for _ in range(deltas)]
    out += [frame({}, "stop"), b"data: [DONE]\n\n"]
    return out


class _Body(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


async def _measure(deltas: int, which: str) -> tuple[float, float, int]:
    chunks = _chunks(deltas)
    client = httpx.AsyncClient(
        transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=_Body(chunks)))
    )
    upstream = Upstream(client, environ={})
    request = ClientRequest(RUN)
    body = build_body(ROUTE, request)
    begun = time.perf_counter()
    cpu = time.process_time()
    first = 0.0
    events = 0
    if which == "bare":
        decoder = get_decoder("openai-chat", thread_id="t", run_id="r")
        source = upstream.events(ROUTE, body, decoder)
    else:
        plan = RunPlan(ROUTE, request, body, {"gpt": ROUTE}, {}, 8 * 1024 * 1024)
        source = run_attempts(upstream, plan)
    async for batch in source:
        if not events:
            first = time.perf_counter() - begun
        events += len(batch)
    total = time.process_time() - cpu
    await client.aclose()
    return events / total, first, events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    best: dict[str, tuple[float, float, int]] = {}
    for _ in range(args.repeat):
        for which in ("bare", "attempts"):
            rate, first, events = asyncio.run(_measure(args.deltas, which))
            if which not in best or rate > best[which][0]:
                best[which] = (rate, first, events)
    for which, (rate, first, events) in best.items():
        print(f"{which:9s} {rate:12,.0f} events/s  first event {first * 1e3:7.2f} ms  ({events})")
    print(f"attempts / bare: {best['attempts'][0] / best['bare'][0]:.3f}")


if __name__ == "__main__":
    main()
