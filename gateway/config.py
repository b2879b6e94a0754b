"""Gateway settings (environment, ``GATEWAY_*``) and routes (a TOML file).

Settings come from the environment through pydantic-settings (prefix ``GATEWAY_``)::

    GATEWAY_CONFIG              path of the routes TOML file (default: the embedded demo routes)
    GATEWAY_KEEPALIVE_SECONDS   idle seconds before a ``: keep-alive`` comment (default 15)
    GATEWAY_MAX_EVENT_SIZE      cap in bytes on one upstream SSE event (default 8 MiB)
    GATEWAY_MAX_REQUEST_BYTES   cap in bytes on a client request body (default 32 MiB)
    GATEWAY_CORS_ORIGINS        comma-separated origins allowed cross-origin (default: none)
    GATEWAY_DEMO                1: mount the demo upstream at /demo/openai even when no route
                                uses it (default: mounted only for a ``self:/demo/openai`` route)

Durable runs (issue 3; :class:`Settings` lists the run-core tunables too)::

    GATEWAY_DATABASE_URL        run store: sqlite+aiosqlite:///<data dir>/agui-gateway.db
                                (default) or postgresql+asyncpg://user@host/db
    GATEWAY_DATA_DIR            data directory of the default SQLite file (default: the
                                platform's user data dir, ~/.local/share/agui-gateway)
    GATEWAY_DATABASE_SCHEMA     PostgreSQL schema holding the tables (optional)
    GATEWAY_REDIS_URL           Redis Streams broker (unset: in-process, one replica only)
    GATEWAY_REDIS_PREFIX        key prefix of the run streams and deployment state ("agui:")
    GATEWAY_ON_DISCONNECT       "continue" (default) or "cancel": what a streaming endpoint's
                                run does when its client goes away

Routes file (TOML, one ``[[routes]]`` table per route)::

    [[routes]]
    name = "gpt"                                   # URL segment: /v1/agui/gpt
    upstream_url = "https://api.openai.com/v1"     # base URL; the protocol adds its path
    protocol = "openai-chat"                       # a registered protocol (agui_codecs.registry)
    model = "gpt-4o-mini"
    auth = { type = "bearer", env = "OPENAI_API_KEY" }
    headers = { "OpenAI-Organization" = "org-..." } # optional extra headers
    params = { temperature = 0.2 }                 # optional defaults for model parameters
    timeouts = { connect = 10, read = 300 }        # optional, seconds
    ui_profile = "copilotkit"                      # A2UI catalog: copilotkit | a2ui | <catalog id>
    ui_delivery = "activity"                       # AG-UI UI delivery: activity | metadata | seed
    ai_sdk_major = 6                               # optional: the useChat clients' ai major
    retry = { attempts = 3 }                       # retries, fallbacks, models, deployments:
    fallbacks = ["claude"]                         #   gateway.route_policy, README
    models = ["gpt-4o-mini", "gpt-4o"]             #   "Resilience and routing"

    [routes.ui_hints.list_events]                  # ui_hints v1 for the tool "list_events"
    kind = "record_list"
    data = "/events"
    fields = [{ key = "summary", label = "Event" }, { key = "start", format = "datetime" }]

    [[routes]]
    name = "claude"
    upstream_url = "https://api.anthropic.com/v1"
    protocol = "anthropic"
    model = "claude-sonnet-4-5"
    auth = { type = "header", header = "x-api-key", env = "ANTHROPIC_API_KEY" }

``protocol`` names a protocol of the codec registry (:func:`agui_codecs.get_protocol`): the
six built-ins or one a plugin registers; an unknown name is a :class:`~gateway.errors.ConfigError`
listing the known ones. ``upstream_url`` is ``http(s)://host[:port][/prefix][?query]`` or
``self:/path``: the
gateway's own ASGI app, called in process (the embedded ``demo`` route uses
``self:/demo/openai/v1``, so ``serve`` needs no second process, no key and no knowledge of its
own host and port). Provider protocols append their endpoint path to it (the same base-URL
convention as the OpenAI SDK and the AI SDK providers): ``/chat/completions``
(``openai-chat``), ``/messages`` (``anthropic``), ``/responses`` (``openai-responses``),
``/models/{model}:streamGenerateContent?alt=sse`` (``gemini``); a query on ``upstream_url``
(Azure's ``?api-version=``) is kept after that path, and a URL that already ends with the path
is refused (the error suggests the base URL). Headers the HTTP client owns (``host``,
``content-length``, ``transfer-encoding``, ``connection``...) cannot be set, and ``auth.env``
must be a variable *name*, never the key (checks in :mod:`gateway.route_checks`). For
passthrough protocols (spec ``passthrough``: ``ai-sdk`` and ``agui``) ``upstream_url`` is the
endpoint itself (``https://agent.example.com/api/chat``), ``model`` is optional and unused (the
backend picks its model; spec ``requires_model``) and ``params`` must be empty (the request is
forwarded, not translated).

``ui_hints`` (tool name -> ui_hints v1, ``agui_codecs/ui/ui_hints.v1.schema.json``) are
validated at start-up: a bad hint is a :class:`~gateway.errors.ConfigError` naming the route,
the tool and the JSON Pointer of the bad value.

A missing key variable is *not* a config error: the route loads and each request to it ends
with a RUN_ERROR ``UPSTREAM_AUTH_MISSING`` (so one unconfigured route never stops the others).
"""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_settings import SettingsConfigDict

