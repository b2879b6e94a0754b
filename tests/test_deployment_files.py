"""Static checks of the deployment files (``Dockerfile``, ``.dockerignore``, ``compose.yaml``)
and of the package they install.

No Docker engine is needed: the files are parsed and checked for what matters (a non-root
user, a healthcheck, ``pip install ./codecs ./conformance .``, two replicas sharing one store
and one broker, the environment variables the gateway really reads). The repository holds three
distributions, ``agui-gateway`` (``pyproject.toml``: ``gateway``), ``agui-codecs``
(``codecs/pyproject.toml``: ``agui_codecs``) and ``agui-conformance``
(``conformance/pyproject.toml``: ``conformance``); the wheel test builds all three from exactly what the
Dockerfile copies, with no network (``--no-build-isolation --no-index``), and checks that they
hold every package file (migrations, schemas, default routes). It needs the build backend of
``[build-system] requires`` in the test environment: it skips locally when that is missing and
fails under ``CI=true``.
"""

from __future__ import annotations

import fnmatch
import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from corpus import require_service
from deployment import (
    Instruction,
    build_stage,
    context_files,
    copied_sources,
    dockerignored,
    env_of,
    global_args,
    ignore_patterns,
    parse_dockerfile,
)
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
PYPROJECT = ROOT / "pyproject.toml"
CODECS = "codecs"
"""Folder of the ``agui-codecs`` distribution (its own ``pyproject.toml``)."""
KIT = "conformance"
"""Folder of the ``agui-conformance`` distribution (its own ``pyproject.toml``)."""
DISTRIBUTIONS = {"agui-gateway": ".", "agui-codecs": CODECS, "agui-conformance": KIT}
"""Distribution name -> its folder in the repository (the build context)."""
IO_LIBRARIES = frozenset(
    {"httpx", "starlette", "uvicorn", "sqlalchemy", "redis", "asyncpg", "aiosqlite", "alembic"}
)

GATEWAY_SERVICES = ("gateway-a", "gateway-b")
PENDING_SETTINGS = frozenset({"GATEWAY_DATABASE_URL", "GATEWAY_REDIS_URL"})
"""Variables the durable-runs wiring (issue 3) adds to ``gateway.config.Settings``; accepted
before they appear there, checked like the others once they do."""


def _skip_or_fail(reason: str) -> None:
    """Skip locally; fail under ``CI=true`` (where everything these tests need is installed)."""
    require_service(False, reason)


# -- Dockerfile ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stages() -> list[list[Instruction]]:
    return parse_dockerfile(DOCKERFILE.read_text(encoding="utf-8"))


def test_final_stage_is_slim_python_311_or_newer(stages: list[list[Instruction]]) -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    args = global_args(text)
    for stage in stages:
        image = stage[0].args.split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
        m = re.fullmatch(r"python:3\.(\d+)(?:\.\d+)?-slim(?:-\w+)?", image)
        assert m, f"stage base image {image!r} is not a python:3.X-slim image"
        assert int(m.group(1)) >= 11, f"{image}: the package needs Python >= 3.11"


def test_runs_as_non_root_user_before_cmd(stages: list[list[Instruction]]) -> None:
    final = stages[-1]
    keywords = [i.keyword for i in final]
    assert "USER" in keywords and "CMD" in keywords
    user_at = max(n for n, k in enumerate(keywords) if k == "USER")
    assert user_at < keywords.index("CMD"), "USER must come before CMD"
    user = final[user_at].args.split(":")[0].strip()
    assert user not in ("root", "0", ""), f"final USER is {user!r}"


def test_cmd_serves_on_all_interfaces_port_8000(stages: list[list[Instruction]]) -> None:
    final = stages[-1]
    cmds = [i for i in final if i.keyword == "CMD"]
    assert len(cmds) == 1
    assert cmds[0].exec_form() == ["agui-gateway", "serve", "--host", "0.0.0.0", "--port", "8000"]
    assert not any(i.keyword == "ENTRYPOINT" for i in final)
    exposed = [p for i in final if i.keyword == "EXPOSE" for p in i.args.split()]
    assert "8000" in exposed or "8000/tcp" in exposed


