"""How long a very large request body holds the event loop: the gateway's request path, stepwise.

A 14 MB AG-UI ``RunAgentInput`` (200k short messages, the size of a long imported chat) and the
same conversation as an AI SDK chat request go through what the stream endpoints do before the
first upstream byte (``gateway/routes/stream.py``, ``gateway/services.py``): read and validate
the body (:func:`gateway.routes._http.parse_json_body`), check the ids, convert an AI SDK chat to
``RunAgentInput``, build the upstream request (``gateway.upstream.build_body``). A ticker task
on the same loop records its largest gap (the loop's longest stall) while each step runs.

Printed per step: wall time of the step and the longest loop stall during it, in ms. A step
that runs off the loop (a thread) shows a stall near the ticker period (1 ms), whatever its
wall time. Figures depend on the machine; compare before/after in the same run of the same
machine (``git stash`` the change, or run it from two checkouts).

Run: ``python bench/large_request.py [--messages N]`` (default 200000; well under a minute).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
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


async def _measure(step: Callable[[], Awaitable[Any]]) -> tuple[float, float, Any]:
    """(wall ms, longest loop stall ms, result) of ``step`` with a 1 ms ticker beside it."""
    worst = 0.0
    running = True

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    gc.collect()
    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    start = time.perf_counter()
    result = await step()
    wall = time.perf_counter() - start
    await asyncio.sleep(0.005)
    running = False
    await task
    return wall * 1000, worst * 1000, result


async def main(n: int) -> None:
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
    print(
        f"{n} messages: AG-UI body {len(agui) / 1e6:.1f} MB, AI SDK body {len(chat) / 1e6:.1f} MB"
    )
    print(f"{'step':46} {'arm':7} {'wall ms':>9} {'stall ms':>9}")

    async def show(name: str, arm: str, step: Callable[[], Awaitable[Any]]) -> Any:
        wall, stall, result = await _measure(step)
        print(f"{name:46} {arm:7} {wall:9.0f} {stall:9.0f}")
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

    for arm in ("inline", "sliced"):
        await steps(arm)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    asyncio.run(main(parser.parse_args().messages))
