"""The repository stands alone: nothing in it points outside it.

* No file refers to the ``shared`` folder the project once read from beside the repository
  (a sibling checkout, or its ``corpus``, ``docs`` and ``tools`` folders: :data:`OUTSIDE`); the
  recorded corpus is ``tests/corpus``, the protocol rules ``docs/protocols.md``, the run
  invariants ``docs/runs.md``. This file and ``.ci/run``'s guard spell the forbidden strings in
  pieces, so that they do not match themselves; nothing is exempt.
* No file holds an absolute path into the machine's work folder (the one this project was
  developed under), which no other checkout has.
* Every relative link in a Markdown file names a file or folder inside the repository, and a
  ``#fragment`` names a heading of the target Markdown file (GitHub's heading anchors).

The files checked are the ones git knows (tracked, plus untracked ones that are not ignored,
as ``.ci/run`` copies them); outside a git checkout (the copy ``.ci/run`` tests), every file
except build output (``.venv``, ``node_modules``, caches).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]

OUTSIDE = re.compile(rb"\.\./shared|shared/(corpus|docs|tools)")
"""The pattern of ``.ci/run``'s guard: a sibling checkout or the folders beside the repo."""

_UP = b".." + b"/shared"
_SHARED = b"shared" + b"/"
_WORK = b"/" + b"work"
ABSOLUTE_WORK = re.compile(rb"(?<![\w.~-])" + re.escape(_WORK) + rb"(?![\w.-])")
"""An absolute path into the work folder (:data:`_WORK`), not part of a longer path segment or
URL (``org/workspace`` and ``https://host/work/x`` do not match)."""

_SKIP_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "node_modules",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".mypy_shim",
        ".ruff_cache",
        ".hypothesis",
        "build",
        "dist",
    }
)


def _walk() -> list[str]:
    found: list[str] = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if rel.name == ".git" or any(
            p in _SKIP_DIRS or p.endswith(".egg-info") or p.startswith(".venv-")
            for p in rel.parts[:-1]
        ):
            continue
        if path.is_file() and not path.name.endswith((".pyc", ".db")):
            found.append(rel.as_posix())
    return found


@cache
def repository_files() -> tuple[str, ...]:
    """Paths (POSIX, relative to the root) of the repository's files, sorted."""
    git = shutil.which("git")
    if git is not None and (ROOT / ".git").exists():
        out = subprocess.run(
            [git, "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
            timeout=60,
        ).stdout
        names = [n.decode() for n in out.split(b"\0") if n]
        return tuple(sorted(n for n in names if (ROOT / n).is_file()))
    return tuple(sorted(_walk()))


def _hits(pattern: re.Pattern[bytes]) -> list[str]:
    hits: list[str] = []
    for name in repository_files():
        data = (ROOT / name).read_bytes()
        for match in pattern.finditer(data):
            line = data.count(b"\n", 0, match.start()) + 1
            hits.append(f"{name}:{line}: {match.group().decode(errors='replace')}")
    return hits


def test_the_file_list_is_the_repository() -> None:
    files = set(repository_files())
    assert {"README.md", "pyproject.toml", "docs/protocols.md", "docs/runs.md"} <= files
    assert "tests/corpus/MANIFEST.md" in files
    assert not any(
        f.startswith((".venv/", "node_modules/")) or "/node_modules/" in f for f in files
    )


def test_no_file_refers_to_a_folder_beside_the_repository() -> None:
    assert _hits(OUTSIDE) == []


def test_no_file_holds_an_absolute_path_into_the_work_folder() -> None:
    assert _hits(ABSOLUTE_WORK) == []


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        (b"see " + _UP + b"/x", True),
        (b"``" + _SHARED + b"corpus/gemini``", True),
        (_SHARED + b"docs/RUNS.md", True),
        (_SHARED + b"tools/loadbench", True),
        (b"tests/corpus/gemini", False),
        (b"docs/protocols.md", False),
        (b"shared by every replica", False),
    ],
)
def test_the_outside_pattern(text: bytes, hit: bool) -> None:
    assert bool(OUTSIDE.search(text)) is hit


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        (_WORK + b"/notes/preamble.md", True),
        (b"cd " + _WORK + b"/wt/x", True),
        (b'"' + _WORK + b'"', True),
        (b"org" + _WORK + b"space ids", False),
        (b"https://example.com" + _WORK + b"/x", False),
        (b"~" + _WORK + b"/x", False),
        (b"network" + _WORK + b"s", False),
    ],
)
def test_the_absolute_path_pattern(text: bytes, hit: bool) -> None:
    assert bool(ABSOLUTE_WORK.search(text)) is hit