def test_healthcheck_hits_healthz_with_python(stages: list[list[Instruction]]) -> None:
    checks = [i for i in stages[-1] if i.keyword == "HEALTHCHECK"]
    assert len(checks) == 1
    check = checks[0]
    kind, _, rest = check.args.partition(" ")
    command = Instruction("CMD", (), rest).exec_form()
    assert kind == "CMD" and command is not None, "use the exec form: CMD [...]"
    assert command[0].startswith("python"), "slim images have no curl or wget"
    script = command[-1]
    assert "http://127.0.0.1:8000/healthz" in script
    compile(script, "<healthcheck>", "exec")  # valid Python
    flags = dict(f.lstrip("-").split("=", 1) for f in check.flags)
    assert {"interval", "timeout"} <= set(flags)


def _pyproject(folder: str) -> dict[str, Any]:
    return tomllib.loads((ROOT / folder / "pyproject.toml").read_text(encoding="utf-8"))


def _pip_install_targets(stages: list[list[Instruction]]) -> list[str]:
    """The paths the build stage's ``pip install`` commands install, in order (flags left out)."""
    targets: list[str] = []
    for ins in build_stage(stages):
        if ins.keyword != "RUN":
            continue
        for match in re.finditer(r"\bpip install ([^&;|]*)", ins.args):
            targets += [w for w in shlex.split(match.group(1)) if not w.startswith("-")]
    return targets


def test_installs_every_distribution_non_editable_codecs_and_kit_first(
    stages: list[list[Instruction]],
) -> None:
    runs = " && ".join(i.args for i in build_stage(stages) if i.keyword == "RUN")
    assert not re.search(r"pip install[^&;]*(?:\s-e\s|--editable)", runs)
    assert "requirements" not in runs, "install the packages themselves, from pyproject.toml"
    targets = [t.rstrip("/").removeprefix("./") or "." for t in _pip_install_targets(stages)]
    assert {CODECS, KIT, "."} <= set(targets), (
        f"expected `pip install ./codecs ./conformance .`: {targets}"
    )
    # the gateway pins agui-codecs and agui-conformance ==0.1.0, which no index has: they come first
    assert targets.index(CODECS) < targets.index("."), targets
    assert targets.index(KIT) < targets.index("."), targets


def _top_folders(folder: str) -> set[str]:
    """Top-level package folders of a distribution (its ``packages.find`` ``include``)."""
    find = _pyproject(folder)["tool"]["setuptools"]["packages"]["find"]
    tops = {pattern.split(".")[0] for pattern in find["include"]}
    return {str(Path(folder) / top) if folder != "." else top for top in tops}


def test_copies_everything_the_packages_are_built_from(stages: list[list[Instruction]]) -> None:
    copied = set(copied_sources(stages))
    for folder in DISTRIBUTIONS.values():
        project = _pyproject(folder)
        own = {
            str(Path(folder) / name) if folder != "." else name
            for name in ("pyproject.toml", project["project"]["readme"])
        }
        needed = _top_folders(folder) | own
        # a copied folder brings everything under it (COPY codecs ./codecs)
        absent = {n for n in needed if not any(n == c or n.startswith(c + "/") for c in copied)}
        assert not absent, f"the build stage does not copy {sorted(absent)}"


@pytest.mark.parametrize("requirer", [".", KIT])
def test_the_codecs_of_this_repository_are_pinned(requirer: str) -> None:
    codecs = _pyproject(CODECS)["project"]
    requirements = [Requirement(r) for r in _pyproject(requirer)["project"]["dependencies"]]
    (pin,) = [r for r in requirements if r.name == codecs["name"]]
    assert str(pin.specifier) == f"=={codecs['version']}"


