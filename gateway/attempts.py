"""One run over several upstream attempts: retries, deployments, fallbacks (issue 19).

:func:`run_attempts` is the run's event source in :class:`~gateway.pipeline.RunPipeline`. It
streams the first attempt as today (each batch forwarded when decoded) and, when an attempt
fails, decides by what already reached the client (:class:`~gateway.sent.SentLog`):

1. nothing visible was sent, or the run stands at a safe step boundary (every tool call has
   its result, nothing of the failed step was sent): the failure is replaced by another
   attempt. A transient failure (:func:`gateway.retry.retryable`) is retried on the same
   route -- another deployment when it has several (:mod:`gateway.deployments`) -- after
   :func:`~gateway.retry.backoff` or the upstream's ``Retry-After`` (the longer), within the
   route's ``retry`` limits (attempts, ``max_elapsed``, ``max_retry_after``); then, and for
   any other failure, the route's fallbacks are tried in order (``fallback_on[kind or code]``
   when it names routes for the failure, else ``fallbacks``), each with its own retry
   settings and its own protocol's request builder. A retry after a boundary sends the
   request with the completed steps appended (assistant tool calls and their results), so no
   finished tool runs twice;
2. otherwise (text of the failed step, an unfinished tool call), the run ends with the
   attempt's typed RUN_ERROR, open parts closed first, as without retries.

The client sees one run: one RUN_STARTED, the content of the attempts that reached it, one
terminal event. Its ``metadata.attempts`` lists every attempt (:class:`AttemptRecord`,
:meth:`AttemptRecord.wire`); each attempt is also logged (logger ``gateway.attempts``) and
handed to the pipeline's observer (the metrics hook).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Protocol

from ag_ui.core import Event, EventType, RunErrorEvent

from agui_codecs import CodecError, get_decoder
from agui_codecs.identity import activity_ids, message_ids
from agui_codecs.protocols import ClientRequest

from .config import RouteConfig
from .deployments import Deployments, PoolFactory, local_pool
from .retry import backoff, failure_kind, retryable
from .sent import SentLog, split_closing
from .upstream import AttemptReport, Upstream, UpstreamBody, build_body

__all__ = ["AttemptObserver", "AttemptRecord", "RunPlan", "run_attempts"]

log = logging.getLogger("gateway.attempts")


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One upstream attempt of a run.

    Attributes:
        number: 1 for the first attempt of the run, counting across routes.
        route: the route name (the primary or a fallback).
        deployment: index of the route's deployment used (0: its own ``upstream_url``).
        model: the model requested (None for passthrough upstreams).
        outcome: ``"success"`` (the run ended with RUN_FINISHED), ``"error"`` or ``"skipped"``
            (the request could not be translated to a fallback's protocol).
        code: the RUN_ERROR code of a failed attempt.
        status: the upstream's HTTP status, when it answered.
        retry_after: seconds the upstream asked to wait, if it did.
        timeout: which timeout fired (:class:`~gateway.route_policy.TimeoutConfig`), if one did.
        waited: seconds waited before this attempt (backoff or ``Retry-After``).
        duration: seconds from the request to the attempt's last event.
        thread_id, run_id: the run's AG-UI ids.
    """

    number: int
    route: str
    deployment: int
    model: str | None
    outcome: str
    code: str | None = None
    status: int | None = None
    retry_after: float | None = None
    timeout: str | None = None
    waited: float = 0.0
    duration: float = 0.0
    thread_id: str = ""
    run_id: str = ""

    def wire(self) -> dict[str, Any]:
        """The ``metadata.attempts[]`` entry: camelCase, unset fields omitted, seconds
        rounded to milliseconds."""
        out: dict[str, Any] = {
            "attempt": self.number,
            "route": self.route,
            "deployment": self.deployment,
            "outcome": self.outcome,
        }
        optional = {
            "model": self.model,
            "code": self.code,
            "status": self.status,
            "retryAfter": self.retry_after,
            "timeout": self.timeout,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        out["waited"] = round(self.waited, 3)
        out["duration"] = round(self.duration, 3)
        return out


class AttemptObserver(Protocol):
    """Called once per finished attempt (e.g. to count attempts in ``/metrics``)."""

    def __call__(self, record: AttemptRecord) -> None: ...


Sleep = Callable[[float], Awaitable[None]]


@dataclass(slots=True)
class RunPlan:
    """What :func:`run_attempts` needs for one run.

    Attributes:
        route: the route the client addressed (with the model the request picked).
        request: what the client posted.
        body: the first attempt's body (built before the stream starts, so a request that
            cannot be translated is refused with 422 before any byte).
        routes: every route by name (the fallbacks are looked up here).
        pools: the deployment pools by route name (shared by the app's runs).
        max_event_size: cap on one upstream event, for each attempt's decoder.
        new_pool: makes a route's pool on first use (in-process by default; Redis-backed
            when the gateway has Redis, :mod:`gateway.deployments_redis`).
    """

    route: RouteConfig
    request: ClientRequest
    body: UpstreamBody
    routes: Mapping[str, RouteConfig]
    pools: dict[str, Deployments]
    max_event_size: int
    new_pool: PoolFactory = local_pool


def thread_ids(request: ClientRequest) -> Iterator[str]:
    """The entity ids the run's input holds (:func:`~agui_codecs.identity.message_ids`), each
    followed by the provider id behind it when the gateway remapped it
    (``ClientRequest.upstream_ids``): a provider reusing that id then gets a new AG-UI id, not
    the remapped one again (issue 11)."""
    originals = request.upstream_ids
    for agui_id in message_ids(request.run_input.messages):
        yield agui_id
        original = originals.get(agui_id)
        if original is not None:
            yield original


def pool_for(
    pools: dict[str, Deployments], route: RouteConfig, new_pool: PoolFactory = local_pool
) -> Deployments:
    """The route's deployment pool (made by ``new_pool`` on first use)."""
    pool = pools.get(route.name)
    if pool is None or len(pool) != len(route.deployments) + 1:
        pool = new_pool(route)
        pools[route.name] = pool
    return pool


def _with_model(route: RouteConfig, model: str | None) -> RouteConfig:
    return (
        route
        if model is None or model == route.model
        else route.model_copy(update={"model": model})
    )


async def run_attempts(
    upstream: Upstream,
    plan: RunPlan,
    *,
    observer: AttemptObserver | None = None,
    sleep: Sleep = asyncio.sleep,
    rng: random.Random | None = None,
) -> AsyncGenerator[list[Event], None]:
    """The run's event batches over as many attempts as the rules allow (module docstring).

    The last batch ends with the one terminal event, which carries ``metadata.attempts``
    (and ``metadata.timeout`` when a timeout ended the run). Never raises for upstream
    failures; closing the generator closes the attempt in flight.
    """
    loop = asyncio.get_running_loop()
    sent = SentLog()
    records: list[AttemptRecord] = []
    run_input = plan.request.run_input
    request = plan.request
    route = plan.route
    fallbacks: list[str] | None = None
    bodies: dict[tuple[str, str | None], UpstreamBody] = {(route.name, route.model): plan.body}
    waited = 0.0
    last: tuple[RunErrorEvent, AttemptReport] | None = None
    while True:  # one route of the chain
        pool = pool_for(plan.pools, route, plan.new_pool)
        targets = route.deployment_routes()
        route_began = loop.time()
        tried: list[int] = []
        failures = 0
        while True:  # one attempt on this route
            index = await pool.acquire(tried)
            tried.append(index)
            target = _with_model(targets[index], route.model)
            body = bodies.get((route.name, route.model))
            if body is None:
                try:
                    body = build_body(route, request)
                except CodecError as exc:  # the fallback's protocol cannot say it
                    await pool.release(index, failed=False)
                    record = AttemptRecord(
                        len(records) + 1,
                        route.name,
                        index,
                        route.model,
                        "skipped",
                        code=exc.code,
                        thread_id=run_input.thread_id,
                        run_id=run_input.run_id,
                    )
                    _note(records, record, observer, message=exc.message)
                    break
                bodies[(route.name, route.model)] = body
            decoder = get_decoder(
                route.protocol,
                thread_id=run_input.thread_id,
                run_id=run_input.run_id,
                max_event_size=plan.max_event_size,
            )
            # ids of the thread's history stay taken: a new entity never reuses one (issue 11)
            decoder.run.reserve(thread_ids(request))
            decoder.run.reserve_activities(activity_ids(run_input.messages))
            report = AttemptReport()
            began = loop.time()
            failure: RunErrorEvent | None = None
            closing: list[Event] = []
            finished = False
            source = upstream.events(
                target, body, decoder, thread_id=run_input.thread_id, report=report
            )
            try:
                async with aclosing(source):
                    async for batch in source:
                        if finished:  # after the terminal event (a multi-run upstream)
                            out = sent.forward(batch)
                            if out:
                                yield out
                            continue
                        terminal = _terminal_index(batch)
                        if terminal is None:
                            out = sent.forward(batch)
                            if out:
                                yield out
                            continue
                        end = batch[terminal]
                        if end.type == EventType.RUN_ERROR and terminal == len(batch) - 1:
                            assert isinstance(end, RunErrorEvent)
                            head, closing = split_closing(batch[:terminal])
                            out = sent.forward(head)
                            if out:
                                yield out
                            failure = end
                            break
                        # RUN_FINISHED (or a RUN_ERROR followed by more): the run's end
                        finished = True
                        record = _record(
                            records,
                            route,
                            index,
                            "success" if end.type == EventType.RUN_FINISHED else "error",
                            end,
                            report,
                            waited,
                            loop.time() - began,
                            run_input,
                        )
                        await pool.release(index, failed=False)
                        _note(records, record, observer)
                        out = sent.forward(batch[:terminal])
                        out.append(_annotated(end, records, report))
                        out += sent.forward(batch[terminal + 1 :])
                        yield out
            except BaseException:
                if not finished and failure is None:
                    _release_later(pool, index)
                raise
            if finished:
                return
            if failure is None:  # cannot happen: upstream.events always ends the run
                failure = RunErrorEvent(message="upstream ended early", code="UPSTREAM_TRUNCATED")
            last = (failure, report)
            code = failure.code or "UPSTREAM_ERROR"
            transient = retryable(code, report.status)
            await pool.release(index, failed=transient)
            failures += 1
            record = _record(
                records,
                route,
                index,
                "error",
                failure,
                report,
                waited,
                loop.time() - began,
                run_input,
            )
            delay = max(
                backoff(failures, base=route.retry.base_delay, cap=route.retry.max_delay, rng=rng),
                report.retry_after or 0.0,
            )
            retry = (
                sent.safe
                and transient
                and failures < route.retry.attempts
                and (
                    report.retry_after is None or report.retry_after <= route.retry.max_retry_after
                )
                and loop.time() - route_began + delay <= route.retry.max_elapsed
            )
            if retry:
                _note(records, record, observer, next_step=f"retrying in {delay:.3f} s")
            elif sent.safe:
                if fallbacks is None:
                    kind = failure_kind(code, report.status, failure.message)
                    fallbacks = list(
                        route.fallback_on.get(code)
                        or route.fallback_on.get(kind)
                        or route.fallbacks
                    )
                    fallbacks = [name for name in fallbacks if name in plan.routes]
                nxt = fallbacks[0] if fallbacks else None
                _note(
                    records,
                    record,
                    observer,
                    next_step=f"falling back to route {nxt!r}" if nxt else "giving up",
                )
                if nxt is None:
                    yield _final(sent, closing, failure, records, report)
                    return
            else:
                _note(records, record, observer, next_step="content was sent: no retry")
                yield _final(sent, closing, failure, records, report)
                return
            # replace the failed attempt: its closing events only for what the client saw
            out = sent.forward(closing)
            if out:
                yield out
            sent.next_attempt()
            if sent.content_sent:
                carried = run_input.model_copy(
                    update={"messages": [*run_input.messages, *sent.carried()]}
                )
                if carried.messages != request.run_input.messages:
                    request = dataclasses.replace(request, run_input=carried, raw=None)
                    bodies.clear()
            if retry:
                waited = delay
                await sleep(delay)
                continue
            waited = 0.0
            break
        # next route of the chain
        if fallbacks is None:  # a skipped (untranslatable) primary: take its fallbacks
            fallbacks = [name for name in route.fallbacks if name in plan.routes]
        if not fallbacks:  # the last fallbacks could not take the request
            if last is None:
                last = (
                    RunErrorEvent(message="no upstream could take the request", code="NO_UPSTREAM"),
                    AttemptReport(),
                )
            yield _final(sent, [], last[0], records, last[1])
            return
        route = plan.routes[fallbacks.pop(0)]


_releasing: set[asyncio.Future[None]] = set()


def _release_later(pool: Deployments, index: int) -> None:
    """Release ``index`` of an attempt ended by cancellation or by closing the run: in a
    task of its own, since an ``await`` here may be cancelled again before the pool (Redis)
    answers."""
    task = asyncio.ensure_future(pool.release(index, failed=False))
    _releasing.add(task)
    task.add_done_callback(_releasing.discard)


def _terminal_index(batch: list[Event]) -> int | None:
    for i, event in enumerate(batch):
        if event.type in (EventType.RUN_FINISHED, EventType.RUN_ERROR):
            return i
    return None


def _record(
    records: list[AttemptRecord],
    route: RouteConfig,
    index: int,
    outcome: str,
    end: Event,
    report: AttemptReport,
    waited: float,
    duration: float,
    run_input: Any,
) -> AttemptRecord:
    code = getattr(end, "code", None) if outcome == "error" else None
    return AttemptRecord(
        number=len(records) + 1,
        route=route.name,
        deployment=index,
        model=route.model,
        outcome=outcome,
        code=code,
        status=report.status,
        retry_after=report.retry_after,
        timeout=report.timeout,
        waited=waited,
        duration=duration,
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
    )


def _note(
    records: list[AttemptRecord],
    record: AttemptRecord,
    observer: AttemptObserver | None,
    *,
    next_step: str = "",
    message: str = "",
) -> None:
    records.append(record)
    level = logging.INFO if record.outcome == "success" else logging.WARNING
    log.log(
        level,
        "run %s attempt %d: route %s deployment %d model %s: %s%s%s%s",
        record.run_id,
        record.number,
        record.route,
        record.deployment,
        record.model,
        record.outcome,
        f" {record.code}" if record.code else "",
        f" ({message})" if message else "",
        f"; {next_step}" if next_step else "",
    )
    if observer is not None:
        try:
            observer(record)
        except Exception:  # a metrics bug must not end the run
            log.exception("attempt observer failed")


def _annotated(end: Event, records: list[AttemptRecord], report: AttemptReport) -> Event:
    metadata = dict(getattr(end, "metadata", None) or {})
    metadata["attempts"] = [r.wire() for r in records]
    if end.type == EventType.RUN_ERROR and report.timeout:
        metadata["timeout"] = report.timeout
    return end.model_copy(update={"metadata": metadata})


def _final(
    sent: SentLog,
    closing: list[Event],
    failure: RunErrorEvent,
    records: list[AttemptRecord],
    report: AttemptReport,
) -> list[Event]:
    out = sent.forward(closing)
    out.append(_annotated(failure, records, report))
    return out
