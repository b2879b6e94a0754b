"""``agui-gateway translate``: every corpus file of the skeleton's families, both outputs, and
clear failures on bad input."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from corpus import require_corpus

from gateway.cli import main, translate

FAMILIES = ["openai-chat", "anthropic"]


def _files() -> list[tuple[str, Path]]:
    return [(fam, p) for fam in FAMILIES for p in require_corpus(fam)]


@pytest.mark.parametrize("target", ["agui", "ai-sdk"])
def test_translate_handles_every_skeleton_corpus_file(target: str) -> None:
    files = _files()
    assert len(files) == 30  # the "all 30 corpus files of the two families"
    for family, path in files:
        out = io.BytesIO()
        with path.open("rb") as source:
            error = translate(source, out, decoder_name=family, encoder_name=target)
        assert error is None, f"{path.name}: {error}"
        body = out.getvalue()
        assert body.endswith(b"data: [DONE]\n\n" if target == "ai-sdk" else b"}\n\n")


def test_console_script_streams_to_stdout() -> None:
    path = require_corpus("openai-chat")[0]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "translate",
            "--from",
            "openai-chat",
            "--to",
            "agui",
            str(path),
        ],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(b'data: {"type":"RUN_STARTED"')


def test_malformed_input_exits_1_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.sse"
    bad.write_bytes(
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: {oops\n\n'
    )
    assert main(["translate", "--from", "openai-chat", "--to", "agui", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "bad.sse is not a valid openai-chat stream: UPSTREAM_MALFORMED" in captured.err
    assert '"RUN_ERROR"' in captured.out  # the stream written so far still ends cleanly


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "--from", "anthropic", "--to", "ai-sdk", str(tmp_path / "nope")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_unknown_decoder_is_a_usage_error() -> None:
    with pytest.raises(SystemExit) as info:
        main(["translate", "--from", "nope", "--to", "agui", "-"])
    assert info.value.code == 2


@pytest.mark.parametrize("value", ["0", "-5", "ten"])
def test_max_event_size_must_be_a_positive_integer(value: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(["translate", "--from", "openai-chat", "--to", "agui", "--max-event-size", value, "-"])
    assert info.value.code == 2


def test_truncated_recording_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cut = tmp_path / "cut.sse"
    cut.write_bytes(
        b'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"The answer is"}}]}\n\n'
    )
    assert main(["translate", "--from", "openai-chat", "--to", "ai-sdk", str(cut)]) == 1
    assert "UPSTREAM_TRUNCATED" in capsys.readouterr().err


def test_wrong_family_says_no_events_of_that_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = require_corpus("anthropic")[0]
    assert main(["translate", "--from", "openai-chat", "--to", "agui", str(path)]) == 1
    assert "held no openai-chat events" in capsys.readouterr().err


def test_a_decoder_bug_exits_3_and_does_not_blame_the_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agui_codecs.protocols.openai_chat.decoder import OpenAIChatDecoder

    def buggy(self: object, frame: object) -> None:
        raise IndexError("our bug")

    monkeypatch.setattr(OpenAIChatDecoder, "handle", buggy)
    path = require_corpus("openai-chat")[0]
    assert main(["translate", "--from", "openai-chat", "--to", "agui", str(path)]) == 3
    captured = capsys.readouterr()
    assert "INTERNAL_DECODER_ERROR" in captured.err and "not in the input" in captured.err
    assert "is not a valid" not in captured.err
    assert '"code":"INTERNAL_DECODER_ERROR"' in captured.out  # still a clean end