def test_gateway_requires_the_kit_of_this_repository() -> None:
    kit = _pyproject(KIT)["project"]
    requirements = [Requirement(r) for r in _pyproject(".")["project"]["dependencies"]]
    (pin,) = [r for r in requirements if r.name == kit["name"]]
    assert str(pin.specifier) == f"=={kit['version']}"


def test_kit_installs_without_io_libraries_or_the_gateway() -> None:
    project = _pyproject(KIT)["project"]
    names = {Requirement(r).name.lower() for r in project["dependencies"]}
    assert not names & (IO_LIBRARIES | {"agui-gateway"}), names
    assert project["scripts"] == {"agui-conformance": "conformance.cli:main"}


def test_codecs_install_alone_without_io_libraries() -> None:
    """``agui-codecs`` is sans-I/O (issue 10): none of its dependencies is an I/O library."""
    project = _pyproject(CODECS)["project"]
    names = {Requirement(r).name.lower() for r in project["dependencies"]}
    assert not names & IO_LIBRARIES, f"agui-codecs depends on I/O libraries: {names & IO_LIBRARIES}"
    assert project.get("optional-dependencies", {}) == {}


def test_environment_defaults(stages: list[list[Instruction]]) -> None:
    env = env_of(stages[-1])
    assert env.get("PYTHONUNBUFFERED") == "1"
    url = env.get("GATEWAY_DATABASE_URL", "")
    assert url.startswith("sqlite+aiosqlite:////"), "SQLite default needs an absolute path"
    data_dir = str(Path(url.removeprefix("sqlite+aiosqlite:///")).parent)
    volumes = [i.args for i in stages[-1] if i.keyword == "VOLUME"]
    assert any(data_dir in v for v in volumes), f"{data_dir} should be a VOLUME"


# -- .dockerignore --------------------------------------------------------------------------------


def test_dockerignore_matcher() -> None:
    pats = [".venv", "**/node_modules", "**/*.py[cod]", "*.db", "data"]
    assert dockerignored(".venv/bin/python", pats)
    assert dockerignored("tests/harness/node_modules/ai/index.js", pats)
    assert dockerignored("gateway/__pycache__/app.cpython-311.pyc", pats)
    assert dockerignored("runs.db", pats) and not dockerignored("gateway/runs.db", pats)
    assert not dockerignored("gateway/app.py", pats)
    assert not dockerignored("gateway/data.py", pats)
    assert not dockerignored("x", [*pats, "x", "!x"])


def test_dockerignore_excludes_environments_vcs_and_caches() -> None:
    patterns = ignore_patterns()
    for path in (
        ".git/HEAD",
        ".venv/bin/python",
        "node_modules/x/index.js",
        "tests/harness/node_modules/ai/package.json",
        "tests/ui_harness/node_modules/x/index.js",
        "gateway/__pycache__/app.cpython-311.pyc",
        ".mypy_cache/3.11/x.json",
        ".pytest_cache/v/cache/lastfailed",
        ".ruff_cache/CACHEDIR.TAG",
        ".hypothesis/examples/x",
        "agui_gateway.egg-info/PKG-INFO",
        "codecs/agui_codecs.egg-info/PKG-INFO",
        "conformance/agui_conformance.egg-info/PKG-INFO",
        "agui-gateway.db",
    ):
        assert dockerignored(path, patterns), f".dockerignore lets {path} into the build context"


def test_dockerignore_keeps_everything_the_image_copies(stages: list[list[Instruction]]) -> None:
    patterns = ignore_patterns()
    sources = copied_sources(stages)
    files = context_files(sources)
    assert any(f.endswith("versions/0001_initial.py") for f in files)
    dropped = [f for f in files if dockerignored(f, patterns)]
    assert not dropped, f".dockerignore drops files the build needs: {dropped[:10]}"


# -- compose.yaml -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    try:
        import yaml  # type: ignore[import-untyped, unused-ignore]
    except ImportError:  # a transitive dev dependency today (pyyaml)
        _skip_or_fail("pyyaml is not installed: cannot parse compose.yaml")
    doc = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


