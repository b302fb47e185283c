"""Run the real controller-gen over Go API types: the oracle of pyop's CRD generator.

`run_controller_gen({"api/v1/types.go": source, ...})` writes the files into a Go module requiring
k8s.io/api and k8s.io/apimachinery at the release pinned in `hack/oracles/versions.env`, runs
`go mod tidy` (through the module proxy) and `controller-gen crd paths=./...`, and returns the CRDs it
wrote, keyed by file name; `run_controller_gen_generators` runs any generators (a project's whole
`make manifests`: rbac, crd, webhook) and returns every file. The output is cached under a folder keyed
by the hash of the sources, the generators, the pins and the controller-gen binary, so a rerun costs a
file read.

Used by `pyscaffold_op.dev.builtin_overlay` (the overlay of built-in schemas) and by the corpus test
`tests/gen/controllergen/` and `tests/gen/test_cronjob_port.py`; a development-time tool, never
imported by the generator.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
VERSIONS = REPO_ROOT / "hack" / "oracles" / "versions.env"
CACHE_DIR = REPO_ROOT / "bin" / ".controller-gen-cache"


class ControllerGenError(RuntimeError):
    """go or controller-gen failed; the message carries their output."""


def pins() -> dict[str, str]:
    """The oracle versions of hack/oracles/versions.env."""
    out: dict[str, str] = {}
    for line in VERSIONS.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


def staging_version() -> str:
    """v1.37.2 -> v0.37.2: the k8s.io staging modules' release matching the pinned Kubernetes."""
    return "v0." + pins()["KUBERNETES_VERSION"].removeprefix("v1.")


def go_mod(module: str = "example.com/pyop-oracle") -> str:
    version = staging_version()
    return (
        f"module {module}\n\ngo 1.24\n\nrequire (\n"
        f"\tk8s.io/api {version}\n\tk8s.io/apimachinery {version}\n)\n"
    )


def run_controller_gen(
    files: dict[str, str], controller_gen: Path, *, cache_dir: Path | None = None, timeout: float = 900
) -> dict[str, dict[str, Any]]:
    """The CRDs controller-gen writes for the Go module made of `files` (relative path -> source; a
    go.mod is added unless given), keyed by the CRD's file name (`group_plural.yaml`)."""
    written = run_controller_gen_generators(
        files, controller_gen, ("crd",), cache_dir=cache_dir, timeout=timeout
    )
    return {name: docs[0] for name, docs in written.items()}


def run_controller_gen_generators(
    files: dict[str, str],
    controller_gen: Path,
    generators: tuple[str, ...],
    *,
    cache_dir: Path | None = None,
    timeout: float = 900,
) -> dict[str, list[dict[str, Any]]]:
    """Every file controller-gen writes with `generators` (its arguments before `paths=`, e.g.
    `("rbac:roleName=manager-role", "crd:maxDescLen=0", "webhook")`, a project's `make manifests`)
    over the Go module made of `files`, into one folder: file name -> its YAML documents (`role.yaml`,
    `manifests.yaml`, `group_plural.yaml`)."""
    go = shutil.which("go")
    if go is None:
        raise ControllerGenError("go is not installed")
    files = dict(files)
    files.setdefault("go.mod", go_mod())
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    digest.update("\0".join(generators).encode() + b"\0")
    digest.update(VERSIONS.read_bytes())
    stat = controller_gen.stat()
    digest.update(f"{stat.st_size}:{int(stat.st_mtime)}".encode())
    cache = (cache_dir or CACHE_DIR) / digest.hexdigest()[:24]
    result_file = cache / "written.json"
    if result_file.is_file():
        cached: dict[str, list[dict[str, Any]]] = json.loads(result_file.read_text(encoding="utf-8"))
        return cached
    with tempfile.TemporaryDirectory(prefix="pyop-controller-gen-") as tmp:
        root = Path(tmp)
        for name, text in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        env = {**os.environ, "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}
        steps = [
            [go, "mod", "tidy"],
            [str(controller_gen), *generators, "paths=./...", "output:dir=out"],
        ]
        for argv in steps:
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
            if done.returncode != 0:
                raise ControllerGenError(f"{' '.join(argv[:2])} failed:\n{done.stdout}{done.stderr}")
        written = {
            path.name: [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
            for path in sorted((root / "out").glob("*.yaml"))
        }
    cache.mkdir(parents=True, exist_ok=True)
    tmp_file = result_file.with_suffix(f".{os.getpid()}.tmp")
    tmp_file.write_text(json.dumps(written), encoding="utf-8")
    tmp_file.replace(result_file)
    return written