from agui_codecs import CodecError, get_protocol
from agui_codecs.sse import DEFAULT_MAX_EVENT_SIZE
from agui_codecs.ui import (
    DEFAULT_PROFILE,
    UiHints,
    UiHintsConfigError,
    catalog_id_for,
    validate_route_hints,
)

from .bounds_settings import BoundsSettings
from .broker import DEFAULT_PREFIX as DEFAULT_REDIS_PREFIX
from .errors import ConfigError
from .route_checks import (
    check_header_name,
)
from .route_policy import Balance, CooldownConfig, RetryConfig, TimeoutConfig
from .route_target import _HEADER, SELF_SCHEME, AuthConfig, DeploymentConfig, _upstream_url
from .runs.settings import RunSettings
from .security_settings import SecuritySettings
from .store.engine import default_database_url, normalize_url

__all__ = [
    "DEFAULT_ROUTES_RESOURCE",
    "ON_DISCONNECT",
    "SELF_SCHEME",
    "UI_DELIVERIES",
    "AuthConfig",
    "DeploymentConfig",
    "RouteConfig",
    "Settings",
    "TimeoutConfig",
    "load_routes",
]

UiDelivery = Literal["activity", "metadata", "seed"]

UI_DELIVERIES: tuple[str, ...] = get_args(UiDelivery)
"""AG-UI delivery profiles of compiled UI (``agui_codecs.ui.delivery``)."""

AiSdkMajor = Literal[5, 6, 7]
"""``ai_sdk_major`` of a route: the ``ai`` major its ``useChat`` clients run (None: portable)."""

OnDisconnect = Literal["continue", "cancel"]

ON_DISCONNECT: tuple[str, ...] = get_args(OnDisconnect)
"""What a streaming endpoint's run does when its client goes away (``GATEWAY_ON_DISCONNECT``)."""

_RUN_DEFAULTS = RunSettings()