_INTERPOLATION = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")


def interpolate(value: str, env: dict[str, str] | None = None) -> str:
    """Compose variable interpolation with defaults (``${VAR:-default}``), for checking."""
    env = env or {}
    return _INTERPOLATION.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), value)


def _environment(service: dict[str, Any]) -> dict[str, str | None]:
    env = service.get("environment", {})
    if isinstance(env, list):
        pairs = (item.partition("=") for item in env)
        return {k: (v if sep else None) for k, sep, v in pairs}
    return {k: (None if v is None else str(v)) for k, v in env.items()}


def _healthcheck_command(service: dict[str, Any]) -> list[str]:
    test = service.get("healthcheck", {}).get("test")
    assert test, "no healthcheck"
    return test if isinstance(test, list) else ["CMD-SHELL", test]


def test_gateway_replicas_check_readiness(compose: dict[str, Any]) -> None:
    # /readyz answers 503 when the store, the broker or the migrations fail (gateway.readiness)
    for name in GATEWAY_SERVICES:
        command = _healthcheck_command(compose["services"][name])
        assert command[0] == "CMD" and command[1].startswith("python"), "slim images have no curl"
        assert "http://127.0.0.1:8000/readyz" in command[-1]
        compile(command[-1], "<healthcheck>", "exec")


