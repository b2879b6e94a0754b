"""Durable runs over HTTP (issue 3 §1-3, §7): runs that outlive their connection.

Endpoints (handlers of :class:`DurableRuns`; ``gateway.app`` mounts them)::

    POST /api/v1/agent/runs                          {route, input: RunAgentInput}
         -> 201 {threadId, runId}; the run proceeds with no client attached
    POST /api/v1/agent/runs/{thread_id}/cancel?runId=
         -> 200 {threadId, runId, status, cancelRequested}; the run ends with RUN_ERROR
            {code: "RUN_CANCELED", message: "run canceled by user"}; idempotent
    GET  /api/v1/agent/runs/{thread_id}/events?runId=[&lastEventId=][&replay=full|snapshot]
         -> AG-UI SSE: ``event: <TYPE>`` / ``id: <cursor>`` / ``data: <json>`` frames of that
            run only, closed after its RUN_FINISHED or RUN_ERROR; ``: keep-alive`` when idle
    GET  /v1/ai-sdk/{route}/{chatId}/stream
         -> 204 when the chat has no active run, else 200: the active run's UIMessageChunk
            stream from its first chunk (``start`` with the same messageId), then live

The streaming endpoints ``POST /v1/agui/{route}`` and ``/v1/ai-sdk/{route}`` record their runs
too (:meth:`DurableRuns.stream`): the run is created and pumped in the background, and the
response is a reader of that run, so a client that goes away does not stop it
(``GATEWAY_ON_DISCONNECT=continue``, the default) unless asked (``cancel``).

Resume (``docs/runs.md`` §1, §3): ``Last-Event-ID`` (header, or ``?lastEventId=``; the
header wins, since a browser's EventSource reconnects to the same URL with a newer header)
resumes strictly after that cursor on any replica; a cursor that cannot belong to the run is a
400 ``INVALID_CURSOR``. Without a cursor ``?replay=full`` (default) streams from RUN_STARTED and
``?replay=snapshot`` sends the snapshot prelude (RUN_STARTED, MESSAGES_SNAPSHOT, re-opened
STARTs; the last prelude event carries the prelude's cursor) and then the events after it.

Run ids: ``POST /api/v1/agent/runs`` answers 409 ``RUN_EXISTS`` for a taken ``runId`` (a
retried create never starts a second run). The streaming endpoints cannot answer 409 to a
stock client, so a taken ``runId`` there is recorded as ``<runId>-<8 hex>``; RUN_STARTED
carries the recorded id (the one to resume with).

Errors before a stream starts are JSON ``{"error": {"code", "message"}}``: 400
``INVALID_PARAMETER`` / ``INVALID_CURSOR``, 404 ``RUN_NOT_FOUND`` (also for a run of another
thread), 409 ``RUN_EXISTS``, 503 ``RUNS_UNAVAILABLE`` (the app runs without its lifespan, so
no store is open; the streaming endpoints then stream without recording).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final

import orjson
from ag_ui.core import RunAgentInput
from pydantic import BaseModel, ConfigDict
from starlette.requests import Request
from starlette.responses import Response

from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from agui_codecs.protocols import ClientRequest

from .broker import open_broker
from .config import RouteConfig, Settings
from .errors import RequestError
from .pipeline import Encoder, RunPipeline, encode_run_events, flatten
from .runs import RunManager
from .sse_response import SSEResponse
from .store import JsonObject, RunExistsError, RunNotFoundError, RunRecord, open_store

__all__ = ["REPLAY_MODES", "DurableRuns", "RunRequest", "json_response", "query_param"]

_log = logging.getLogger(__name__)

REPLAY_MODES: Final[tuple[str, ...]] = ("full", "snapshot")
"""Values of ``?replay=`` on the events endpoint."""

_RENAME_ATTEMPTS: Final[int] = 3


class RunRequest(BaseModel):
    """Body of ``POST /api/v1/agent/runs``.

    Attributes:
        route: name of the route to run on (as in ``/v1/agui/{route}``).
        input: the AG-UI 1.0 ``RunAgentInput`` (camelCase keys).
    """

    model_config = ConfigDict(extra="forbid")

    route: str
    input: RunAgentInput


def json_response(
    body: object, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A compact JSON response (orjson; values it cannot encode become strings)."""
    return Response(
        orjson.dumps(body, default=str),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def query_param(request: Request, name: str, *, required: bool = False) -> str | None:
    """The query parameter ``name`` (None when absent or empty).

    Raises:
        RequestError: 400 ``INVALID_PARAMETER`` when ``required`` and it is missing.
    """
    value = request.query_params.get(name) or None
    if value is None and required:
        raise RequestError(f"query parameter {name!r} is required", code="INVALID_PARAMETER")
    return value


def _wire_messages(run_input: RunAgentInput) -> list[JsonObject]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in run_input.messages]


