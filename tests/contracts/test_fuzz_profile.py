"""The fuzz harness' short profile (the long one is ``make fuzz``, ``tests/fuzz/run.py``).

Hostile bodies of :mod:`fuzz_inputs` (mutated corpus of the decoder's family and the others,
generated tokens, invalid UTF-8, huge lines, deep nesting, NaN / Infinity, duplicate keys)
through every registered decoder, then both encoders, then the conformance kit:

* nothing raises out of a decoder, an encoder or the kit (``check_bytes`` of the raw body and of
  both encodings);
* the decoded run (the decoder's raw output), the run as the pump stores it (through the store
  guard, :func:`stored_runs.stored_run`: issue 12 item 3) and both encodings have no error-level
  violation for ``@ag-ui/client`` 1.0.0 and ``ai`` 7 (the kit, whose verdicts
  ``tests/conformance/test_differential.py`` proves against the real clients).
"""

from __future__ import annotations

import os

import pytest
from decoder_runs import DECODER_FAMILIES, decoder_names, wire
from fuzz_inputs import bodies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stored_runs import stored_run

from agui_codecs import InternalDecoderError, get_decoder
from agui_codecs.encoders.agui import AguiEncoder
from agui_codecs.encoders.ai_sdk import AiSdkEncoder
from conformance import check_bytes, check_events

EXAMPLES = int(os.environ.get("GATEWAY_TEST_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("name", decoder_names())
@FUZZ
@given(data=st.data())
def test_hostile_bodies_through_decoder_encoders_and_kit_raise_nothing_illegal(
    name: str, data: st.DataObject
) -> None:
    body = data.draw(bodies(DECODER_FAMILIES.get(name)), label="body")
    decoder = get_decoder(name)
    events = decoder.feed(body) + decoder.close()
    assert not isinstance(decoder.error, InternalDecoderError), repr(decoder.error.__cause__)
    decoded = wire(events)
    assert check_events(decoded).errors == []
    assert check_events(stored_run(decoded)).errors == []
    check_bytes(body)  # the kit reads any bytes without raising
    for encoder, protocol in ((AguiEncoder(), "agui"), (AiSdkEncoder(), "ai-sdk")):
        out = b"".join(encoder.encode(e) for e in events) + encoder.close()
        report = check_bytes(out, protocol=protocol)  # type: ignore[arg-type]
        assert report.errors == [], (protocol, [v.to_json() for v in report.errors])