def test_two_gateway_replicas_share_store_and_broker(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(GATEWAY_SERVICES) <= set(services)
    envs = [_environment(services[name]) for name in GATEWAY_SERVICES]
    for key in ("GATEWAY_DATABASE_URL", "GATEWAY_REDIS_URL", "GATEWAY_CONFIG"):
        values = {env.get(key) for env in envs}
        assert len(values) == 1 and None not in values, f"{key} differs or is missing: {values}"
    db = urlsplit(interpolate(envs[0]["GATEWAY_DATABASE_URL"] or ""))
    assert db.scheme == "postgresql+asyncpg" and db.hostname == "postgres"
    redis = urlsplit(envs[0]["GATEWAY_REDIS_URL"] or "")
    assert redis.scheme == "redis" and redis.hostname == "redis"

    pg_env = _environment(services["postgres"])
    assert db.username == pg_env["POSTGRES_USER"]
    assert db.password == interpolate(pg_env["POSTGRES_PASSWORD"] or "")
    assert db.path.lstrip("/") == pg_env["POSTGRES_DB"]
    assert (db.port or 5432) == 5432 and (redis.port or 6379) == 6379


def test_gateways_build_this_repo_and_publish_distinct_ports(compose: dict[str, Any]) -> None:
    host_ports = []
    for name in GATEWAY_SERVICES:
        service = compose["services"][name]
        build = service.get("build")
        context = build if isinstance(build, str) else (build or {}).get("context")
        assert context in (".", "./"), f"{name} must build the repository's Dockerfile"
        assert service.get("restart") in ("always", "unless-stopped", "on-failure")
        (mapping,) = service["ports"]
        host, _, container = str(mapping).rpartition(":")
        assert container == "8000", f"{name}: the image serves on 8000"
        host_ports.append(host.rpartition(":")[2])
    assert len(set(host_ports)) == len(host_ports), f"host ports collide: {host_ports}"


def test_gateways_wait_for_healthy_postgres_and_redis(compose: dict[str, Any]) -> None:
    for name in GATEWAY_SERVICES:
        depends = compose["services"][name]["depends_on"]
        for dep in ("postgres", "redis"):
            assert depends[dep]["condition"] == "service_healthy", f"{name} -> {dep}"


def test_postgres_16_and_redis_7_with_healthchecks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert re.fullmatch(r"postgres:16(?:[.-].*)?", services["postgres"]["image"])
    assert re.fullmatch(r"redis:7(?:[.-].*)?", services["redis"]["image"])
    pg_check = " ".join(_healthcheck_command(services["postgres"]))
    assert "pg_isready" in pg_check
    redis_check = " ".join(_healthcheck_command(services["redis"]))
    assert "redis-cli" in redis_check and "ping" in redis_check
    for name in ("postgres", "redis"):
        assert services[name].get("restart"), f"{name} needs a restart policy"


def test_routes_file_is_mounted_and_loads(compose: dict[str, Any]) -> None:
    from gateway.config import load_routes

    for name in GATEWAY_SERVICES:
        service = compose["services"][name]
        target = _environment(service)["GATEWAY_CONFIG"]
        mounts = [v for v in service["volumes"] if isinstance(v, dict) and v["target"] == target]
        assert len(mounts) == 1, f"{name}: GATEWAY_CONFIG={target} is not a mounted file"
        mount = mounts[0]
        assert mount["type"] == "bind" and mount.get("read_only") is True
        source = ROOT / interpolate(mount["source"])
        assert source.is_file(), f"default routes file {source} is missing"
        assert "demo" in load_routes(source), "the default mount should be the demo route"


def _settings_env_names() -> set[str]:
    """Environment variable names ``gateway.config.Settings`` reads (prefix + field/alias)."""
    from gateway.config import Settings

    prefix = str(Settings.model_config.get("env_prefix", "")).upper()
    names: set[str] = set()
    for field_name, field in Settings.model_fields.items():
        names.add(prefix + field_name.upper())
        for alias in (field.alias, field.validation_alias):
            if isinstance(alias, str):
                names.add(alias.upper())
    return names


def test_gateway_variables_are_ones_the_settings_read(
    compose: dict[str, Any], stages: list[list[Instruction]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from gateway.config import Settings

    known = _settings_env_names() | PENDING_SETTINGS
    sources: dict[str, dict[str, str]] = {"Dockerfile": {}}
    for key, value in env_of(stages[-1]).items():
        if key.startswith("GATEWAY_"):
            sources["Dockerfile"][key] = value
    for name in GATEWAY_SERVICES:
        env = _environment(compose["services"][name])
        sources[name] = {
            k: interpolate(v or "") for k, v in env.items() if k.startswith("GATEWAY_")
        }
    for where, used in sources.items():
        unknown = sorted(set(used) - known)
        assert not unknown, f"{where}: the gateway reads no such setting: {unknown}"
        with monkeypatch.context() as patch:
            for key in list(os.environ):
                if key.startswith("GATEWAY_"):
                    patch.delenv(key)
            for key, value in used.items():
                patch.setenv(key, value)
            Settings()  # the values validate (URL schemes, a path for GATEWAY_CONFIG, ...)


def test_compose_interpolation_helper() -> None:
    assert interpolate("a${X:-b}c") == "abc"
    assert interpolate("a${X:-b}c", {"X": "y"}) == "ayc"
    assert interpolate("${X}") == ""


# -- the wheel -----------------------------------------------------------------------------------


def _build_requirements_missing() -> list[str]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    missing = []
    for spec in project["build-system"]["requires"]:
        req = Requirement(spec)
        try:
            version = importlib.metadata.version(req.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(f"{spec} (not installed)")
            continue
        if not req.specifier.contains(version, prereleases=True):
            missing.append(f"{spec} (installed {version})")
    return missing


def _build_wheel(src: Path, out: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--quiet",
            "--wheel-dir",
            str(out),
            str(src),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert proc.returncode == 0, f"pip wheel {src} failed:\n{proc.stdout}\n{proc.stderr}"


def _wheel_names(out: Path, distribution: str) -> tuple[set[str], str, str]:
    """(file names, entry_points.txt, METADATA) of the wheel of ``distribution`` in ``out``."""
    (wheel,) = out.glob(f"{distribution.replace('-', '_')}-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        entry_points = f"{info}/entry_points.txt"
        scripts = zf.read(entry_points).decode() if entry_points in names else ""
        return names, scripts, zf.read(f"{info}/METADATA").decode()


def test_wheels_hold_every_package_file(stages: list[list[Instruction]], tmp_path: Path) -> None:
    missing = _build_requirements_missing()
    if missing:
        _skip_or_fail(
            "cannot build the wheel without network: the build backend is not in this "
            f"environment ({', '.join(missing)}); add [build-system] requires to the dev extras"
        )
    # The wheels are built from what the Docker build copies, as .dockerignore filters it.
    src = tmp_path / "src"
    patterns = ignore_patterns()
    files = [f for f in context_files(copied_sources(stages)) if not dockerignored(f, patterns)]
    for rel in files:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    out = tmp_path / "dist"
    for folder in DISTRIBUTIONS.values():
        _build_wheel(src / folder, out)
    names, scripts, metadata = _wheel_names(out, "agui-gateway")
    codec_names, _, codec_metadata = _wheel_names(out, "agui-codecs")
    kit_names, kit_scripts, kit_metadata = _wheel_names(out, "agui-conformance")
    wheels = {"agui-gateway": names, "agui-codecs": codec_names, "agui-conformance": kit_names}

    for expected in (
        "gateway/migrations/versions/0001_initial.py",
        "gateway/migrations/script.py.mako",
        "gateway/migrations/env.py",
        "gateway/default_routes.toml",
        "gateway/store/__init__.py",
        "gateway/broker/__init__.py",
        "gateway/runs/__init__.py",
    ):
        assert expected in names, f"{expected} is missing from the agui-gateway wheel"
    for expected in (
        "agui_codecs/py.typed",
        "agui_codecs/ui/ui_hints.v1.schema.json",
        "agui_codecs/ui/schemas/v0_9/server_to_client.json",
        "agui_codecs/ui/schemas/v0_9/common_types.json",
        "agui_codecs/ui/schemas/v0_9/catalogs/basic/catalog.json",
    ):
        assert expected in codec_names, f"{expected} is missing from the agui-codecs wheel"
    assert any(fnmatch.fnmatch(n, "conformance/data/*.json") for n in kit_names)
    assert "agui-gateway = gateway.cli:main" in scripts
    assert "agui-conformance = conformance.cli:main" in kit_scripts
    assert "agui-conformance" not in scripts, "one distribution owns the kit's command"
    assert "Requires-Dist: agui-codecs==0.1.0" in metadata.splitlines()
    assert "Requires-Dist: agui-conformance==0.1.0" in metadata.splitlines()
    assert "Requires-Dist: agui-codecs==0.1.0" in kit_metadata.splitlines()
    # each package ships in exactly one wheel
    owners = {
        "agui-gateway": "gateway/",
        "agui-codecs": "agui_codecs/",
        "agui-conformance": "conformance/",
    }
    for dist, wheel_names in wheels.items():
        foreign = [n for n in wheel_names if not n.startswith((owners[dist], ".dist-info"))]
        foreign = [n for n in foreign if ".dist-info/" not in n]
        assert not foreign, f"{dist} ships files of another package: {foreign[:5]}"
    for metadata_text in (codec_metadata, kit_metadata):
        requires = [
            ln.split(":", 1)[1].strip()
            for ln in metadata_text.splitlines()
            if ln.startswith("Requires-Dist:")
        ]
        assert not {Requirement(r).name.lower() for r in requires} & IO_LIBRARIES

    # Every file of the package folders ships (a new data file needs a package-data entry).
    shipped: dict[str, list[str]] = {dist: [] for dist in DISTRIBUTIONS}
    nested = {folder: dist for dist, folder in DISTRIBUTIONS.items() if folder != "."}
    for rel in files:
        top, _, inner = rel.partition("/")
        if top in nested:
            if "/" in inner:  # inside the package (not its pyproject.toml or README.md)
                shipped[nested[top]].append(inner)
        elif inner:  # a file inside a package folder (not pyproject.toml / README.md)
            shipped["agui-gateway"].append(rel)
    absent = sorted(
        f"{dist}: {rel}" for dist, rels in shipped.items() for rel in set(rels) - wheels[dist]
    )
    assert not absent, f"package files missing from the wheels: {absent}"
