"""What the HTTP handlers call: :class:`Services`, one per app, built by the composition root.

:func:`gateway.app.create_app` builds the object graph (settings, routes, the run pipeline with
its upstream client and ui_schema compiler) and, while the app lifespan runs, the
:class:`~gateway.runs.RunManager` over the store and broker; the handlers in
:mod:`gateway.routes` only parse a request, call one of these methods and answer. Nothing here
knows HTTP: errors are raised typed (:mod:`gateway.errors`, :mod:`gateway.store.errors`) and
the routes' error handlers answer them.

Every method that names a thread or a run takes the :class:`~gateway.auth.Caller`: ids become
the caller's store keys (:mod:`gateway.tenancy`), so a tenant can only ever reach its own
threads and runs (another tenant's is exactly a missing one: 404), and a run id is scoped to
its thread. Route allowlists (403 ``ROUTE_FORBIDDEN``) and the per-tenant quotas (429: request
rate, concurrent runs, stored bytes) are checked here too.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import orjson
from ag_ui.core import Event, RunAgentInput
from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from agui_codecs import get_protocol
from agui_codecs.identity import message_ids
from agui_codecs.protocols import ClientRequest

from .auth import ANONYMOUS, Authenticator, Caller, ForbiddenError, RouteForbiddenError
from .body_parse import off_loop
from .config import RouteConfig, Settings
from .early_stream import EarlyStream, start_early
from .errors import RequestError, RouteNotFoundError, RunIdTakenError
from .pipeline import RunPipeline, requested_model
from .quota import RUN_RESERVE, capped
from .runs import RunManager
from .runs.history import input_items
from .runs.interrupts import check_resume
from .runs.prelude import Prelude
from .runs.pump import run_log_context
from .runs.rejoin import known_ids, rejoin_refusal
from .store import (
    HistoryPage,
    RunExistsError,
    RunNotFoundError,
    RunRecord,
    RunStore,
    ThreadSummary,
)
from .tenancy import public_id
from .types import JsonObject
from .upstream_ids import gateway_ids_in

__all__ = ["QuotaError", "Services"]

_log = logging.getLogger(__name__)


class QuotaError(RequestError):
    """429: a per-tenant quota is used up (``RATE_LIMITED`` with ``Retry-After``,
    ``TOO_MANY_RUNS``, ``STORAGE_QUOTA_EXCEEDED``)."""

    status = 429
    code = "QUOTA_EXCEEDED"


def _wire_messages(run_input: RunAgentInput) -> list[JsonObject]:
    return [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in run_input.messages]


def _incoming_bytes(wire: list[JsonObject]) -> int:
    """Bytes ``create_run`` will store for the input (its history items) plus the reserve."""
    return len(orjson.dumps(input_items(wire))) + RUN_RESERVE


class Services:
    """The gateway's services, bound to one app.

    Args:
        settings: process settings.
        routes: the served routes by name (file order).
        pipeline: the app's run pipeline (upstream -> decoder -> UI stage).
        auth: the client authenticator (default: one over :attr:`manager`'s store, no JWT).

    Attributes:
        manager: the :class:`~gateway.runs.RunManager` while the app lifespan runs (set and
            cleared by :func:`gateway.app.create_app`'s lifespan), else None: then the run
            endpoints answer 503 and the streaming endpoints stream without recording.
    """

    def __init__(
        self,
        settings: Settings,
        routes: Mapping[str, RouteConfig],
        pipeline: RunPipeline,
        *,
        auth: Authenticator | None = None,
    ) -> None:
        self.settings = settings
        self.routes = routes
        self.pipeline = pipeline
        self.manager: RunManager | None = None
        self.auth = auth or Authenticator(settings, store=self._store)
        self._rates: list[RateLimitItem] = (
            list(parse_many(settings.quota_rate)) if settings.quota_rate else []
        )
        self._limiter = MovingWindowRateLimiter(MemoryStorage())
        self._starting: dict[str, asyncio.Future[None]] = {}
        """The runs :meth:`start_run` is starting in this process, by store key: done once the
        run is recorded and its pump started, or its start failed (:meth:`run_of` waits)."""

    def _store(self) -> RunStore | None:
        return self.manager.store if self.manager is not None else None

    def route(self, name: str, caller: Caller = ANONYMOUS) -> RouteConfig:
        """The route named ``name``, when ``caller`` may call it.

        Raises:
            RouteNotFoundError: 404 ``ROUTE_NOT_FOUND``; the message lists the names the
                caller may call.
            RouteForbiddenError: 403 ``ROUTE_FORBIDDEN``, not in the caller's allowlist.
        """
        route = self.routes.get(name)
        if route is None:
            known = ", ".join(sorted(n for n in self.routes if caller.may_call(n))) or "none"
            raise RouteNotFoundError(f"no route named {name!r} (known: {known})")
        if not caller.may_call(name):
            raise RouteForbiddenError(f"route {name!r} is not allowed for this credential")
        return route

    async def check_rate(self, caller: Caller) -> None:
        """Count one request of ``caller``'s tenant against ``GATEWAY_QUOTA_RATE``.

        Raises:
            QuotaError: 429 ``RATE_LIMITED`` with ``Retry-After`` (seconds to the next slot).
        """
        key = caller.tenant or "-"
        for item in self._rates:
            if not await self._limiter.hit(item, "tenant", key):
                stats = await self._limiter.get_window_stats(item, "tenant", key)
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                raise QuotaError(
                    f"request rate above {item} for this tenant",
                    code="RATE_LIMITED",
                    headers={"retry-after": str(wait)},
                )

    async def _check_quotas(self, caller: Caller, manager: RunManager, incoming: int) -> int | None:
        """Refuse a run over the tenant's quotas; return its storage share (None: no quota)."""
        settings = self.settings
        if not (settings.quota_concurrent_runs or settings.quota_stored_bytes):
            return None
        usage = await manager.store.tenant_usage(caller.tenant)
        if settings.quota_concurrent_runs and usage.active_runs >= settings.quota_concurrent_runs:
            raise QuotaError(
                f"this tenant already has {usage.active_runs} runs going "
                f"(at most {settings.quota_concurrent_runs})",
                code="TOO_MANY_RUNS",
                headers={"retry-after": "1"},
            )
        quota = settings.quota_stored_bytes
        if quota and usage.stored_bytes + incoming > quota:
            raise QuotaError(
                f"this tenant's stored runs hold {usage.stored_bytes} bytes "
                f"(quota {quota}): older runs are deleted after the retention period",
                code="STORAGE_QUOTA_EXCEEDED",
            )
        return quota - usage.stored_bytes - incoming if quota else None

    async def run_of(self, caller: Caller, thread_id: str, run_id: str) -> RunRecord:
        """The caller's run ``run_id`` of its thread ``thread_id``. A run this process is
        starting (its POST is being served, the run not recorded yet) is waited for: a stop
        or a resume sent right after the request finds it (``docs/runs.md`` §2).

        Raises:
            RunNotFoundError: 404 ``RUN_NOT_FOUND``: unknown, of another thread, or of
                another tenant (one answer for all three).
            ForbiddenError: 403, a scoped token for another run.
            RouteForbiddenError: 403, the run's route is not in the caller's allowlist.
            RequestError: 503 without a store.
        """
        if caller.scope is not None and caller.scope != (thread_id, run_id):
            raise ForbiddenError("this token reads another run")
        key = caller.run_key(thread_id, run_id)
        try:
            run = await self.runs().get_run(key)
        except RunNotFoundError:
            starting = self._starting.get(key)
            if starting is None:
                raise RunNotFoundError(f"thread {thread_id!r} has no run {run_id!r}") from None
            # its POST is being served here: a stop (or a resume) sent right after the
            # request, before the run was recorded, is for that run, not a 404 (the upstream
            # request may already be out, docs/runs.md §2)
            await asyncio.shield(starting)
            try:
                run = await self.runs().get_run(key)
            except RunNotFoundError:  # its start failed: nothing was recorded
                raise RunNotFoundError(f"thread {thread_id!r} has no run {run_id!r}") from None
        if run.route is not None and not caller.may_call(run.route):
            raise RouteForbiddenError(f"route {run.route!r} is not allowed for this credential")
        return run

    async def active_run(
        self, caller: Caller, route: RouteConfig, chat_id: str
    ) -> RunRecord | None:
        """The newest queued/running run of the caller's chat ``chat_id`` started on ``route``
        (the AI SDK resume URL names the route: another route's run is not resumed there)."""
        runs = await self.runs().store.list_runs(
            caller.thread_key(chat_id), active_only=True, limit=20
        )
        return next((run for run in runs if run.route == route.name), None)

    async def rejoin(
        self, caller: Caller, route: RouteConfig, run_input: RunAgentInput
    ) -> tuple[RunRecord, Prelude] | None:
        """The run a ``POST /v1/agui/{route}`` re-joins, with its snapshot prelude (now), or
        None when its thread has no run of that ``runId`` (:mod:`gateway.runs.rejoin`).

        Raises:
            RunIdTakenError: 409 ``RUN_ID_TAKEN``, the run exists but the POST is new input.
            RouteForbiddenError, ForbiddenError: 403 (see :meth:`run_of`).
            RequestError: 503 without a store.
        """
        try:
            run = await self.run_of(caller, run_input.thread_id, run_input.run_id)
        except RunNotFoundError:
            return None
        prelude = await self.runs().snapshot_prelude(run.id)
        # the thread's messages too: a retry racing the first POST can come before the run's
        # first event is stored, when the prelude is still empty but the input is recorded
        known = known_ids(prelude.events) | await self.runs().thread_message_ids(run.thread_id)
        reason = rejoin_refusal(
            _wire_messages(run_input),
            known,
            route=route.name,
            run_route=run.route,
        )
        if reason is not None:
            raise RunIdTakenError(
                f"thread {run_input.thread_id!r} already has a run {run_input.run_id!r} and "
                f"this is not a retry of it: {reason}; choose a fresh runId"
            )
        return run, prelude

    async def history(
        self, caller: Caller, thread_id: str, *, limit: int, before_sequence: int | None
    ) -> HistoryPage:
        """One page of the caller's thread (an unknown or foreign thread: an empty page)."""
        return await self.runs().history(
            caller.thread_key(thread_id), limit=limit, before_sequence=before_sequence
        )

    async def client_history(
        self, caller: Caller, thread_id: str, *, format: str
    ) -> list[JsonObject]:
        """The caller's whole thread as ``format`` (``ai-sdk`` / ``agui``) messages
        (:meth:`RunManager.client_history`; an unknown or foreign thread: ``[]``)."""
        return await self.runs().client_history(caller.thread_key(thread_id), format=format)

    async def threads(self, caller: Caller, *, limit: int) -> list[ThreadSummary]:
        """The caller's threads, the most recently run first (only runs of the routes it may
        call count): the inspector's thread list."""
        store = self.runs().store
        return await store.list_threads(tenant=caller.tenant, routes=caller.routes, limit=limit)

    async def thread_runs(self, caller: Caller, thread_id: str, *, limit: int) -> list[RunRecord]:
        """The runs of the caller's thread ``thread_id``, newest first, those of routes it may
        not call left out (an unknown or foreign thread: none)."""
        runs = await self.runs().store.list_runs(caller.thread_key(thread_id), limit=limit)
        return [run for run in runs if run.route is None or caller.may_call(run.route)]

    def runs(self) -> RunManager:
        """The open run manager.

        Raises:
            RequestError: 503 ``RUNS_UNAVAILABLE`` when the run store is not open (the app
                is served without its lifespan).
        """
        if self.manager is None:
            raise RequestError(
                "durable runs are unavailable: the run store is opened by the app lifespan",
                code="RUNS_UNAVAILABLE",
                status=503,
            )
        return self.manager

    def live(
        self, route: RouteConfig, client: ClientRequest, *, accept_language: str | None
    ) -> AsyncGenerator[list[Event], None]:
        """The run's event batches, not recorded (the app runs without its lifespan).

        Raises:
            RequestTranslationError: the request has no equivalent upstream (422).
        """
        return self.pipeline.open(route, client, accept_language=accept_language)

    async def start_run(
        self,
        route: RouteConfig,
        client: ClientRequest,
        *,
        caller: Caller = ANONYMOUS,
        accept_language: str | None,
        message_id: str | None = None,
        continues: Sequence[str] = (),
        early: bool = False,
    ) -> RunRecord:
        """Build the upstream request, record the run, pump it in the background.

        Args:
            route: the route to run on.
            client: what the client posted (its ``RunAgentInput`` names thread and run).
            accept_language: the request's ``Accept-Language`` (UI labels).
            message_id: the assistant message id to record (AI SDK continuation).
            continues: the tool call ids the AI SDK continuation continues, recorded for its
                resumes (:attr:`~gateway.store.RunRecord.continues`).
            early: send the upstream request while the run is recorded (issue 13 item 2,
                ``docs/runs.md`` §2), for a caller that knows the run is new (the AG-UI
                endpoint after its re-join check; a runId the gateway made); else only once
                the run is recorded, so a taken runId never reaches the upstream.

        Returns:
            The recorded run (its ``id`` is the one to resume with).

        Raises:
            RequestError: 503 without a store.
            RequestTranslationError: 422, the input has no upstream equivalent (nothing is
                recorded then).
            RunExistsError: 409 ``RUN_EXISTS``, the ``runId`` is taken (the AG-UI stream
                endpoint re-joins it instead, :meth:`rejoin`).
            InterruptAnsweredError: 409 ``INTERRUPT_ANSWERED``, a ``resume[]`` entry answers
                an interrupt another run of the thread answered (claimed once, nothing
                recorded, no upstream request: ``docs/runs.md`` §7).
            InterruptSupersededError: 409 ``INTERRUPT_SUPERSEDED``; UnknownInterruptError:
                422 ``UNKNOWN_INTERRUPT``; InvalidRequestError: 422 ``INVALID_REQUEST`` (two
                entries for one interrupt): a ``resume[]`` entry answers no open interrupt of
                the thread (:func:`gateway.runs.interrupts.check_resume`; nothing recorded,
                no upstream request).
        """
        manager = self.runs()
        key = caller.run_key(client.run_input.thread_id, client.run_input.run_id)
        starting = asyncio.get_running_loop().create_future()
        mine = self._starting.setdefault(key, starting) is starting
        try:
            return await self._start_run(
                manager,
                route,
                client,
                caller=caller,
                accept_language=accept_language,
                message_id=message_id,
                continues=continues,
                early=early,
            )
        finally:
            if mine:
                del self._starting[key]
            starting.set_result(None)

    async def _start_run(
        self,
        manager: RunManager,
        route: RouteConfig,
        client: ClientRequest,
        *,
        caller: Caller,
        accept_language: str | None,
        message_id: str | None,
        continues: Sequence[str],
        early: bool,
    ) -> RunRecord:
        """:meth:`start_run`'s work (its callers wait for it through ``_starting``)."""
        # what create_run stores: the input as history items (gateway.runs.history)
        # a long conversation makes these seconds of CPU: off the loop (gateway.body_parse)
        size = len(client.run_input.messages)
        wire = await off_loop(size, _wire_messages, client.run_input)
        incoming = await off_loop(size, _incoming_bytes, wire)
        share = await self._check_quotas(caller, manager, incoming)
        if client.run_input.resume:  # answers to open interrupts only; their calls, metadata
            run_input = client.run_input
            thread_key = caller.thread_key(run_input.thread_id)
            run_key = caller.run_key(run_input.thread_id, run_input.run_id)
            raised = await check_resume(manager.store, thread_key, run_key, run_input)
            client = replace(
                client, interrupt_calls=raised.calls, interrupt_metadata=raised.metadata
            )
        client = await _with_upstream_ids(manager.store, caller, client)
        prepare = partial(self.pipeline.prepare, accept_language=accept_language)
        prepared = await off_loop(size, prepare, route, client)
        # RUN_STARTED at once (the client's first bytes do not wait for the upstream), except
        # for passthrough upstreams, whose own RUN_STARTED may carry metadata (messageId); it
        # is stored with the run, in one commit (issue 13 item 2)
        announce = not get_protocol(route.protocol).passthrough
        run_input = client.run_input
        # the run's ids are fixed here, once: the decoder stamps the recorded ones
        # ids the store refuses are remapped; the thread keeps each provider's own, once the
        # thread is recorded
        thread_key = caller.thread_key(run_input.thread_id)
        public_run_id = public_id(caller.run_key(run_input.thread_id, run_input.run_id))
        recorded: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def keep(mapping: dict[str, str]) -> None:
            await asyncio.shield(recorded)
            await manager.store.keep_upstream_ids(thread_key, mapping)

        batches = prepared.stream(
            thread_id=public_id(thread_key),
            run_id=public_run_id,
            keep=keep,
        )
        stream: AsyncGenerator[Any, None] = batches if share is None else capped(batches, share)
        source: AsyncGenerator[Any, None] | EarlyStream[Any] = stream
        if early and not run_input.resume:
            # The upstream request goes out while the run is recorded, not after (issue 13
            # item 2, docs/runs.md §2): what it sends waits for the pump, which starts once
            # the run and its RUN_STARTED are durable. A run answering interrupts (resume[]) is
            # recorded first: its answers are claimed in that commit, and a refused claim must
            # not reach the upstream. The cap is inside: closing the early stream closes it,
            # started or not.
            context = run_log_context(public_run_id, route.name, route.upstream_url)
            source = start_early(stream, context=context)
        try:
            run = await self._create(
                manager,
                caller,
                route,
                run_input,
                wire,
                message_id=message_id,
                announce=announce,
                continues=continues,
            )
        except BaseException:
            recorded.cancel()
            await source.aclose()  # the upstream request ends (RunExistsError: a re-join)
            raise
        recorded.set_result(None)
        # one chunk's events go to the pump together (issue 13: one call per chunk, not per event)
        manager.start(run, source, announce=announce)
        return run

    async def _create(
        self,
        manager: RunManager,
        caller: Caller,
        route: RouteConfig,
        run_input: RunAgentInput,
        wire: list[JsonObject],
        *,
        message_id: str | None,
        announce: bool = False,
        continues: Sequence[str] = (),
    ) -> RunRecord:
        thread_id, run_id = run_input.thread_id, run_input.run_id
        try:
            return await manager.create_run(
                thread_id=caller.thread_key(thread_id),
                run_id=caller.run_key(thread_id, run_id),
                route=route.name,
                upstream=route.upstream_url,
                model=requested_model(route, ClientRequest(run_input)),
                message_id=message_id,
                input_messages=wire,
                tenant=caller.tenant,
                answers=[(e.interrupt_id, e.status) for e in run_input.resume or []],
                announce=announce,
                continues=continues,
            )
        except RunExistsError:
            raise RunExistsError(f"thread {thread_id!r} already has a run {run_id!r}") from None


async def _with_upstream_ids(
    store: RunStore, caller: Caller, client: ClientRequest
) -> ClientRequest:
    """``client`` with :attr:`~agui_codecs.protocols.ClientRequest.upstream_ids` set: the
    provider ids behind the ``up-<32 hex>`` ids it names that its thread kept
    (:mod:`gateway.upstream_ids`); one store read, only when the request names such an id."""
    raw = client.raw
    if raw is None:  # not from HTTP: the ids of its messages
        ids = " ".join(message_ids(client.run_input.messages))
        raw = ids.encode("utf-8", "surrogatepass")
    found = gateway_ids_in((raw,))
    if not found:
        return client
    thread_key = caller.thread_key(client.run_input.thread_id)
    originals = await store.upstream_ids(thread_key, found)
    return replace(client, upstream_ids=originals) if originals else client
