"""The ``agui-gateway`` command line.

Subcommands:

* ``translate --from PROTOCOL --to agui|ai-sdk [FILE|-]``: translate a recorded upstream stream
  (SSE body, JSON lines or a JSON array) into a client stream on stdout. ``--from`` accepts
  every protocol of the codec registry (:mod:`agui_codecs.registry`: the built-ins and those
  installed plugins register), ``--to`` every registered encoder.
  Exit status: 0 translated; 1 the input was malformed (the stream written so far still ends
  with a terminal error event, and the reason goes to stderr); 2 usage error or unreadable file;
  3 the decoder failed on the input (a bug of ours, not of the input: the output still ends with
  a terminal error event, the traceback goes to stderr).
* ``serve [--config FILE] [--host H] [--port P]``: run the HTTP gateway (uvicorn).
* ``keys create|list|revoke``: client API keys (:mod:`gateway.keys_cli`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import BinaryIO

from agui_codecs import (
    DECODERS,
    ENCODERS,
    CodecError,
    InternalDecoderError,
    get_decoder,
    get_encoder,
)

__all__ = ["main", "translate"]

_READ_SIZE = 64 * 1024


def translate(
    source: BinaryIO,
    sink: BinaryIO,
    *,
    decoder_name: str,
    encoder_name: str,
    thread_id: str | None = None,
    run_id: str | None = None,
    max_event_size: int | None = None,
) -> CodecError | None:
    """Stream ``source`` through a decoder and an encoder into ``sink``.

    Returns the typed error when the input was malformed (the output then ends with RUN_ERROR
    / an AI SDK ``error`` chunk), else ``None``.

    Raises:
        LocalProtocolError: unknown decoder or encoder name.
    """
    options: dict[str, object] = {"thread_id": thread_id, "run_id": run_id}
    if max_event_size is not None:
        options["max_event_size"] = max_event_size
    decoder = get_decoder(decoder_name, **options)
    encoder = get_encoder(encoder_name)
    while True:
        chunk = source.read(_READ_SIZE)
        if not chunk:
            break
        events = decoder.feed(chunk)
        if events:
            sink.write(b"".join(encoder.encode(e) for e in events))
        if decoder.ended:
            break
    sink.write(b"".join(encoder.encode(e) for e in decoder.close()))
    sink.write(encoder.close())
    sink.flush()
    return decoder.error


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agui-gateway", description="AG-UI protocol gateway and stream translator."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("translate", help="translate a recorded upstream stream to stdout")
    t.add_argument(
        "--from",
        dest="source",
        required=True,
        choices=sorted(DECODERS),
        help="upstream protocol of the recording (any registered protocol)",
    )
    t.add_argument("--to", dest="target", required=True, choices=sorted(ENCODERS))
    t.add_argument("file", nargs="?", default="-", help="input file, or - for stdin (default)")
    t.add_argument("--thread-id", help="AG-UI threadId (default: derived from the upstream id)")
    t.add_argument("--run-id", help="AG-UI runId (default: derived from the upstream id)")
    t.add_argument(
        "--max-event-size", type=_positive_int, help="cap in bytes on one upstream event"
    )
    s = sub.add_parser("serve", help="run the HTTP gateway")
    s.add_argument("--config", help="routes TOML file (default: GATEWAY_CONFIG or the demo)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    from gateway.keys_cli import add_parser

    add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agui-gateway`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "serve":
        from gateway.server import serve

        serve(args.config, args.host, args.port)
        return 0
    if args.command == "keys":
        from gateway import keys_cli

        return keys_cli.run(args)
    try:
        source: BinaryIO = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")
    except OSError as exc:
        print(f"agui-gateway translate: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2
    try:
        error = translate(
            source,
            sys.stdout.buffer,
            decoder_name=args.source,
            encoder_name=args.target,
            thread_id=args.thread_id,
            run_id=args.run_id,
            max_event_size=args.max_event_size,
        )
    except BrokenPipeError:
        return 0
    finally:
        if source is not sys.stdin.buffer:
            source.close()
    name = args.file if args.file != "-" else "<stdin>"
    if isinstance(error, InternalDecoderError):
        print(
            f"agui-gateway translate: the {args.source} decoder failed on {name} "
            f"({error.code}: a bug in agui-gateway, not in the input; traceback above)",
            file=sys.stderr,
        )
        return 3
    if error is not None:
        print(
            f"agui-gateway translate: {name} is not a valid {args.source} stream: "
            f"{error.code}: {error.message}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