# -- Markdown links ------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+[^)]*)?\)")
_REF_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def _strip_code(text: str) -> str:
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's heading anchor: lowercase, keep letters, digits, ``-``, ``_`` and spaces, then
    spaces to ``-`` (markup and other punctuation dropped)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"[`*]", "", text).lower()
    text = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """The heading anchors of one Markdown file (duplicates numbered ``-1``, ``-2``...)."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for match in _HEADING.finditer(_FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = _slug(match.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def markdown_links(path: Path) -> list[str]:
    """The link targets of one Markdown file, outside code (inline and reference links)."""
    text = _strip_code(path.read_text(encoding="utf-8"))
    return [m.group(1) for m in _INLINE_LINK.finditer(text)] + [
        m.group(1) for m in _REF_LINK.finditer(text)
    ]


def broken_links(source: Path, root: Path = ROOT) -> list[str]:
    """The relative links of the Markdown file ``source`` that do not resolve inside ``root``."""
    broken: list[str] = []
    for target in markdown_links(source):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # an absolute URL (https:, mailto:): not a file of the repository
        where, _, fragment = target.partition("#")
        resolved = (source.parent / unquote(where)).resolve() if where else source
        if not resolved.is_relative_to(root):
            broken.append(f"{target}: outside the repository")
        elif not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading with that anchor in {resolved.name}")
    return broken


MARKDOWN = [n for n in repository_files() if n.endswith(".md")]


def test_the_markdown_files_are_found() -> None:
    assert {"README.md", "ARCHITECTURE.md", "docs/protocols.md", "docs/runs.md"} <= set(MARKDOWN)


@pytest.mark.parametrize("name", MARKDOWN)
def test_relative_markdown_links_resolve_inside_the_repository(name: str) -> None:
    assert broken_links(ROOT / name) == []


def test_heading_anchors_follow_github() -> None:
    page = ROOT / "docs" / "protocols.md"
    assert {"1-server-sent-events", "2-ag-ui-10", "23-verify-rules", "26-resume"} <= anchors(page)
    assert _slug("Tool results as UI (`ui_hints`)") == "tool-results-as-ui-ui_hints"
    assert _slug("Browsers, CORS and auth") == "browsers-cors-and-auth"
    assert _slug("[Durable runs](#durable-runs)") == "durable-runs"


def test_the_link_checker_finds_broken_links(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\n## 1. Cursors\n", encoding="utf-8")
    page = root / "README.md"
    page.write_text(
        "[web](https://example.com) [mail](mailto:x@example.com) [top](#readme)\n"
        "[a](docs/a.md) [a1](docs/a.md#1-cursors) [dir](docs) [bad-anchor](docs/a.md#2-x)\n"
        "[gone](missing.md) [up](../outside.md) ![img](docs/none.png)\n"
        "`[not a link](nowhere.md)`\n\n```\n[nor this](nowhere.md)\n```\n\n"
        "# Readme\n\n[ref]: <docs/missing.md>\n",
        encoding="utf-8",
    )
    assert broken_links(page, root) == [
        "docs/a.md#2-x: no heading with that anchor in a.md",
        "missing.md: no such file",
        "../outside.md: outside the repository",
        "docs/none.png: no such file",
        "docs/missing.md: no such file",
    ]
