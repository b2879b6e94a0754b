"""A2UI v0.9 constants, the vendored JSON Schemas, and message checks.

Spec: A2UI v0.9 (``specification/v0_9`` of google/A2UI at ade478fa; vendored files and license
in ``schemas/README.md``). A surface is three server-to-client messages, each
``{"version": "v0.9", <one of createSurface | updateComponents | updateDataModel>: {...}}``.

Catalog ids: the basic catalog is published as
``https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json`` (its ``$id``; what
``@a2ui/web_core`` 0.11 ``basicCatalog`` and ``@ag-ui/a2ui-middleware`` use), but CopilotKit
(``@copilotkit/a2ui-renderer`` 1.74) registers the same components and functions under
``https://a2ui.org/specification/v0_9/basic_catalog.json``. A renderer rejects a surface whose
``catalogId`` it does not know ("Catalog not found"), so the id is chosen per client profile.

We build messages as plain dicts (see :mod:`.compiler` for why not ``a2ui-core``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # jsonschema is imported on first validation, not with the codecs
    from jsonschema import Draft202012Validator

__all__ = [
    "A2UI_BASIC_CATALOG_ID",
    "A2UI_VERSION",
    "CATALOG_PROFILES",
    "COPILOTKIT_CATALOG_ID",
    "catalog_id_for",
    "check_tree",
    "icon_names",
    "message_validator",
    "schema_errors",
]

A2UI_VERSION: Final = "v0.9"
A2UI_BASIC_CATALOG_ID: Final = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
COPILOTKIT_CATALOG_ID: Final = "https://a2ui.org/specification/v0_9/basic_catalog.json"

CATALOG_PROFILES: Final[Mapping[str, str]] = {
    "copilotkit": COPILOTKIT_CATALOG_ID,
    "a2ui": A2UI_BASIC_CATALOG_ID,
}
"""Client profile → basic catalog id. ``copilotkit`` is the default profile."""

_SCHEMA_BASE: Final = "https://a2ui.org/specification/v0_9/"
_SCHEMA_FILES: Final = {
    "server_to_client.json": "schemas/v0_9/server_to_client.json",
    "common_types.json": "schemas/v0_9/common_types.json",
    "catalogs/basic/catalog.json": "schemas/v0_9/catalogs/basic/catalog.json",
}


def catalog_id_for(profile: str) -> str:
    """The catalog id for a client profile (``copilotkit``, ``a2ui``) or an explicit id.

    Any value containing ``:`` is taken as a catalog id itself (a renderer that registered the
    basic catalog under its own id).

    Raises:
        ValueError: an unknown profile name.
    """
    if profile in CATALOG_PROFILES:
        return CATALOG_PROFILES[profile]
    if ":" in profile:
        return profile
    raise ValueError(
        f"unknown A2UI catalog profile {profile!r}; use one of {sorted(CATALOG_PROFILES)}"
    )


@functools.cache
def _schemas() -> dict[str, dict[str, Any]]:
    root = resources.files(__package__)
    return {
        name: json.loads(root.joinpath(path).read_text("utf-8"))
        for name, path in _SCHEMA_FILES.items()
    }


@functools.cache
def message_validator() -> Draft202012Validator:
    """A draft 2020-12 validator for one A2UI v0.9 server-to-client message.

    ``server_to_client.json`` refers to ``catalog.json`` next to itself; the basic catalog is
    registered under that URI and under its own ``$id``.
    """
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    schemas = _schemas()
    catalog = Resource.from_contents(schemas["catalogs/basic/catalog.json"], DRAFT202012)
    registry: Registry[Any] = Registry().with_resources(
        [
            (
                _SCHEMA_BASE + "server_to_client.json",
                Resource.from_contents(schemas["server_to_client.json"], DRAFT202012),
            ),
            (
                _SCHEMA_BASE + "common_types.json",
                Resource.from_contents(schemas["common_types.json"], DRAFT202012),
            ),
            (_SCHEMA_BASE + "catalogs/basic/catalog.json", catalog),
            (_SCHEMA_BASE + "catalog.json", catalog),
        ]
    )
    return Draft202012Validator(schemas["server_to_client.json"], registry=registry)


@functools.cache
def icon_names() -> frozenset[str]:
    """Icon names of the A2UI v0.9 basic catalog ``Icon`` component (read from the schema)."""
    icon = _schemas()["catalogs/basic/catalog.json"]["components"]["Icon"]
    for part in icon["allOf"]:
        name = part.get("properties", {}).get("name")
        if name:
            return frozenset(name["oneOf"][0]["enum"])
    raise LookupError("Icon names not found in the vendored basic catalog")


def schema_errors(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Validate each message against the A2UI v0.9 server-to-client schema.

    Returns one ``"messages[i]<pointer>: <error>"`` string per failing message (empty: valid).
    """
    validator = message_validator()
    out: list[str] = []
    for index, msg in enumerate(messages):
        errors = sorted(validator.iter_errors(msg), key=lambda e: e.path)
        if errors:
            err = errors[0]
            where = "".join(f"/{p}" for p in err.absolute_path)
            out.append(f"messages[{index}]{where}: {err.message[:300]}")
    return out


def _child_refs(component: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(static child ids, template component ids) referenced by ``component``."""
    static: list[str] = []
    templates: list[str] = []
    for prop in ("child", "trigger", "content"):
        value = component.get(prop)
        if isinstance(value, str):
            static.append(value)
    children = component.get("children")
    if isinstance(children, list):
        static.extend(c for c in children if isinstance(c, str))
    elif isinstance(children, Mapping) and isinstance(children.get("componentId"), str):
        templates.append(children["componentId"])
    return static, templates


def check_tree(components: Sequence[Mapping[str, Any]]) -> list[str]:
    """Structural checks the JSON Schema cannot express (A2UI v0.9 protocol §updateComponents).

    Exactly one ``root``; unique ids; every referenced id defined; no cycles; every component
    reachable from ``root``. Returns the problems found (empty: fine).
    """
    problems: list[str] = []
    by_id: dict[str, Mapping[str, Any]] = {}
    for comp in components:
        cid = comp.get("id")
        if not isinstance(cid, str):
            problems.append(f"component without a string id: {comp!r:.80}")
            continue
        if cid in by_id:
            problems.append(f"duplicate component id {cid!r}")
        by_id[cid] = comp
    if "root" not in by_id:
        problems.append("no component with id 'root'")
        return problems
    reached: set[str] = set()

    def visit(cid: str, path: tuple[str, ...]) -> None:
        if cid in path:
            problems.append(f"cycle through {cid!r}")
            return
        comp = by_id.get(cid)
        if comp is None:
            problems.append(f"{path[-1] if path else 'root'!r} refers to undefined {cid!r}")
            return
        if cid in reached:
            return
        reached.add(cid)
        static, templates = _child_refs(comp)
        for child in static + templates:
            visit(child, (*path, cid))

    visit("root", ())
    unreachable = sorted(set(by_id) - reached)
    if unreachable:
        problems.append(f"unreachable components {unreachable}")
    return problems