class DurableRuns:
    """The durable-run side of the HTTP layer: opens the run core and serves its endpoints.

    Args:
        settings: process settings (store and broker URLs, run-core tunables,
            ``on_disconnect``, ``keepalive_seconds``).
        pipeline: the app's run pipeline (upstream -> decoder -> UI stage).

    Attributes:
        manager: the :class:`~gateway.runs.RunManager` while :meth:`opened` is active, else
            None (then the run endpoints answer 503 and :meth:`stream` is not used).
    """

    def __init__(self, settings: Settings, pipeline: RunPipeline) -> None:
        self.settings = settings
        self.pipeline = pipeline
        self.manager: RunManager | None = None

    @contextlib.asynccontextmanager
    async def opened(self) -> AsyncIterator[RunManager]:
        """Open the store (migrations applied), the broker and the run manager with its reaper
        and retention loops; on exit end this replica's runs (RUN_INTERRUPTED) and close all.

        Raises:
            RunStoreError: the database cannot be reached or migrated.
            ValueError: an unsupported database or broker URL, or a bad schema name.
        """
        settings = self.settings
        async with contextlib.AsyncExitStack() as stack:
            store = await open_store(settings.database_url, schema=settings.database_schema)
            stack.push_async_callback(store.close)
            broker = open_broker(settings.redis_url, prefix=settings.redis_prefix)
            stack.push_async_callback(broker.close)
            manager = RunManager(store, broker, settings=settings.run_settings())
            stack.push_async_callback(manager.aclose)
            await manager.start_background()
            self.manager = manager
            try:
                yield manager
            finally:
                self.manager = None

    def require(self) -> RunManager:
        """The open manager.

        Raises:
            RequestError: 503 ``RUNS_UNAVAILABLE`` when the run store is not open.
        """
        if self.manager is None:
            raise RequestError(
                "durable runs are unavailable: the run store is opened by the app lifespan",
                code="RUNS_UNAVAILABLE",
                status=503,
            )
        return self.manager

    # -- starting runs ----------------------------------------------------------------------
    async def _create(
        self,
        route: RouteConfig,
        run_input: RunAgentInput,
        *,
        message_id: str | None,
        rename: bool,
    ) -> RunRecord:
        manager = self.require()
        run_id = run_input.run_id
        for _attempt in range(_RENAME_ATTEMPTS):
            try:
                return await manager.create_run(
                    thread_id=run_input.thread_id,
                    run_id=run_id,
                    route=route.name,
                    upstream=route.upstream_url,
                    model=route.model,
                    message_id=message_id,
                    input_messages=_wire_messages(run_input),
                )
            except RunExistsError:
                if not rename:
                    raise
            run_id = f"{run_input.run_id}-{uuid.uuid4().hex[:8]}"
            _log.info("run id %r is taken: recording the run as %r", run_input.run_id, run_id)
        raise RunExistsError(f"run id {run_input.run_id!r} is taken")

    async def _start(
        self,
        route: RouteConfig,
        client: ClientRequest,
        *,
        accept_language: str | None,
        message_id: str | None = None,
        rename: bool,
    ) -> RunRecord:
        """Build the upstream request, record the run, pump it in the background."""
        batches = self.pipeline.open(route, client, accept_language=accept_language)
        try:
            run = await self._create(route, client.run_input, message_id=message_id, rename=rename)
        except BaseException:
            await batches.aclose()
            raise
        self.require().start(run, flatten(batches))
        return run

    async def create(
        self, route: RouteConfig, run_input: RunAgentInput, *, accept_language: str | None
    ) -> Response:
        """``POST /api/v1/agent/runs``: start the run, answer ``201 {threadId, runId}``.

        Raises:
            RequestError: 503 without a store; 422 when the input has no upstream equivalent.
            RunExistsError: 409, ``runId`` is taken.
        """
        client = ClientRequest(run_input, wire="agui")
        run = await self._start(route, client, accept_language=accept_language, rename=False)
        location = f"/api/v1/agent/runs/{run.thread_id}/events?runId={run.id}"
        return json_response(
            {"threadId": run.thread_id, "runId": run.id}, 201, headers={"location": location}
        )

    async def stream(
        self,
        route: RouteConfig,
        client: ClientRequest,
        encoder: Encoder,
        *,
        accept_language: str | None,
        message_id: str | None = None,
    ) -> SSEResponse:
        """A streaming endpoint's response: record and pump the run, stream a reader of it.

        AG-UI responses carry ``id: <cursor>`` lines (resume with the events endpoint). When
        the client goes away the run continues, or is cancelled with
        ``on_disconnect = "cancel"``.
        """
        run = await self._start(
            route, client, accept_language=accept_language, message_id=message_id, rename=True
        )
        manager = self.require()
        events = await manager.reader(run.id)

        async def abandon() -> None:
            await manager.cancel(run.id)

        return self._sse(
            encode_run_events(
                events,
                encoder,
                ids=isinstance(encoder, AguiEncoder),
                on_abandon=abandon if self.settings.on_disconnect == "cancel" else None,
            ),
            encoder,
        )

    def _sse(self, body: AsyncGenerator[bytes, None], encoder: Encoder) -> SSEResponse:
        return SSEResponse(
            body, keepalive_seconds=self.settings.keepalive_seconds, headers=type(encoder).headers
        )

    # -- run endpoints ----------------------------------------------------------------------
    async def _run_of(self, request: Request) -> RunRecord:
        """The run named by ``{thread_id}`` and ``?runId=``; 404 when it is of another thread."""
        thread_id = request.path_params["thread_id"]
        run_id = query_param(request, "runId", required=True)
        assert run_id is not None
        run = await self.require().get_run(run_id)
        if run.thread_id != thread_id:
            raise RunNotFoundError(f"thread {thread_id!r} has no run {run_id!r}")
        return run

    async def cancel(self, request: Request) -> Response:
        """``POST /api/v1/agent/runs/{thread_id}/cancel?runId=``: cancel (idempotent).

        The answer is the run as it was when flagged: ``status`` (still ``running`` while
        the pump closes it, or the terminal status when it had already ended) and
        ``cancelRequested`` (False when there was nothing left to cancel).
        """
        run = await self._run_of(request)
        record = await self.require().cancel(run.id)
        return json_response(
            {
                "threadId": record.thread_id,
                "runId": record.id,
                "status": record.status,
                "cancelRequested": not record.is_terminal,
            }
        )

    async def events(self, request: Request) -> Response:
        """``GET /api/v1/agent/runs/{thread_id}/events``: the run's AG-UI SSE (see module)."""
        run = await self._run_of(request)
        manager = self.require()
        cursor = request.headers.get("last-event-id", "").strip() or query_param(
            request, "lastEventId"
        )
        replay = query_param(request, "replay") or "full"
        if replay not in REPLAY_MODES:
            raise RequestError(
                f"replay must be one of {', '.join(REPLAY_MODES)}, got {replay!r}",
                code="INVALID_PARAMETER",
            )
        encoder = AguiEncoder(event_lines=True)
        if cursor is not None or replay == "full":
            events = await manager.reader(run.id, after=cursor)
            return self._sse(encode_run_events(events, encoder, ids=True), encoder)
        prelude = await manager.snapshot_prelude(run.id)
        tail = None if prelude.ended else await manager.reader(run.id, after=prelude.cursor)
        body = encode_run_events(
            tail, encoder, ids=True, prelude=prelude.events, prelude_cursor=prelude.cursor
        )
        return self._sse(body, encoder)

    async def ai_sdk_resume(self, chat_id: str, route: RouteConfig) -> Response:
        """``GET /v1/ai-sdk/{route}/{chatId}/stream``: 204, or the active run from its start.

        ``chatId`` is the thread id (the AI SDK POST records its runs under the chat ``id``).
        The ``start`` chunk carries the run's recorded messageId, else (an AI SDK backend that
        chose its own) RUN_STARTED ``metadata.messageId`` as recorded: the live stream's id.
        ``route`` (the one addressed) gives the clients' ``ai_sdk_major``.
        """
        manager = self.require()
        run = await manager.active_run(chat_id)
        if run is None:
            return Response(status_code=204)
        events = await manager.reader(run.id)
        encoder = AiSdkEncoder(message_id=run.message_id, ai_sdk_major=route.ai_sdk_major)
        return self._sse(encode_run_events(events, encoder), encoder)
