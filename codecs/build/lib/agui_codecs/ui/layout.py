"""Component trees: a :class:`~.plan.Plan` and a projection variant → A2UI v0.9 components.

Only basic-catalog components (``specification/v0_9/catalogs/basic/catalog.json``): Card,
Column, Row, List (ChildList templates), Text (variants h3/h4/caption/body), Icon, Image,
Divider, Button (``openUrl`` function call or an ``event`` action). Values are bound to the data
model by JSON Pointer: absolute (``/item/<key>``) for single objects, relative (``<key>``) inside
List templates (A2UI v0.9 protocol, "Collection scopes"). Formats use the basic catalog's
client-side functions ``formatNumber``, ``formatCurrency``, ``formatDate`` and, for percent,
``formatString`` around ``formatNumber``.

The output depends only on (plan, variant): the compiler caches it and validates it once. The
one per-call literal, the URL of a ``link`` button (``openUrl.args.url`` is a literal
``string``/``format: uri`` in the catalog schema), is set by :func:`with_link_url`.

Component ids: ``root``, ``body``, ``title``, ``subtitle``, ``items``, ``item``, ``empty``,
``more``, ... and per field ``r_<key>`` (row), ``l_<key>`` (label), ``v_<key>`` (value),
``h_<key>`` / ``c_<key>`` (table header / cell). Field keys match ``[A-Za-z_][A-Za-z0-9_]*``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from .plan import FieldPlan, Plan

__all__ = ["LINK_BUTTON_ID", "build_components", "with_link_url"]

Component = dict[str, Any]

LINK_BUTTON_ID: Final = "link_btn"
_TEXTUAL: Final = frozenset({"text", "markdown", "enum", "bool", "url", "email"})


def _text(
    cid: str, text: Any, variant: str | None = None, weight: float | None = None
) -> Component:
    comp: Component = {"id": cid, "component": "Text", "text": text}
    if variant is not None:
        comp["variant"] = variant
    if weight is not None:
        comp["weight"] = weight
    return comp


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"call": name, "args": args, "returnType": "string"}


def _value(
    f: FieldPlan,
    cid: str,
    base: str,
    fallback: bool,
    *,
    variant: str | None = None,
    image_variant: str = "smallFeature",
    weight: float | None = None,
) -> Component:
    """The component showing field ``f`` bound at ``base + key`` (base "" or "/item/")."""
    path = base + f.key
    fmt = f.format
    if fmt == "image":
        comp: Component = {
            "id": cid,
            "component": "Image",
            "url": {"path": path},
            "fit": "cover",
            "variant": image_variant,
            "description": f.label,
        }
        if weight is not None:
            comp["weight"] = weight
        return comp
    if fallback or fmt in _TEXTUAL:
        return _text(cid, {"path": path}, variant, weight)
    args: dict[str, Any]
    if fmt == "number":
        args = {"value": {"path": path}}
        if f.decimals is not None:
            args["decimals"] = f.decimals
        return _text(cid, _call("formatNumber", args), variant, weight)
    if fmt == "currency":
        currency: Any = {"path": path + "-cur"} if f.currency_tokens is not None else f.currency
        args = {"value": {"path": path}, "currency": currency}
        if f.decimals is not None:
            args["decimals"] = f.decimals
        return _text(cid, _call("formatCurrency", args), variant, weight)
    if fmt == "percent":
        decimals = f.decimals if f.decimals is not None else 0
        template = "${formatNumber(value:${" + path + "}, decimals:" + str(decimals) + ")}%"
        return _text(cid, _call("formatString", {"value": template}), variant, weight)
    # date, datetime, time
    args = {"value": {"path": path}, "format": f.pattern}
    return _text(cid, _call("formatDate", args), variant, weight)


def _rows(
    fields: Sequence[FieldPlan], base: str, fallback: tuple[str, ...], out: list[Component]
) -> list[str]:
    """Label/value rows for ``fields``; appends the components, returns the row ids."""
    ids: list[str] = []
    for f in fields:
        rid = f"r_{f.key}"
        ids.append(rid)
        out.append(
            {
                "id": rid,
                "component": "Row",
                "children": [f"l_{f.key}", f"v_{f.key}"],
                "justify": "spaceBetween",
                "align": "center",
            }
        )
        out.append(_text(f"l_{f.key}", f.label, "caption"))
        out.append(_value(f, f"v_{f.key}", base, f.key in fallback))
    return ids


def _header(plan: Plan, out: list[Component]) -> tuple[list[str], list[str]]:
    """(title ids, subtitle ids)."""
    title: list[str] = []
    subtitle: list[str] = []
    if plan.title:
        out.append(_text("title", plan.title, "h3"))
        title.append("title")
    if plan.subtitle:
        out.append(_text("subtitle", plan.subtitle, "caption"))
        subtitle.append("subtitle")
    return title, subtitle


def _card(children: list[str], out: list[Component]) -> list[Component]:
    return [
        {"id": "root", "component": "Card", "child": "body"},
        {"id": "body", "component": "Column", "children": children},
        *out,
    ]


def _tail(plan: Plan, empty: bool, truncated: bool, out: list[Component]) -> list[str]:
    ids: list[str] = []
    if empty:
        out.append(_text("empty", plan.empty, "body"))
        ids.append("empty")
    if truncated:
        out.append(_text("more", {"path": "/more"}, "caption"))
        ids.append("more")
    return ids


def _record_list(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    empty, truncated, fallback = variant
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    children = [*title, *subtitle]
    if not empty:
        first, rest = plan.fields[0], plan.fields[1:]
        out.append(
            {
                "id": "items",
                "component": "List",
                "children": {"componentId": "item", "path": "/items"},
            }
        )
        out.append({"id": "item", "component": "Card", "child": "item_body"})
        body: list[Component] = []
        primary = _value(
            first, f"p_{first.key}", "", first.key in fallback, variant="h4", image_variant="avatar"
        )
        rows = _rows(rest, "", fallback, body)
        out.append({"id": "item_body", "component": "Column", "children": [primary["id"], *rows]})
        out.append(primary)
        out.extend(body)
        children.append("items")
    children += _tail(plan, empty, truncated, out)
    return [{"id": "root", "component": "Column", "children": children}, *out]


def _table(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    empty, truncated, fallback = variant
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    children = [*title, *subtitle]
    if not empty:
        out.append(
            {
                "id": "thead",
                "component": "Row",
                "children": [f"h_{f.key}" for f in plan.fields],
                "align": "center",
            }
        )
        out.extend(_text(f"h_{f.key}", f.label, "caption", weight=1) for f in plan.fields)
        out.append({"id": "tdiv", "component": "Divider", "axis": "horizontal"})
        out.append(
            {
                "id": "tbody",
                "component": "List",
                "children": {"componentId": "trow", "path": "/items"},
            }
        )
        out.append(
            {
                "id": "trow",
                "component": "Row",
                "children": [f"c_{f.key}" for f in plan.fields],
                "align": "center",
            }
        )
        out.extend(
            _value(f, f"c_{f.key}", "", f.key in fallback, image_variant="icon", weight=1)
            for f in plan.fields
        )
        children += ["thead", "tdiv", "tbody"]
    children += _tail(plan, empty, truncated, out)
    return [{"id": "root", "component": "Column", "children": children}, *out]


def _key_value(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    empty, truncated, _ = variant
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    children = [*title, *subtitle]
    if not empty:
        out.append(
            {
                "id": "kv",
                "component": "List",
                "children": {"componentId": "kv_row", "path": "/rows"},
            }
        )
        out.append(
            {
                "id": "kv_row",
                "component": "Row",
                "children": ["kv_k", "kv_v"],
                "justify": "spaceBetween",
                "align": "center",
            }
        )
        out.append(_text("kv_k", {"path": "label"}, "caption"))
        out.append(_text("kv_v", {"path": "value"}))
        children.append("kv")
    children += _tail(plan, empty, truncated, out)
    return _card(children, out)


def _record(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    rows = _rows(plan.fields, "/item/", variant[2], out)
    children = [*title, *subtitle, *rows]
    if plan.kind == "confirm":
        event = {"context": {"toolCallId": {"path": "/toolCallId"}}}
        out += [
            {
                "id": "actions",
                "component": "Row",
                "children": ["cancel_btn", "confirm_btn"],
                "justify": "end",
            },
            {
                "id": "cancel_btn",
                "component": "Button",
                "child": "cancel_lbl",
                "variant": "default",
                "action": {"event": {"name": "cancel", **event}},
            },
            _text("cancel_lbl", plan.cancel_label),
            {
                "id": "confirm_btn",
                "component": "Button",
                "child": "confirm_lbl",
                "variant": "primary",
                "action": {"event": {"name": "confirm", **event}},
            },
            _text("confirm_lbl", plan.confirm_label),
        ]
        children.append("actions")
    return _card(children, out)


def _status(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    state = plan.fields[0]
    out += [
        {
            "id": "state_row",
            "component": "Row",
            "children": ["state_icon", "state_text"],
            "align": "center",
        },
        {"id": "state_icon", "component": "Icon", "name": {"path": "/icon"}},
        _text("state_text", {"path": f"/item/{state.key}"}, "h4"),
    ]
    rows = _rows(plan.fields[1:], "/item/", variant[2], out)
    return _card([*title, "state_row", *subtitle, *rows], out)


def _link(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    url_key = plan.role["url"]
    label_key = plan.role.get("label", url_key)
    others = [f for f in plan.fields if f.key not in (url_key, label_key)]
    out.append(_text("link_label", {"path": f"/item/{label_key}"}, "h4"))
    out.append(_text("link_url", {"path": f"/item/{url_key}"}, "caption"))
    rows = _rows(others, "/item/", variant[2], out)
    out += [
        {
            "id": LINK_BUTTON_ID,
            "component": "Button",
            "child": "link_btn_lbl",
            "variant": "borderless",
            "action": {
                "functionCall": {
                    "call": "openUrl",
                    "args": {"url": "https://example.com/"},
                    "returnType": "void",
                }
            },
        },
        _text("link_btn_lbl", plan.open_label),
    ]
    return _card([*title, *subtitle, "link_label", "link_url", *rows, LINK_BUTTON_ID], out)


def _image(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    url_key = plan.role["url"]
    caption_key = plan.role.get("caption")
    img: Component = {
        "id": "img",
        "component": "Image",
        "url": {"path": f"/item/{url_key}"},
        "fit": "contain",
        "variant": "largeFeature",
    }
    if caption_key is not None:
        img["description"] = {"path": f"/item/{caption_key}"}
    out.append(img)
    children = [*title, "img"]
    if caption_key is not None:
        out.append(_text("img_caption", {"path": f"/item/{caption_key}"}, "caption"))
        children.append("img_caption")
    others = [f for f in plan.fields if f.key not in (url_key, caption_key)]
    rows = _rows(others, "/item/", variant[2], out)
    return _card([*children, *subtitle, *rows], out)


def _code(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    out: list[Component] = []
    title, subtitle = _header(plan, out)
    out.append(_text("code", {"path": "/code"}, "body"))
    return _card([*title, *subtitle, "code"], out)


_BUILDERS: Final = {
    "record": _record,
    "confirm": _record,
    "record_list": _record_list,
    "table": _table,
    "key_value": _key_value,
    "status": _status,
    "link": _link,
    "image": _image,
    "code": _code,
    "diff": _code,
}


def build_components(plan: Plan, variant: tuple[bool, bool, tuple[str, ...]]) -> list[Component]:
    """The component list for ``plan`` and a projection ``variant`` (root first).

    For ``link`` the button's URL is a placeholder: see :func:`with_link_url`.
    """
    return _BUILDERS[plan.kind](plan, variant)


def with_link_url(components: list[Component], url: str) -> list[Component]:
    """A shallow copy of ``components`` whose link button opens ``url`` (cached list untouched)."""
    out = list(components)
    for index, comp in enumerate(out):
        if comp.get("id") == LINK_BUTTON_ID:
            out[index] = {
                **comp,
                "action": {
                    "functionCall": {"call": "openUrl", "args": {"url": url}, "returnType": "void"}
                },
            }
            break
    return out