DEFAULT_ROUTES_RESOURCE = "default_routes.toml"
"""Package-data file of :mod:`gateway` used when no routes file is configured."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_ORIGIN = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^/\s?#]+$")
_SCHEMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RouteConfig(_Strict):
    """One route: a name clients address and the upstream it forwards to.

    Attributes:
        name: URL segment, ``[A-Za-z0-9][A-Za-z0-9_.-]*`` (at most 64 characters).
        upstream_url: base URL, ``http(s)://host[/prefix]`` or ``self:/path``.
        protocol: the name of a protocol in the codec registry
            (:func:`agui_codecs.get_protocol`).
        model: upstream model name (clients cannot override it).
        auth: see :class:`AuthConfig`.
        headers: extra request headers (e.g. ``anthropic-version``).
        params: default model parameters merged into every request body (client
            ``forwardedProps`` override the allowed ones). Must be empty for a passthrough
            protocol.
        timeouts: see :class:`TimeoutConfig`.
        ui_hints: tool name -> ui_hints v1 object; results of that tool get a compiled A2UI
            surface (``agui_codecs.ui``). Validated when the route is built.
        ui_profile: A2UI client profile: ``"copilotkit"`` (default), ``"a2ui"`` or an explicit
            catalog id (any value containing ``:``); decides the surface's ``catalogId``.
        ui_delivery: how the AG-UI endpoint delivers a surface: ``"activity"`` (default,
            ACTIVITY_SNAPSHOT after TOOL_CALL_RESULT), ``"metadata"`` (TOOL_CALL_RESULT
            ``metadata.ui_schema``) or ``"seed"`` (top-level ``ui_schema``, non-portable). The
            AI SDK endpoint sends ``data-ui-schema`` chunks whatever the profile.
        ai_sdk_major: the ``ai`` major (5, 6 or 7) of the route's ``useChat`` clients; ``None``
            (default) sends only chunks ai v5, v6 and v7 all accept; 6 or 7 sends tool approvals
            as ``tool-approval-request`` (:class:`~agui_codecs.encoders.ai_sdk.AiSdkEncoder`).
        retry: see :class:`~gateway.route_policy.RetryConfig` (on by default: 3 attempts).
        fallbacks: names of routes tried in order when this one failed for good before any
            content reached the client (or at a safe step boundary; :mod:`gateway.attempts`).
        fallback_on: error kind (:func:`gateway.retry.failure_kind`: ``context_length_exceeded``,
            ``rate_limited``, ``timeout``, ``unavailable``, ``error``) or exact RUN_ERROR code
            -> the routes tried for it instead of ``fallbacks``.
        models: the models a request may pick (``forwardedProps.model`` on AG-UI, the body's
            ``model`` on the AI SDK endpoint); ``model`` (the default) must be one of them.
            Empty: the request cannot choose.
        weight: weight of deployment 0 (the route's own ``upstream_url`` / ``auth``).
        deployments: more deployments (:class:`DeploymentConfig`).
        balance: ``"round-robin"`` (weighted, default) or ``"least-busy"``.
        cooldown: see :class:`~gateway.route_policy.CooldownConfig`.
    """

    name: str
    protocol: str  # before upstream_url, model and params: their checks depend on it
    upstream_url: str
    model: str | None = Field(default=None, min_length=1, validate_default=True)
    auth: AuthConfig = AuthConfig()
    headers: dict[str, str] = Field(default_factory=dict)
    params: dict[str, Any] = Field(default_factory=dict, validate_default=True)
    timeouts: TimeoutConfig = TimeoutConfig()
    ui_hints: dict[str, dict[str, Any]] = Field(default_factory=dict)
    ui_profile: str = DEFAULT_PROFILE
    ui_delivery: UiDelivery = "activity"
    ai_sdk_major: AiSdkMajor | None = None
    retry: RetryConfig = RetryConfig()
    fallbacks: list[str] = Field(default_factory=list)
    fallback_on: dict[str, list[str]] = Field(default_factory=dict)
    models: list[str] = Field(default_factory=list)
    weight: int = Field(default=1, ge=1, le=1000)
    deployments: list[DeploymentConfig] = Field(default_factory=list)
    balance: Balance = "round-robin"
    cooldown: CooldownConfig = CooldownConfig()
    _ui_hints: dict[str, UiHints] = PrivateAttr(default_factory=dict)

    @property
    def route_hints(self) -> dict[str, UiHints]:
        """``ui_hints`` validated: tool name -> :class:`~agui_codecs.ui.UiHints`."""
        return self._ui_hints

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("must match [A-Za-z0-9][A-Za-z0-9_.-]* (at most 64 characters)")
        return value

    @field_validator("protocol")
    @classmethod
    def _protocol(cls, value: str) -> str:
        try:
            get_protocol(value)
        except CodecError as exc:  # unknown name (the known ones listed), or a broken plugin
            raise ValueError(exc.message) from None
        return value

    @field_validator("upstream_url")
    @classmethod
    def _url(cls, value: str, info: ValidationInfo) -> str:
        return _upstream_url(value, info.data.get("protocol"))

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if not _HEADER.match(key):
                raise ValueError(f"invalid header name {key!r}")
            check_header_name(key)
            if "\r" in item or "\n" in item:
                raise ValueError(f"header {key!r} contains a line break")
        return value

    @field_validator("ui_hints")
    @classmethod
    def _hints(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        try:
            validate_route_hints(value)
        except UiHintsConfigError as exc:
            raise PydanticCustomError(
                "ui_hints_invalid",
                "tool {tool}: {message} (at JSON Pointer {pointer})",
                {"tool": repr(exc.tool), "message": exc.message, "pointer": exc.pointer or "/"},
            ) from exc
        return value

    @field_validator("ui_profile")
    @classmethod
    def _profile(cls, value: str) -> str:
        catalog_id_for(value)  # ValueError names the known profiles
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None, info: ValidationInfo) -> str | None:
        protocol = info.data.get("protocol")
        if value is None and protocol is not None and get_protocol(protocol).requires_model:
            raise PydanticCustomError("missing", "Field required")
        return value

    @field_validator("params")
    @classmethod
    def _params(cls, value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        protocol = info.data.get("protocol")
        if value and protocol is not None and get_protocol(protocol).passthrough:
            raise ValueError(f"must be empty: protocol {protocol!r} forwards the request as is")
        return value

    @model_validator(mode="after")
    def _parse_hints(self) -> RouteConfig:
        self._ui_hints = validate_route_hints(self.ui_hints)
        return self

    @model_validator(mode="after")
    def _check_routing(self) -> RouteConfig:
        for index, deployment in enumerate(self.deployments):
            if deployment.upstream_url is not None:
                try:
                    _upstream_url(deployment.upstream_url, self.protocol)
                except ValueError as exc:
                    raise ValueError(f"deployments[{index}].upstream_url: {exc}") from None
        if self.models and self.model is not None and self.model not in self.models:
            raise ValueError(f"model {self.model!r} is not in models {self.models}")
        if self.models and get_protocol(self.protocol).passthrough:
            raise ValueError(f"models must be empty: protocol {self.protocol!r} picks its own")
        if self.name in self.fallbacks or any(self.name in r for r in self.fallback_on.values()):
            raise ValueError("a route cannot be its own fallback")
        return self

    def deployment_routes(self) -> list[RouteConfig]:
        """This route once per deployment (0: itself), its ``upstream_url`` / ``auth`` replaced
        by the deployment's, with the weights (:mod:`gateway.deployments`)."""
        out = [self]
        for deployment in self.deployments:
            update: dict[str, Any] = {}
            if deployment.upstream_url is not None:
                update["upstream_url"] = _upstream_url(deployment.upstream_url, self.protocol)
            if deployment.auth is not None:
                update["auth"] = deployment.auth
            out.append(self.model_copy(update=update))
        return out

    def weights(self) -> list[int]:
        """Weight of each of :meth:`deployment_routes`."""
        return [self.weight, *(d.weight for d in self.deployments)]


class Settings(SecuritySettings, BoundsSettings):
    """Process-wide settings, read from ``GATEWAY_*`` environment variables; client auth and
    quotas are inherited from :class:`~gateway.security_settings.SecuritySettings`, broker
    memory bounds and connection timeouts from :class:`~gateway.bounds_settings.BoundsSettings`.

    Attributes:
        config: routes TOML file; ``None`` uses the embedded ``default_routes.toml``.
        keepalive_seconds: idle seconds before a ``: keep-alive`` SSE comment (> 0).
        max_event_size: cap in bytes on one upstream SSE event / JSON line (> 0).
        max_request_bytes: cap in bytes on a client request body (> 0); larger gets 413.
        database_url: the run store (``GATEWAY_DATABASE_URL``): a SQLite file by default
            (embedded, no server; ``sqlite://`` is accepted), ``agui-gateway.db`` in
            ``GATEWAY_DATA_DIR``, else in the platform's user data directory
            (:func:`gateway.store.engine.data_dir`; never the working directory), or PostgreSQL
            (``postgresql+asyncpg://`` / ``postgresql://``). Migrations are applied at start.
        database_schema: PostgreSQL schema for the tables (created when missing); lets
            deployments and tests share one database.
        database_max_readers: store reads holding a connection at once
            (``GATEWAY_DATABASE_MAX_READERS``, >= 1, default 8); more wait their turn in order
            (never a pool-timeout error, however many streams open at once). The store's pool
            holds this many plus 4 connections (the group writer, the rare single writes), with
            8 more on overflow, so the pool is never the cap below the stream target.
        redis_url: Redis Streams broker (``redis://``, ``rediss://``, ``unix://``); unset or
            empty: the in-process broker (a single replica).
        redis_prefix: key prefix of the run streams and the deployment state in Redis.
        retention_seconds: runs ended longer ago than this are purged with their events
            (0 keeps them forever). Default 7 days.
        heartbeat_interval: seconds between the replica's lease refreshes (one for all its
            runs) (> 0).
        lease_timeout: seconds without heartbeat after which another replica closes the run
            with RUN_ERROR ``RUN_INTERRUPTED``; must exceed ``heartbeat_interval``.
        reaper_interval: seconds between two looks for stale runs (> 0).
        batch_interval: seconds a text/reasoning/argument delta may wait before its batch is
            written (it is published at once) (> 0).
        batch_max_events: deltas per write batch at most (>= 1).
        reader_recheck: seconds after which an idle reader re-reads the store (> 0).
        upstream_max_connections: connections the upstream HTTP client may hold open at once,
            over all routes (httpx ``Limits.max_connections``; >= 1). Every streaming run holds
            one for its whole length, so this caps the concurrent runs: beyond it a run waits
            ``timeouts.pool`` seconds, then ends with ``UPSTREAM_TIMEOUT``. Default 10,000
            (httpx's own default of 100 capped the gateway at 100 open streams).
        upstream_max_keepalive: idle upstream connections kept for reuse (httpx
            ``Limits.max_keepalive_connections``; >= 0). Default 512.
        store_outage_grace: seconds a run's writes keep retrying while the database is
            unreachable before its live readers get RUN_ERROR ``STORE_UNAVAILABLE`` (>= 0).
        on_disconnect: ``"continue"`` (the run goes on without its client; resume it) or
            ``"cancel"`` (the run ends with RUN_ERROR ``RUN_CANCELED``) when the client of
            ``POST /v1/agui/{route}`` or ``/v1/ai-sdk/{route}`` goes away.
        cors_origins: comma-separated browser origins allowed to call the gateway
            cross-origin (``https://app.example.com,http://localhost:3000``, or ``*``); empty
            (default): no CORS headers, so browsers only let same-origin pages read replies.
        demo: mount the scripted demo upstream (:mod:`gateway.demo`) at ``/demo/openai``
            even when no route's ``upstream_url`` is ``self:/demo/openai...`` (it is mounted
            for such a route, as in the embedded default routes, whatever this says).
    """

    model_config = SettingsConfigDict(env_prefix="GATEWAY_", extra="ignore")

    config: Path | None = None
    keepalive_seconds: float = Field(default=15.0, gt=0)
    max_event_size: int = Field(default=DEFAULT_MAX_EVENT_SIZE, gt=0)
    max_request_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    database_url: str = Field(default_factory=default_database_url, min_length=1)
    database_schema: str | None = None
    database_max_readers: int = Field(default=8, ge=1)
    redis_url: str | None = None
    redis_prefix: str = Field(default=DEFAULT_REDIS_PREFIX, min_length=1)
    retention_seconds: float = Field(default=_RUN_DEFAULTS.retention, ge=0)
    heartbeat_interval: float = Field(default=_RUN_DEFAULTS.heartbeat_interval, gt=0)
    lease_timeout: float = Field(default=_RUN_DEFAULTS.lease_timeout, gt=0)
    reaper_interval: float = Field(default=_RUN_DEFAULTS.reaper_interval, gt=0)
    batch_interval: float = Field(default=_RUN_DEFAULTS.batch_interval, gt=0)
    batch_max_events: int = Field(default=_RUN_DEFAULTS.batch_max_events, ge=1)
    reader_recheck: float = Field(default=_RUN_DEFAULTS.reader_idle_recheck, gt=0)
    upstream_max_connections: int = Field(default=10_000, ge=1)
    upstream_max_keepalive: int = Field(default=512, ge=0)
    store_outage_grace: float = Field(default=_RUN_DEFAULTS.store_outage_grace, ge=0)
    on_disconnect: OnDisconnect = "continue"
    cors_origins: str = ""
    demo: bool = False

    @field_validator("cors_origins")
    @classmethod
    def _cors_origins(cls, value: str) -> str:
        origins = []
        for item in value.split(","):
            origin = item.strip().rstrip("/")
            if not origin:
                continue
            if origin != "*" and not _ORIGIN.match(origin):
                raise ValueError(
                    f"{origin!r} is not an origin: scheme://host[:port] (no path), or '*'"
                )
            origins.append(origin)
        return ",".join(origins)

    @property
    def cors_origin_list(self) -> list[str]:
        """:attr:`cors_origins` as a list (empty: no CORS headers are sent)."""
        return [o for o in self.cors_origins.split(",") if o]

    @field_validator("redis_url", "database_schema")
    @classmethod
    def _empty_is_unset(cls, value: str | None) -> str | None:
        return value or None

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str) -> str:
        try:
            normalize_url(value)
        except ValueError as exc:
            raise ValueError(str(exc)) from None
        except Exception as exc:  # sqlalchemy's ArgumentError for unparsable URLs
            raise ValueError(f"not a database URL: {exc}") from None
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("must be a redis://, rediss:// or unix:// URL")
        return value

    @field_validator("database_schema")
    @classmethod
    def _schema(cls, value: str | None) -> str | None:
        if value is not None and not _SCHEMA.match(value):
            raise ValueError("must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*, <= 63)")
        return value

    @model_validator(mode="after")
    def _check_runs(self) -> Settings:
        if self.database_schema is not None and not normalize_url(
            self.database_url
        ).get_backend_name().startswith("postgres"):
            raise ValueError("database_schema needs a PostgreSQL database_url")
        if self.lease_timeout <= self.heartbeat_interval:
            raise ValueError(
                f"lease_timeout ({self.lease_timeout}) must be longer than "
                f"heartbeat_interval ({self.heartbeat_interval})"
            )
        return self

    def load_routes(self) -> dict[str, RouteConfig]:
        """Load the routes of :attr:`config` (see :func:`load_routes`)."""
        return load_routes(self.config)

    def run_settings(self) -> RunSettings:
        """The run-core settings (:class:`gateway.runs.RunSettings`) these settings name."""
        return RunSettings(
            batch_interval=self.batch_interval,
            batch_max_events=self.batch_max_events,
            heartbeat_interval=self.heartbeat_interval,
            lease_timeout=self.lease_timeout,
            reaper_interval=self.reaper_interval,
            reader_idle_recheck=self.reader_recheck,
            retention=self.retention_seconds,
            store_outage_grace=self.store_outage_grace,
        )


