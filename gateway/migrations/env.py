"""Alembic environment: migrates the connection given by :func:`gateway.migrations.upgrade`."""

from __future__ import annotations

from alembic import context

from gateway.store.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # pragma: no cover - only reachable through the alembic CLI
    raise RuntimeError("run migrations through gateway.migrations.upgrade(engine)")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
