"""The long fuzz hunt (``make fuzz``): hostile bodies into every decoder, both encoders and the
conformance kit, until an input count or a time budget is reached.

Each input is one body of :func:`fuzz_inputs.bodies` (mutated corpus of the decoder's family
and of the others, generated tokens and hostile payloads) for one decoder drawn from the
registry, with one framing option and one random split. It is checked for what
``docs/protocols.md`` and issue 12 promise:

Decoders are checked on every input; the encoders and the kit on every eighth.

* *uncaught*: an exception out of a decoder's ``feed()``/``close()``, an
  :class:`~agui_codecs.InternalDecoderError` (a decoder bug caught by the base class), an
  exception out of an encoder (``agui``, ``ai-sdk``) given the decoded run, or out of the kit
  (``conformance.check_bytes`` of the raw body, and of both encoders' output);
* *split-dependent*: the split feeding gave other events, error or trailing count than one feed;
* *kit rejects (stored)*: the decoded run as the run pump stores it (through the store guard,
  :func:`stored_runs.stored_run`; issue 12 item 3 wants 0) has an error-level violation of the
  conformance kit (``@ag-ui/client`` 1.0.0 would reject it);
* *kit rejects (raw)*: the decoder's own output has one (a decoder bug the guard repaired or
  ended the run on), counted apart.

Prints the counts (and the first failures); every failing input is written to
``build/fuzz/<kind>-<decoder>-<sha1>.bin`` to become a regression test. Exit status 1 when any
failure was found. Options: ``--inputs N`` (default 1,000,000), ``--seconds S`` (default 3600),
``--seed``.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import sys
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from decoder_runs import DECODER_FAMILIES, decoder_names, wire  # noqa: E402
from fuzz_inputs import RandomPicker, body_for, feed_split, random_splits  # noqa: E402
from stored_runs import stored_run  # noqa: E402

from agui_codecs import InternalDecoderError, get_decoder  # noqa: E402
from agui_codecs.encoders.agui import AguiEncoder  # noqa: E402
from agui_codecs.encoders.ai_sdk import AiSdkEncoder  # noqa: E402
from conformance import check_bytes, check_events  # noqa: E402

OUT = ROOT / "build" / "fuzz"
FRAMINGS = (None, None, None, "auto", "sse", "jsonl", "json")
WINDOWS = (None, 2048, 2048, 8192)
"""Corpus files are mutated whole or cut to a window first (more, faster inputs)."""


class _Budget(Exception):
    """Raised inside the hypothesis test to stop the hunt at its time budget."""


class Hunt:
    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.inputs = 0
        self.failures: Counter[str] = Counter()
        self.shown: set[str] = set()
        self.started = time.monotonic()

    def record(self, kind: str, name: str, body: bytes, detail: str) -> None:
        self.failures[kind] += 1
        digest = hashlib.sha1(body).hexdigest()[:12]
        OUT.mkdir(parents=True, exist_ok=True)
        (OUT / f"{kind}-{name}-{digest}.bin").write_bytes(body)
        key = f"{kind}:{name}:{detail[:120]}"
        if key not in self.shown and len(self.shown) < 40:
            self.shown.add(key)
            print(f"[{kind}] {name} {digest}: {detail[:400]}", flush=True)

    def check(self, name: str, body: bytes, cuts: list[int], options: dict[str, Any]) -> None:
        self.inputs += 1
        decoder = get_decoder(name, **options)
        events, escaped = feed_split(decoder.feed, decoder.close, body, [])
        if escaped is not None:
            self.record("uncaught", name, body, repr(escaped))
            return
        if isinstance(decoder.error, InternalDecoderError):
            cause = decoder.error.__cause__
            where = traceback.extract_tb(cause.__traceback__)[-1] if cause else None
            self.record("uncaught", name, body, f"internal: {cause!r} at {where}")
        whole = (wire(events), _err(decoder.error), decoder.trailing)
        again = get_decoder(name, **options)
        split_events, split_escaped = feed_split(again.feed, again.close, body, cuts)
        split = (wire(split_events), _err(again.error), again.trailing)
        if split_escaped is not None or split != whole:
            self.record("split", name, body, f"cuts={cuts[:20]} {_diff(whole, split)}")
        report = check_events(whole[0])
        if report.errors:
            self.record("kit-rejects-raw", name, body, str([v.rule_id for v in report.errors]))
        stored = check_events(stored_run(whole[0]))
        if stored.errors:
            self.record("kit-rejects-stored", name, body, str([v.rule_id for v in stored.errors]))
        if self.inputs % 8:
            return self._deadline()
        for encoder_name, encoder in (("agui", AguiEncoder()), ("ai-sdk", AiSdkEncoder())):
            try:
                out = b"".join(encoder.encode(e) for e in events) + encoder.close()
            except Exception as exc:
                self.record("uncaught", f"{name}>{encoder_name}", body, repr(exc))
                continue
            try:
                check_bytes(out, protocol="agui" if encoder_name == "agui" else "ai-sdk")
            except Exception as exc:
                self.record("uncaught", f"kit<{encoder_name}", body, repr(exc))
        try:
            check_bytes(body)
        except Exception as exc:
            self.record("uncaught", "kit", body, repr(exc))
        self._deadline()

    def _deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise _Budget


def _err(error: BaseException | None) -> tuple[str, str | None, str] | None:
    if error is None:
        return None
    return (type(error).__name__, getattr(error, "code", None), str(error))


def _diff(a: tuple[Any, ...], b: tuple[Any, ...]) -> str:
    if a[1:] != b[1:]:
        return f"error/trailing {a[1:]} != {b[1:]}"
    for i, (x, y) in enumerate(zip(a[0], b[0], strict=False)):
        if x != y:
            return f"event {i}: {x} != {y}"
    return f"{len(a[0])} events != {len(b[0])}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)  # the internal-error log is counted, not printed
    hunt = Hunt(args.seconds)
    names = decoder_names()
    pick = RandomPicker(args.seed)
    try:
        while hunt.inputs < args.inputs:
            name = pick.choice(names)
            body = body_for(pick, DECODER_FAMILIES.get(name), window=pick.choice(WINDOWS))
            framing = pick.choice(FRAMINGS)
            options: dict[str, Any] = {} if framing is None else {"framing": framing}
            if not pick.integer(0, 3):
                options["max_event_size"] = pick.integer(16, 4096)
            hunt.check(name, body, random_splits(pick, body), options)
    except _Budget:
        pass
    elapsed = time.monotonic() - hunt.started
    print(
        f"inputs run: {hunt.inputs} in {elapsed:.0f} s ({hunt.inputs / max(elapsed, 1e-9):.0f}/s)"
    )
    print(f"uncaught exceptions: {hunt.failures['uncaught']}")
    print(f"split-dependent outcomes: {hunt.failures['split']}")
    print(f"stored runs the kit rejects: {hunt.failures['kit-rejects-stored']}")
    print(f"decoded runs (raw decoder output) the kit rejects: {hunt.failures['kit-rejects-raw']}")
    if hunt.failures:
        print(f"failing inputs written to {OUT}")
    return 1 if hunt.failures else 0


if __name__ == "__main__":
    sys.exit(main())
