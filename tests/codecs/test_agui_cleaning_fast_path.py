"""The AG-UI cleaner's fast path (an event whose keys are all wire names and whose values are
never null is copied as it is) gives what its field-by-field loop gives, repairs included
(issue 13)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from event_strategies import json_values
from hypothesis import given
from hypothesis import strategies as st

from agui_codecs.protocols.agui import _cleaning as cleaning
from agui_codecs.protocols.agui._cleaning import _CANONICAL, _FIELDS, AguiCleaner
from agui_codecs.protocols.agui.decoder import AguiNormalizer


@st.composite
def raw_events(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    etype = draw(st.sampled_from(sorted(_FIELDS)))
    keys = [*sorted(_FIELDS[etype]), "unknownField", "x"]
    raw = {"type": etype}
    for key in draw(st.lists(st.sampled_from(keys), max_size=5, unique=True)):
        raw[key] = draw(st.none() | json_values)
    return etype, raw


@given(raw_events())
def test_the_copy_is_what_the_loop_gives(case: tuple[str, dict[str, Any]]) -> None:
    etype, raw = case
    fast = raw.keys() <= _CANONICAL[etype] and None not in raw.values()
    cleaner = AguiNormalizer()
    before = Counter(cleaner.repairs)
    looped = AguiCleaner._cleaned_fields(cleaner, raw, _FIELDS[etype])
    if fast:
        assert looped == dict(raw) and list(looped) == list(raw)
        assert cleaner.repairs == before  # the loop repaired nothing


@given(raw_events())
def test_clean_is_the_same_with_and_without_the_fast_path(
    case: tuple[str, dict[str, Any]],
) -> None:
    """Whole ``_clean`` (reshaping and validation after the copy or the loop): the same wire
    or the same error, the same repairs."""
    _, raw = case

    def run(disable: bool) -> tuple[object, Counter[str]]:
        cleaner = AguiNormalizer()
        if disable:
            saved = dict(cleaning._CANONICAL)
            cleaning._CANONICAL.update({k: frozenset() for k in saved})
        try:
            out: object = cleaner._clean(dict(raw))
        except Exception as exc:  # compared, not handled
            out = (type(exc), str(exc))
        finally:
            if disable:
                cleaning._CANONICAL.update(saved)
        return out, Counter(cleaner.repairs)

    assert run(False) == run(True)
