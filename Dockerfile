# syntax=docker/dockerfile:1
# agui-gateway container image (README "Deployment"; compose.yaml runs two of them).
#
#   docker build -t agui-gateway .
#   docker run -p 8000:8000 -v agui-data:/data agui-gateway
#
# Stage "build" installs the two distributions (non-editable: `pip install ./codecs .`, the
# codecs first, which the gateway requires as agui-codecs==0.1.0) into a virtualenv;
# stage "runtime" copies only that virtualenv onto the same slim base and runs as a non-root
# user. Every dependency ships manylinux wheels, so no compiler is needed.

# The interpreter the test suite runs on; override with --build-arg PYTHON_IMAGE=python:3.12-slim.
ARG PYTHON_IMAGE=python:3.11-slim

# --- build --------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS build

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH

WORKDIR /src
# Only what the wheels are built from (each pyproject's packages and package data; the READMEs
# are the readme metadata). tests/test_deployment_files.py builds both wheels from exactly
# these paths and checks they hold every package file.
COPY pyproject.toml README.md ./
COPY gateway ./gateway
COPY codecs ./codecs
COPY conformance ./conformance

RUN pip install ./codecs ./conformance . && pip check

# The installed package (not /src: -I keeps the working directory off sys.path) has its data:
# alembic migrations, the embedded routes, the JSON schemas of agui_codecs.ui and conformance.
RUN python -I -c "import gateway.migrations as m; from agui_codecs.ui import a2ui, hints; from conformance.agui import agui_event_schema; from gateway.config import load_routes; load_routes(None); hints.hints_schema(); a2ui.message_validator(); agui_event_schema(); assert (m.SCRIPT_LOCATION / 'versions' / '0001_initial.py').is_file(); assert (m.SCRIPT_LOCATION / 'script.py.mako').is_file(); print('package data ok')"

# --- runtime ------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS runtime

LABEL org.opencontainers.image.title="agui-gateway" \
      org.opencontainers.image.description="AG-UI protocol gateway: provider and runtime streams to AG-UI and AI SDK streams, durable resumable runs" \
      org.opencontainers.image.licenses="MIT"

# The run store defaults to a SQLite file on the /data volume; set GATEWAY_DATABASE_URL to a
# postgresql+asyncpg:// URL (and GATEWAY_REDIS_URL) to run several replicas (compose.yaml).
# GATEWAY_CONFIG unset = the embedded demo route.
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    GATEWAY_DATABASE_URL=sqlite+aiosqlite:////data/agui-gateway.db

RUN groupadd --system --gid 10001 agui \
 && useradd --system --uid 10001 --gid agui --home-dir /data --no-create-home \
      --shell /usr/sbin/nologin agui \
 && install -d -o agui -g agui -m 0750 /data

COPY --from=build /opt/venv /opt/venv

WORKDIR /data
VOLUME ["/data"]

USER 10001:10001

EXPOSE 8000

# No curl in slim images: the healthcheck uses the image's Python (urlopen raises on non-2xx).
# Liveness (/healthz): an orchestrator that restarts unhealthy containers must not restart a
# replica because its database is down. compose.yaml checks readiness (/readyz) instead, and
# Kubernetes takes both: livenessProbe /healthz, readinessProbe /readyz (README "Operating").
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"]

# Exec form: the gateway is PID 1 and gets SIGTERM, so uvicorn shuts down cleanly and the run
# manager closes the runs it pumps (RUN_INTERRUPTED) before the container stops.
CMD ["agui-gateway", "serve", "--host", "0.0.0.0", "--port", "8000"]
