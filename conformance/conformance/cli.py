"""``agui-conformance``: check captured or live streams against the real clients' rules.

Usage::

    agui-conformance check FILE|URL [--protocol agui|ai-sdk|auto] [--ai-sdk-major 5|6|7|all]
                           [--post input.json] [--header K:V] [--continues TOOL_CALL_ID]
    agui-conformance run URL [--input run.json] [--protocol agui|ai-sdk] [--header K:V]
                         [--save capture.sse]
    agui-conformance scenarios URL [--model-port 8765] [--only NAME] [--clients DIR]
    agui-conformance corpus DIR [--progress]
    agui-conformance rules [--markdown]
    agui-conformance explain RULE

Common options: ``--format table|json|junit|sarif`` (default ``table``), ``--all`` (table:
list every violation, not five per rule), ``--profile 1.0|1.1`` (AG-UI: the stock 1.0 client
or the 1.1 specification), ``--fail-on error|warning|info|never`` (default ``error``).
Exit status (:data:`EXIT_CODES`, also in ``--help``): 0 when no violation is at least as
severe as ``--fail-on``, 1 when one is, 2 on a usage error or an input that cannot be read.
The progress bar of ``corpus`` goes to stderr, only when stderr is a terminal or
``--progress`` is given.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .inputs import check_bytes, detect_protocol
from .live import default_input, run_live
from .net import NetError, fetch
from .report import Report, Violation, format_json, format_junit, format_table
from .rule_docs import explain, rules_markdown
from .rules import RULES
from .sarif import format_sarif

__all__ = ["EXIT_CODES", "main"]

EXIT_CODES = {
    0: "no violation at or above --fail-on (default: no stream rejected)",
    1: "a violation at or above --fail-on (default: a real client rejects a stream)",
    2: "usage error, unknown rule, or an input that cannot be read (file missing, endpoint "
    "unreachable before any byte)",
}
"""The exit statuses of ``agui-conformance``."""

_SKIP_SUFFIXES = frozenset({".md", ".txt", ".py", ".mjs", ".yaml", ".yml", ".toml"})


def _render(reports: Sequence[Report], fmt: str, *, show_all: bool) -> str:
    if fmt == "json":
        return format_json(reports)
    if fmt == "junit":
        return format_junit(reports)
    if fmt == "sarif":
        return format_sarif(reports)
    if fmt == "none":
        return ""
    return format_table(reports, limit_per_rule=None if show_all else 5)


def _majors(value: str) -> list[int]:
    return [5, 6, 7] if value == "all" else [int(value)]


def _check_one(
    data: bytes,
    source: str,
    protocol: str,
    majors: list[int],
    profile: str = "1.0",
    continues: Sequence[str] = (),
) -> list[Report]:
    proto = detect_protocol(data) if protocol == "auto" else protocol
    if proto == "agui":
        return [check_bytes(data, protocol="agui", source=source, profile=profile)]
    return [
        check_bytes(data, protocol="ai-sdk", major=m, source=source, continues=continues)
        for m in majors
    ]


class _Progress:
    """A one-line progress bar on stderr (``[#####.....] 12/40 name``)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool) -> None:
        self.total, self.stream, self.enabled = total, stream, enabled

    def update(self, done: int, name: str) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // max(self.total, 1)
        bar = "#" * filled + "." * (width - filled)
        self.stream.write(f"\r[{bar}] {done}/{self.total} {name[-40:]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 80 + "\r")
            self.stream.flush()


def _headers(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or []:
        name, sep, text = value.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"--header {value!r}: expected NAME: VALUE")
        out[name.strip()] = text.strip()
    return out


def _read_input(path: str | None, protocol: str) -> dict[str, Any]:
    if path is None:
        return default_input("ai-sdk" if protocol == "ai-sdk" else "agui")
    value = json.loads(Path(path).read_text("utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path} does not hold a JSON object (a request body)")
    return value


def _cmd_check(args: argparse.Namespace) -> list[Report]:
    source: str = args.source
    if source.startswith(("http://", "https://")) and args.post is not None:
        protocol = "ai-sdk" if args.protocol == "ai-sdk" else "agui"
        live = run_live(
            source,
            _read_input(args.post, protocol),
            protocol=protocol,  # type: ignore[arg-type]
            major=_majors(args.ai_sdk_major)[0],
            profile=args.profile,
            headers=_headers(args.header),
            timeout=args.timeout,
        )
        return [live.report]
    if source.startswith(("http://", "https://")):
        data = fetch(source, timeout=args.timeout)
    else:
        data = Path(source).read_bytes()
    majors = _majors(args.ai_sdk_major)
    return _check_one(data, source, args.protocol, majors, args.profile, args.continues or ())


def _cmd_run(args: argparse.Namespace) -> list[Report]:
    protocol = args.protocol
    run_input = _read_input(args.input, protocol)
    show_live = args.format == "table"

    def show(violation: Violation) -> None:
        where = "-" if violation.index is None else violation.index
        print(f"  {violation.severity:<7} {where!s:>5}  {violation.rule_id}  {violation.message}")

    live = run_live(
        args.url,
        run_input,
        protocol=protocol,
        major=int(args.ai_sdk_major),
        profile=args.profile,
        headers=_headers(args.header),
        timeout=args.timeout,
        max_gap=args.max_gap,
        on_violation=show if show_live else None,
    )
    if args.save:
        Path(args.save).write_bytes(live.capture)
    return [live.report]


def _cmd_scenarios(args: argparse.Namespace) -> list[Report]:
    from .scenarios import ModelServer, format_results, run_scenarios

    with ModelServer(port=args.model_port) as server:
        print(f"scripted model at {server.url}/v1 (OpenAI Chat, Responses; Anthropic Messages)")
        results = run_scenarios(
            args.url,
            server,
            names=args.only or None,
            protocol=args.protocol,
            major=int(args.ai_sdk_major),
            headers=_headers(args.header),
            timeout=args.timeout,
            clients=Path(args.clients) if args.clients else None,
        )
    if args.format == "table":
        print(format_results(results))
        args.format = "none"
    # a failed data check or a client rejection fails the run like an error
    args.scenario_failed = any(not r.ok for r in results)
    return [rep for r in results for rep in r.reports]


def _cmd_corpus(args: argparse.Namespace) -> list[Report]:
    root = Path(args.dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".") and p.suffix not in _SKIP_SUFFIXES
    )
    progress = _Progress(len(files), sys.stderr, args.progress or sys.stderr.isatty())
    reports: list[Report] = []
    for done, path in enumerate(files, 1):
        progress.update(done, path.name)
        name = str(path.relative_to(root))
        majors = _majors(args.ai_sdk_major)
        reports += _check_one(
            path.read_bytes(), name, args.protocol, majors, args.profile, args.continues or ()
        )
    progress.close()
    return reports


def _cmd_rules(args: argparse.Namespace) -> list[Report]:
    if args.markdown:
        sys.stdout.write(rules_markdown())
        return []
    for rule in RULES.values():
        print(f"{rule.id:<50} {rule.severity:<8} {rule.summary}")
    return []


def _cmd_explain(args: argparse.Namespace) -> list[Report]:
    if args.rule not in RULES:
        near = [r for r in RULES if args.rule in r]
        hint = f"; did you mean {', '.join(near[:5])}?" if near else ""
        raise ValueError(f"no rule {args.rule!r}{hint} (agui-conformance rules lists them)")
    sys.stdout.write(explain(args.rule))
    return []


def _parser() -> argparse.ArgumentParser:
    epilog = "exit status:\n" + "\n".join(f"  {k}  {v}" for k, v in EXIT_CODES.items())
    parser = argparse.ArgumentParser(
        prog="agui-conformance",
        description="Check AG-UI and AI SDK UI message streams against the rules of the real "
        "clients (@ag-ui/client 1.0.0; ai 5, 6, 7) and the AG-UI 1.1 specification.",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--format", choices=("table", "json", "junit", "sarif"), default="table")
        p.add_argument("--all", action="store_true", help="table: list every violation")
        p.add_argument("--timeout", type=float, default=60.0, help="network timeout (s)")
        p.add_argument(
            "--fail-on",
            choices=("error", "warning", "info", "never"),
            default="error",
            help="lowest severity that makes the exit status 1 (default error)",
        )
        p.add_argument(
            "--profile",
            choices=("1.0", "1.1"),
            default="1.0",
            help="AG-UI: the stock @ag-ui/client 1.0.0 (default) or the AG-UI 1.1 spec",
        )
        p.epilog = epilog
        p.formatter_class = argparse.RawDescriptionHelpFormatter

    def protocol(p: argparse.ArgumentParser) -> None:
        p.add_argument("--protocol", choices=("agui", "ai-sdk", "auto"), default="auto")
        p.add_argument(
            "--ai-sdk-major",
            choices=("5", "6", "7", "all"),
            default="7",
            help="AI SDK major whose client rules apply (default 7)",
        )
        p.add_argument(
            "--continues",
            action="append",
            metavar="TOOL_CALL_ID",
            help="AI SDK: the stream continues an assistant message with a tool part of this "
            "toolCallId (repeatable; the tool-approval flow's tool-output-* for it is legal)",
        )

    def header(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--header",
            action="append",
            metavar="NAME: VALUE",
            help="request header (repeatable), e.g. 'authorization: Bearer ...'",
        )

    check = sub.add_parser("check", help="check a captured stream (file or URL)")
    check.add_argument("source", help="SSE body, JSON lines or JSON array; or an http(s) URL")
    check.add_argument(
        "--post",
        metavar="INPUT.json",
        help="URL: POST this request body (live check) instead of a GET",
    )
    protocol(check)
    header(check)
    common(check)
    check.set_defaults(func=_cmd_check)

    run = sub.add_parser("run", help="POST a run to an AG-UI or AI SDK endpoint, check it live")
    run.add_argument("url")
    run.add_argument("--input", help="JSON request body (default: a one-message run)")
    run.add_argument("--protocol", choices=("agui", "ai-sdk"), default="agui")
    run.add_argument("--ai-sdk-major", choices=("5", "6", "7"), default="7")
    run.add_argument("--save", metavar="FILE", help="write the captured body there")
    run.add_argument(
        "--max-gap", type=float, default=30.0, help="longest silence (s) before an idle-gap warning"
    )
    header(run)
    common(run)
    run.set_defaults(func=_cmd_run)

    scen = sub.add_parser("scenarios", help="drive an adapter with scripted models")
    scen.add_argument("url", help="the adapter's AG-UI (or AI SDK) endpoint")
    scen.add_argument(
        "--model-port",
        type=int,
        default=8765,
        help="port of the scripted model on 127.0.0.1 (point the adapter at "
        "http://127.0.0.1:PORT/v1)",
    )
    scen.add_argument("--only", action="append", help="run only this scenario (repeatable)")
    scen.add_argument("--protocol", choices=("agui", "ai-sdk"), default="agui")
    scen.add_argument("--ai-sdk-major", choices=("5", "6", "7"), default="7")
    scen.add_argument(
        "--clients",
        metavar="DIR",
        help="a client harness (replay.mjs + node_modules) for the real verdict",
    )
    header(scen)
    common(scen)
    scen.set_defaults(func=_cmd_scenarios)

    corpus = sub.add_parser("corpus", help="check every capture under a directory")
    corpus.add_argument("dir")
    protocol(corpus)
    corpus.add_argument("--progress", action="store_true", help="progress bar even without a TTY")
    common(corpus)
    corpus.set_defaults(func=_cmd_corpus)

    rules = sub.add_parser("rules", help="list the rule ids")
    rules.add_argument("--markdown", action="store_true", help="the rules page (every rule)")
    rules.set_defaults(func=_cmd_rules)

    explain_ = sub.add_parser("explain", help="what a rule means, why, and how to fix it")
    explain_.add_argument("rule", help="a rule id, e.g. agui/verify/tool-args-without-start")
    explain_.set_defaults(func=_cmd_explain)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``agui-conformance``; returns the exit status (:data:`EXIT_CODES`)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        reports = args.func(args)
    except (OSError, NetError, ValueError) as exc:
        print(f"agui-conformance: {exc}", file=sys.stderr)
        return 2
    if args.command in ("rules", "explain"):
        return 0
    sys.stdout.write(_render(reports, args.format, show_all=getattr(args, "all", False)))
    if getattr(args, "scenario_failed", False) and args.fail_on != "never":
        return 1
    return 1 if any(r.failed(args.fail_on) for r in reports) else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
