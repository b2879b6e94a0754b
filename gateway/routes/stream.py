"""The streaming endpoints: one run per POST, answered as the client's own stream.

* ``POST /v1/agui/{route}``: body ``RunAgentInput`` (AG-UI 1.0, ``ag_ui.core``), as
  ``@ag-ui/client`` ``HttpAgent`` posts it -> AG-UI SSE
  (:class:`~agui_codecs.encoders.agui.AguiEncoder`), one ``id: <cursor>`` per event;
* ``POST /v1/ai-sdk/{route}``: body ``{id, messages: UIMessage[], trigger, messageId?, ...}``
  (``ai`` 7 ``DefaultChatTransport``) -> UIMessageChunk SSE
  (:class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder`) ending with ``data: [DONE]``; the chat
  ``id`` is the thread id.

Both run the same pipeline (upstream -> decoder -> UI stage) and differ only in the request
model and the encoder. While the app lifespan runs, the run is recorded and pumped in the
background (:meth:`~gateway.services.Services.start_run`) and the response is a reader of it,
so the run does not depend on the connection: when the client goes away it goes on, or ends
as cancelled with ``GATEWAY_ON_DISCONNECT=cancel``. Without the lifespan the run streams
unrecorded.

An AG-UI POST whose ``threadId``/``runId`` name a run of that thread that exists **re-joins**
it (``docs/runs.md`` §5, :mod:`gateway.runs.rejoin`): the answer is the run's snapshot prelude
(RUN_STARTED, a MESSAGES_SNAPSHOT of the conversation and of what the run completed, START
events re-opening what is open with what it holds) and then the live tail, or the prelude
alone (ending with the terminal event) when the run has ended; the upstream is not called
again. The same ids with new input (a message of the client the run's conversation does not
hold, or another route) are ``409 RUN_ID_TAKEN``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence

from ag_ui.core import RunAgentInput
from starlette.responses import Response

from agui_codecs import Encoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.protocols import ClientRequest
from agui_codecs.protocols.ai_sdk.chat_request import (
    AiSdkChatRequest,
    continued_tool_call_ids,
    response_message_id,
    to_run_agent_input,
)

from ..body_parse import off_loop
from ..config import RouteConfig
from ..encoding import encode_batches, encode_run_events
from ..ids import chat_request_ids, check_ids, run_input_ids
from ..runs.prelude import Prelude
from ..store import RunExistsError, RunRecord
from ._access import annotate
from ._cursor import cursor_tag
from ._endpoint import Call
from ._http import read_json, run_headers, sse_response

__all__ = ["agui", "ai_sdk", "ai_sdk_chat", "run_metadata"]


async def agui(call: Call) -> Response:
    """``POST /v1/agui/{route}``: RunAgentInput -> AG-UI SSE."""
    route = call.services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    limit = call.services.settings.max_request_bytes
    body_timeout = call.services.settings.body_timeout_seconds
    run_input, raw = await read_json(call.request, RunAgentInput, limit=limit, timeout=body_timeout)
    await off_loop(len(run_input.messages), _check_run_input, run_input)
    client = ClientRequest(run_input, wire="agui", raw=raw)
    services = call.services
    if services.manager is None:
        return await _stream(call, route, client, _agui_encoder)
    joined = await services.rejoin(call.caller, route, run_input)
    if joined is None:
        try:
            return await _stream(call, route, client, _agui_encoder)
        except RunExistsError:  # the same POST, twice at once: the other one created it
            joined = await services.rejoin(call.caller, route, run_input)
            if joined is None:  # created and purged in between: nothing to join
                raise
    return await _rejoined(call, *joined)


async def ai_sdk(call: Call) -> Response:
    """``POST /v1/ai-sdk/{route}``: AI SDK chat request -> UIMessageChunk SSE + [DONE]."""
    route = call.services.route(call.request.path_params["route"], call.caller)
    annotate(call.request, route=route.name)
    limit = call.services.settings.max_request_bytes
    body_timeout = call.services.settings.body_timeout_seconds
    chat, raw = await read_json(call.request, AiSdkChatRequest, limit=limit, timeout=body_timeout)
    return await ai_sdk_chat(call, route, chat, raw)


async def ai_sdk_chat(
    call: Call,
    route: RouteConfig,
    chat: AiSdkChatRequest,
    raw: bytes,
    *,
    extra_headers: Callable[[RunRecord], Mapping[str, str]] | None = None,
) -> Response:
    """Run an AI SDK chat request read from the body (``raw``) on ``route`` -> UIMessageChunk
    SSE + [DONE]; ``extra_headers`` adds response headers naming the recorded run (the
    ``WorkflowChatTransport`` POST, :mod:`.workflow`)."""
    run_input = await off_loop(len(chat.messages), _chat_input, chat)
    message_id = response_message_id(chat)
    earlier = continued_tool_call_ids(chat)  # the results of these calls may follow
    if message_id is None and route.protocol != "ai-sdk":
        # An AI SDK backend picks its own messageId (``start``, kept in RUN_STARTED
        # metadata), which the encoder falls back to; other upstreams have none.
        message_id = f"msg_{uuid.uuid4().hex}"
    client = ClientRequest(run_input, wire="ai-sdk", raw=raw)

    def encoder(run: RunRecord | None) -> Encoder:
        # the assistant message names its run (``message.metadata``): what Stop and a
        # reloaded page need, with the ``x-agui-run-id`` header
        ids = None if run is None else run_metadata(run)
        return AiSdkEncoder(
            message_id=message_id,
            ai_sdk_major=route.ai_sdk_major,
            message_metadata=ids,
            continues=earlier,
        )

    return await _stream(
        call,
        route,
        client,
        encoder,
        message_id=message_id,
        continues=earlier,
        extra_headers=extra_headers,
    )


async def _rejoined(call: Call, run: RunRecord, prelude: Prelude) -> Response:
    """The re-join answer: ``prelude``, then the run's events after it (none if it ended)."""
    annotate(call.request, run_id=run.public_run_id)
    manager = call.services.runs()
    settings = call.services.settings
    tail = None if prelude.ended else await manager.reader(run.id, after=prelude.cursor)

    async def abandon() -> None:
        await manager.cancel(run.id)

    encoder = AguiEncoder()
    body = encode_run_events(
        tail,
        encoder,
        prelude=prelude.events,
        prelude_cursor=prelude.cursor,
        on_abandon=abandon if settings.on_disconnect == "cancel" and tail is not None else None,
        cursor_tag=cursor_tag(run.id),
    )
    headers = run_headers(run.public_thread_id, run.public_run_id)
    return sse_response(body, encoder, settings, headers=headers)