def _read(path: Path | None) -> tuple[str, str]:
    if path is None:
        resource = resources.files("gateway").joinpath(DEFAULT_ROUTES_RESOURCE)
        return resource.read_text(encoding="utf-8"), f"<embedded {DEFAULT_ROUTES_RESOURCE}>"
    try:
        return Path(path).read_text(encoding="utf-8"), str(path)
    except FileNotFoundError:
        raise ConfigError(f"routes file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read routes file {path}: {exc}") from exc


def _describe(where: str, label: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors(include_url=False):
        field = ".".join(str(p) for p in err["loc"]) or "(route)"
        problems.append(f"{where}: {label}: field {field!r}: {err['msg']}")
    return "\n".join(problems)


def load_routes(path: Path | str | None) -> dict[str, RouteConfig]:
    """Read and validate a routes TOML file.

    Args:
        path: the file; ``None`` reads the embedded ``default_routes.toml``.

    Returns:
        The routes keyed by name, in file order.

    Raises:
        ConfigError: unreadable file, TOML syntax error, no ``[[routes]]``, a duplicate name,
            an unknown protocol or any invalid field. The message names the file, the route
            (by name, else by position) and the field, one line per problem.
    """
    text, where = _read(Path(path) if path is not None else None)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: invalid TOML: {exc}") from exc
    unknown = sorted(set(doc) - {"routes"})
    if unknown:
        raise ConfigError(f"{where}: unknown top-level keys {unknown} (expected [[routes]])")
    raw = doc.get("routes")
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{where}: no routes: add at least one [[routes]] table")
    routes: dict[str, RouteConfig] = {}
    problems: list[str] = []
    for index, item in enumerate(raw):
        name = item.get("name") if isinstance(item, dict) else None
        label = f"route {name!r}" if isinstance(name, str) else f"route #{index + 1}"
        try:
            route = RouteConfig.model_validate(item)
        except ValidationError as exc:
            problems.append(_describe(where, label, exc))
            continue
        if route.name in routes:
            problems.append(f"{where}: {label}: field 'name': duplicate route name")
            continue
        routes[route.name] = route
    for route in routes.values():
        named = [*route.fallbacks, *(n for names in route.fallback_on.values() for n in names)]
        for name in dict.fromkeys(named):
            if name not in routes:
                problems.append(
                    f"{where}: route {route.name!r}: field 'fallbacks': no route named {name!r}"
                )
    if problems:
        raise ConfigError("\n".join(problems))
    return routes
