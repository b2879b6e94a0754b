"""How long a very large request body holds the event loop: the gateway's request path, stepwise.

A 14 MB AG-UI ``RunAgentInput`` (200k short messages, the size of a long imported chat) and the
same conversation as an AI SDK chat request go through what the stream endpoints do before the
first upstream byte (``gateway/routes/stream.py``, ``gateway/services.py``): read and validate
the body (:func:`gateway.routes._http.parse_json_body`), check the ids, convert an AI SDK chat to
``RunAgentInput``, build the upstream request (``gateway.upstream.build_body``). A ticker task
on the same loop records its largest gap (the loop's longest stall) while each step runs.

Printed per step: wall time of the step, the process's CPU time during it (threads included),
the longest loop stall during it and the loop thread's CPU time in that longest gap between
two ticks ("stall cpu": what the loop spent in one section, steady on a loaded machine where
the wall stall also counts the time the OS ran other processes), in ms. A step that runs off the loop (a thread) shows a
stall near the ticker period (1 ms), whatever its wall time. Last, the small-body row: the
CPU time per ``parse_json_body`` call over a 3-message AG-UI body (best of 5 batches of 2000) (the common request; no
stepping below ``LARGE_BODY``), in µs. Figures depend on the machine; compare before/after in
the same run.

Run: ``python bench/large_request.py [--messages N] [--rounds R] [--variant NAME:src=DIR]``
(default 200000 messages; well under a minute per round). Each ``--variant`` (repeatable) runs
the same steps in a child process importing ``gateway``, ``agui_codecs`` and ``conformance``
from the checkout ``DIR`` (``src=.`` or no ``src``: this tree), variants alternating round by
round; without ``--variant``, this tree only, in this process. The "inline" arm (one
``model_validate_json``, every step on the loop) is printed for the first variant only.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson


def _agui_body(n: int) -> bytes:
    messages = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"message {i}",
        }
        for i in range(n)
    ]
    return orjson.dumps(
        {
            "threadId": "t1",
            "runId": "r1",
            "state": {},
            "messages": messages,
            "tools": [],
            "context": [],
            "forwardedProps": {},
        }
    )


def _chat_body(n: int) -> bytes:
    messages = [
        {
            "id": f"m{i}",
            "role": "user" if i % 2 == 0 else "assistant",
            "parts": [{"type": "text", "text": f"message {i}"}],
        }
        for i in range(n)
    ]
    return orjson.dumps({"id": "chat1", "messages": messages, "trigger": "submit-message"})


async def _measure(
    step: Callable[[], Awaitable[Any]],
) -> tuple[float, float, float, float, Any]:
    """(wall ms, CPU ms, longest loop stall ms, its CPU ms, result) of ``step`` with a 1 ms
    ticker beside it: the stall's CPU is the loop thread's CPU time between two ticks (what
    the loop itself spent, whatever else the machine ran meanwhile)."""
    worst = worst_cpu = 0.0
    running = True

    async def ticker() -> None:
        nonlocal worst, worst_cpu
        last, last_cpu = time.perf_counter(), time.thread_time()
        while running:
            await asyncio.sleep(0.001)
            now, now_cpu = time.perf_counter(), time.thread_time()
            worst, worst_cpu = max(worst, now - last), max(worst_cpu, now_cpu - last_cpu)
            last, last_cpu = now, now_cpu

    gc.collect()
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    worst = worst_cpu = 0.0
    start, cpu = time.perf_counter(), time.process_time()
    result = await step()
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    await asyncio.sleep(0.005)
    running = False
    await task
    return wall * 1000, cpu * 1000, worst * 1000, worst_cpu * 1000, result


async def main(n: int, arms: tuple[str, ...], label: str) -> None:
    from ag_ui.core import RunAgentInput

    from agui_codecs.protocols import ClientRequest
    from agui_codecs.protocols.ai_sdk.chat_request import AiSdkChatRequest, to_run_agent_input
    from gateway.body_parse import off_loop
    from gateway.config import RouteConfig
    from gateway.ids import chat_request_ids, check_ids, run_input_ids
    from gateway.routes._http import parse_json_body
    from gateway.upstream import build_body

    route = RouteConfig(
        name="bench", protocol="openai-chat", upstream_url="http://127.0.0.1:9/v1", model="m"
    )
    agui, chat = _agui_body(n), _chat_body(n)

    async def show(name: str, arm: str, step: Callable[[], Awaitable[Any]]) -> Any:
        wall, cpu, stall, stall_cpu, result = await _measure(step)
        print(
            f"{label:8} {name:46} {arm:7} {wall:9.0f} {cpu:9.0f} {stall:9.0f} {stall_cpu:9.1f}",
            flush=True,
        )
        return result

    def checked(run_input: Any) -> None:
        check_ids(run_input_ids(run_input))

    def converted(request: Any) -> Any:
        check_ids(chat_request_ids(request))
        return to_run_agent_input(request, run_id="r1")

    # "inline": what the endpoints did before (one model_validate_json, then every step on the
    # loop); "sliced": gateway.body_parse (sliced validation, off_loop for the CPU steps).
    async def steps(arm: str) -> None:

        async def parse_agui() -> Any:
            if arm == "inline":
                return RunAgentInput.model_validate_json(agui)
            return await parse_json_body(agui, RunAgentInput)

        run_input = await show("agui: read + validate RunAgentInput", arm, parse_agui)

        async def ids() -> None:
            if arm == "inline":
                return checked(run_input)
            return await off_loop(n, checked, run_input)

        await show("agui: check ids", arm, ids)

        async def build() -> Any:
            request = ClientRequest(run_input, wire="agui", raw=agui)
            if arm == "inline":
                return build_body(route, request)
            return await off_loop(n, build_body, route, request)

        await show("agui: build upstream body (openai-chat)", arm, build)

        async def parse_chat() -> Any:
            if arm == "inline":
                return AiSdkChatRequest.model_validate_json(chat)
            return await parse_json_body(chat, AiSdkChatRequest)

        chat_request = await show("ai-sdk: read + validate chat request", arm, parse_chat)

        async def convert() -> Any:
            if arm == "inline":
                return converted(chat_request)
            return await off_loop(n, converted, chat_request)

        await show("ai-sdk: check ids + to RunAgentInput", arm, convert)

    for arm in arms:
        await steps(arm)

    small = _agui_body(3)
    batches = []
    for _ in range(5):
        start = time.process_time()
        for _ in range(2000):
            await parse_json_body(small, RunAgentInput)
        batches.append((time.process_time() - start) / 2000 * 1e6)
    each = min(batches)  # CPU per call, best of 5 batches of 2000
    print(f"{label:8} {f'small body ({len(small)} B): parse_json_body':46} {'':7} {each:7.1f} µs")


def _header(n: int) -> None:
    agui, chat = _agui_body(n), _chat_body(n)
    print(
        f"{n} messages: AG-UI body {len(agui) / 1e6:.1f} MB, AI SDK body {len(chat) / 1e6:.1f} MB"
    )
    print(f"load average {os.getloadavg()}")
    print(
        f"{'variant':8} {'step':46} {'arm':7} {'wall ms':>9} {'cpu ms':>9} {'stall ms':>9} {'stall cpu':>9}"
    )


def _variants(specs: list[str]) -> list[tuple[str, Path]]:
    """``NAME:src=DIR`` specs as (name, checkout)."""
    here = Path(__file__).resolve().parent.parent
    out = []
    for spec in specs:
        name, _, options = spec.partition(":")
        src = dict(opt.split("=", 1) for opt in options.split(",") if opt).get("src", ".")
        out.append((name, here if src == "." else Path(src).resolve()))
    return out


def _child(name: str, src: Path, n: int, inline: bool) -> None:
    paths = [str(src), str(src / "codecs"), str(src / "conformance")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths))
    args = [sys.executable, __file__, "--messages", str(n), "--child", name]
    subprocess.run([*args, *(["--inline"] if inline else [])], env=env, check=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--variant", action="append", default=[], help="NAME:src=DIR")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--inline", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        import gateway

        print(f"{options.child:8} (gateway from {Path(gateway.__file__).parent})", flush=True)
        arms = ("inline", "sliced") if options.inline else ("sliced",)
        asyncio.run(main(options.messages, arms, options.child))
    elif options.variant:
        _header(options.messages)
        for number in range(options.rounds):
            for index, (name, src) in enumerate(_variants(options.variant)):
                _child(name, src, options.messages, inline=index == 0 and number == 0)
        print(f"load average {os.getloadavg()}")
    else:
        _header(options.messages)
        for _ in range(options.rounds):
            asyncio.run(main(options.messages, ("inline", "sliced"), "this"))
        print(f"load average {os.getloadavg()}")
