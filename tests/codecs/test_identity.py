"""``agui_codecs.identity``: derived ids are unique, deterministic and reversible (issue 11).

Properties over arbitrary ids: a derived id maps back to its provider id; an id the provider
chose itself (any string, including ones shaped like a derived id with a wrong check) is never
altered; minting never returns an id already used; :func:`provider_body` rewrites ids only,
never content, and leaves a body without derived ids as the same object / the same bytes.
"""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.identity import Identities, derived_id, provider_body, provider_id

IDS = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=20)


@given(base=IDS, n=st.integers(2, 10_000))
def test_a_derived_id_maps_back_to_the_providers(base: str, n: int) -> None:
    assert provider_id(derived_id(base, n)) == base
    assert derived_id(base, n) != base


@given(value=IDS)
def test_a_providers_own_id_is_never_altered(value: str) -> None:
    assert provider_id(value) == value
    forged = f"{value}~2-00000000"  # the shape without the right check
    assert provider_id(forged) == forged or forged == derived_id(value, 2)


@given(ids=st.lists(st.sampled_from(["a", "b", "call_0", "a~2"]), min_size=1, max_size=12))
def test_minting_never_reuses_an_id_and_resolves_to_the_latest(ids: list[str]) -> None:
    known = Identities()
    known.reserve(["call_0"])
    minted = []
    for provider in ids:
        peeked = known.peek(provider)
        agui_id = known.mint(provider)
        assert agui_id == peeked
        assert provider_id(agui_id) == provider
        assert known.resolve(provider) == agui_id
        assert known.resolve(agui_id) == agui_id
        minted.append(agui_id)
    assert len(set(minted)) == len(minted)
    assert "call_0" not in minted


def test_provider_body_rewrites_ids_not_content() -> None:
    derived = derived_id("call_0", 2)
    body = {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": derived, "function": {"arguments": derived}}],
            },
            {"role": "tool", "tool_call_id": derived, "content": derived},
            {"role": "user", "content": [{"type": "text", "text": derived}]},
        ],
        "pendingIds": [derived],
    }
    assert provider_body(body) == {
        "messages": [
            {
                "role": "assistant",
                "tool_calls": [{"id": "call_0", "function": {"arguments": derived}}],
            },
            {"role": "tool", "tool_call_id": "call_0", "content": derived},
            {"role": "user", "content": [{"type": "text", "text": derived}]},
        ],
        "pendingIds": ["call_0"],
    }
    plain = {"messages": [{"id": "x~y", "content": "a~b"}]}
    assert provider_body(plain) is plain
    raw = orjson.dumps(plain) + b"  "
    assert provider_body(raw) is raw
    assert orjson.loads(provider_body(orjson.dumps({"toolCallId": derived}))) == {
        "toolCallId": "call_0"
    }
