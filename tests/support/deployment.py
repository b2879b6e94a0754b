"""Parsers of the deployment files, shared by ``tests/test_deployment_files.py``: the
Dockerfile's stages and instructions, and Docker's ``.dockerignore`` matching (Go
``filepath.Match`` plus ``**``), so the tests check what a real build would copy."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE_PARTS",
    "DOCKERIGNORE",
    "ROOT",
    "Instruction",
    "build_stage",
    "context_files",
    "copied_sources",
    "dockerignored",
    "env_of",
    "global_args",
    "ignore_patterns",
    "parse_dockerfile",
    "pattern_regex",
]

ROOT = Path(__file__).resolve().parents[2]
DOCKERIGNORE = ROOT / ".dockerignore"
CACHE_PARTS = frozenset({"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction: keyword (upper case), ``--flags`` and the rest."""

    keyword: str
    flags: tuple[str, ...]
    args: str

    def exec_form(self) -> list[str] | None:
        """The JSON (exec form) argument list, or None for the shell form."""
        text = self.args.strip()
        if not text.startswith("["):
            return None
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value)
        return value


def parse_dockerfile(text: str) -> list[list[Instruction]]:
    """The Dockerfile's build stages (instructions before the first FROM form stage 0's
    preamble and are dropped), with comments removed and line continuations joined."""
    logical: list[str] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if current and line.startswith("#"):
            continue  # comment lines inside a continuation are skipped by Docker too
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        logical.append(current + line)
        current = ""
    assert not current, "Dockerfile ends inside a line continuation"
    stages: list[list[Instruction]] = []
    for line in logical:
        keyword, _, rest = line.partition(" ")
        rest = rest.strip()
        flags: list[str] = []
        while rest.startswith("--"):
            flag, _, rest = rest.partition(" ")
            flags.append(flag)
            rest = rest.strip()
        instruction = Instruction(keyword.upper(), tuple(flags), rest)
        if instruction.keyword == "FROM":
            stages.append([instruction])
        elif stages:
            stages[-1].append(instruction)
    return stages


def global_args(text: str) -> dict[str, str]:
    args: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("FROM"):
            break
        m = re.match(r"ARG\s+(\w+)=(\S+)", line)
        if m:
            args[m.group(1)] = m.group(2)
    return args


def env_of(stage: list[Instruction]) -> dict[str, str]:
    """ENV of a stage (``KEY=value`` pairs; quoted values unquoted)."""
    env: dict[str, str] = {}
    for ins in stage:
        if ins.keyword == "ENV":
            for token in shlex.split(ins.args):
                key, sep, value = token.partition("=")
                assert sep, f"ENV uses the legacy 'ENV key value' form: {ins.args!r}"
                env[key] = value
    return env


def build_stage(stages: list[list[Instruction]]) -> list[Instruction]:
    for stage in stages:
        if any(re.search(r"\bpip install\b", i.args) for i in stage if i.keyword == "RUN"):
            return stage
    raise AssertionError("no stage runs pip install")


def copied_sources(stages: list[list[Instruction]]) -> list[str]:
    """Build-context paths the Dockerfile copies (COPY without --from)."""
    sources: list[str] = []
    for stage in stages:
        for ins in stage:
            if ins.keyword == "COPY" and not any(f.startswith("--from") for f in ins.flags):
                parts = ins.exec_form() or shlex.split(ins.args)
                sources += [p.rstrip("/") for p in parts[:-1]]
    return sources


def ignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def pattern_regex(pattern: str) -> re.Pattern[str]:
    """Docker's .dockerignore matching (Go filepath.Match plus ``**``), as a regex."""
    out = ""
    i = 0
    pattern = pattern.strip("/")
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        elif pattern[i] == "[":
            end = pattern.index("]", i)
            out += "[" + pattern[i + 1 : end].replace("!", "^", 1) + "]"
            i = end + 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def dockerignored(path: str, patterns: list[str]) -> bool:
    """Whether the context path ``path`` is excluded (a match on a parent excludes it too;
    ``!`` patterns re-include; the last matching pattern wins)."""
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        regex = pattern_regex(pattern.lstrip("!"))
        if any(regex.fullmatch(c) for c in candidates):
            excluded = not negate
    return excluded


def context_files(sources: list[str]) -> list[str]:
    """Files under the copied paths, relative to the repo, caches and build output left out."""
    files: list[str] = []
    for source in sources:
        path = ROOT / source
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in found:
            rel = p.relative_to(ROOT)
            # pip install -e leaves *.egg-info; setuptools builds leave build/ in the project
            built = any(part.endswith(".egg-info") or part == "build" for part in rel.parts)
            if CACHE_PARTS.isdisjoint(rel.parts) and p.suffix != ".pyc" and not built:
                files.append(rel.as_posix())
    return files