def _check_run_input(run_input: RunAgentInput) -> None:
    check_ids(run_input_ids(run_input))


def _chat_input(chat: AiSdkChatRequest) -> RunAgentInput:
    """The chat request's ids checked, then the request as a RunAgentInput (a fresh runId)."""
    check_ids(chat_request_ids(chat))
    return to_run_agent_input(chat, run_id=f"run_{uuid.uuid4().hex}")


def _agui_encoder(_run: RunRecord | None) -> Encoder:
    return AguiEncoder()


def run_metadata(run: RunRecord) -> dict[str, str]:
    """``{threadId, runId}`` of ``run``: the AI SDK ``start.messageMetadata``."""
    return {"threadId": run.public_thread_id, "runId": run.public_run_id}


def resume_encoder(
    route: RouteConfig, run: RunRecord, *, continues: Sequence[str] | None = None
) -> AiSdkEncoder:
    """The AI SDK encoder a stored ``run`` of ``route`` is replayed with: the settings its
    POST streamed with (message id, ``ai`` major, ``start.messageMetadata``, the tool calls a
    continuation continues: ``continues``, default :attr:`RunRecord.continues`; the resume
    endpoints pass :func:`gateway.runs.continued.continued_calls`, which also finds them for a
    run written before migration 0005), so a resume gives the same chunks (the AI SDK resume
    and the ``WorkflowChatTransport`` stream)."""
    return AiSdkEncoder(
        message_id=run.message_id,
        ai_sdk_major=route.ai_sdk_major,
        message_metadata=run_metadata(run),
        continues=run.continues if continues is None else continues,
    )


async def _stream(
    call: Call,
    route: RouteConfig,
    client: ClientRequest,
    make_encoder: Callable[[RunRecord | None], Encoder],
    *,
    message_id: str | None = None,
    continues: Sequence[str] = (),
    extra_headers: Callable[[RunRecord], Mapping[str, str]] | None = None,
) -> Response:
    services = call.services
    settings = services.settings
    language = call.request.headers.get("accept-language")
    manager = services.manager
    if manager is None:
        batches = services.live(route, client, accept_language=language)
        encoder = make_encoder(None)
        return sse_response(encode_batches(batches, encoder), encoder, settings)
    run = await services.start_run(
        route,
        client,
        caller=call.caller,
        accept_language=language,
        message_id=message_id,
        continues=continues,
        early=True,  # the AG-UI re-join check found no run of its runId; AI SDK: a fresh one
    )
    annotate(call.request, run_id=run.public_run_id)
    events = await manager.reader(run.id, run=run)  # the record start_run returned
    encoder = make_encoder(run)

    async def abandon() -> None:
        await manager.cancel(run.id)

    body = encode_run_events(
        events,
        encoder,
        on_abandon=abandon if settings.on_disconnect == "cancel" else None,
        cursor_tag=cursor_tag(run.id),
    )
    headers = run_headers(run.public_thread_id, run.public_run_id)
    if extra_headers is not None:
        headers.update(extra_headers(run))
    return sse_response(body, encoder, settings, headers=headers)
