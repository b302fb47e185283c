"""controller-gen judges pyop's CRD generator: the same API types, in Go and in Python, give the same CRDs.

Each entry of `controllergen/` holds Go API types (`go/`, a package of a Go module requiring k8s.io/api
at the pinned release) and their pyop translation (`py/<version>/*.py`), with `entry.json` naming the
domain, group and kinds. The real controller-gen (`make oracles`; `pyscaffold_op.dev.controllergen`
caches its output by content hash) writes the Go side's CRDs, pyop's `make manifests` the Python side's,
and the two are compared node by node (every leaf of the YAML tree, by path). A difference fails the
test unless `DELIBERATE` names it, each with its reason (docs/markers.md, "What differs from
controller-gen").
"""

from __future__ import annotations

import json
import re
import shutil
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyscaffold_op.dev.controllergen import run_controller_gen
from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.gen import generate_manifests

from .conftest import ProjectBuilder

CORPUS = Path(__file__).parent / "controllergen"
ENTRIES = sorted(p.name for p in CORPUS.iterdir() if (p / "entry.json").is_file())

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed (controller-gen needs it)"),
]

# path pattern -> why pyop writes it differently, on purpose (docs/markers.md)
DELIBERATE: dict[str, str] = {
    r"^metadata\.annotations\.controller-gen\.kubebuilder\.io/version$": (
        "controller-gen stamps its version; pyop stamps its own (pyop.io/version)"
    ),
    r"^metadata\.annotations\.pyop\.io/version$": "pyop's version stamp, in place of controller-gen's",
}


def flatten(node: Any, path: str = "", out: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every leaf of a YAML tree by path (`spec.versions[0].schema...`); a list of scalars is one leaf,
    an empty dict or list too."""
    out = {} if out is None else out
    if isinstance(node, dict) and node:
        for key, value in node.items():
            flatten(value, f"{path}.{key}" if path else str(key), out)
    elif isinstance(node, list) and node and any(isinstance(v, (dict, list)) for v in node):
        for i, value in enumerate(node):
            flatten(value, f"{path}[{i}]", out)
    else:
        out[path] = node
    return out


def compare(theirs: dict[str, Any], ours: dict[str, Any]) -> tuple[int, list[str], list[str]]:
    """(nodes compared, differences not allowed, differences allowed by DELIBERATE). Descriptions
    inside embedded built-in types count like any other node: pyop writes controller-gen's
    (`gen/_builtin_descriptions.json.xz`)."""
    real, mine = flatten(theirs), flatten(ours)
    paths = sorted(set(real) | set(mine))
    wrong: list[str] = []
    allowed: list[str] = []
    missing = object()
    for path in paths:
        a, b = real.get(path, missing), mine.get(path, missing)
        if a == b:
            continue
        line = (
            f"{path}: controller-gen {'<none>' if a is missing else json.dumps(a)[:120]}"
            f" / pyop {'<none>' if b is missing else json.dumps(b)[:120]}"
        )
        deliberate = any(re.search(p, path) for p in DELIBERATE)
        (allowed if deliberate else wrong).append(line)
    return len(paths), wrong, allowed


def go_files(entry: Path) -> dict[str, str]:
    root = entry / "go"
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*.go"))}


def pyop_crds(entry: Path, tmp_path: Path) -> dict[str, dict[str, Any]]:
    meta = json.loads((entry / "entry.json").read_text())
    builder = ProjectBuilder(tmp_path / entry.name, name=entry.name, domain=meta["domain"])
    for version, kind in meta["kinds"]:
        builder.resources.append((meta["group"], version, kind))
    builder.write_project()
    for source in sorted((entry / "py").rglob("*.py")):
        version = source.parent.name
        folder = builder.root / "src" / builder.package / "api" / version
        folder.mkdir(parents=True, exist_ok=True)
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text(f'GROUP = "{meta["group"]}.{meta["domain"]}"\nVERSION = "{version}"\n')
        (folder / source.name).write_text(textwrap.dedent(source.read_text()))
    generate_manifests(builder.root)
    bases = builder.root / "config" / "crd" / "bases"
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted(bases.glob("*.yaml"))}


@pytest.fixture(scope="module")
def controller_gen() -> Path:
    path = oracle_bin("controller-gen")
    if path is None:
        pytest.skip(missing_reason("controller-gen"))
    return path


@pytest.mark.parametrize("name", ENTRIES)
def test_crds_equal_controller_gens(name: str, controller_gen: Path, tmp_path: Path) -> None:
    entry = CORPUS / name
    theirs = run_controller_gen(go_files(entry), controller_gen)
    ours = pyop_crds(entry, tmp_path)
    assert sorted(ours) == sorted(theirs), "pyop and controller-gen write different CRD files"
    total, wrong, allowed = 0, [], []
    for file in sorted(theirs):
        nodes, bad, ok = compare(theirs[file], ours[file])
        total += nodes
        wrong += [f"{file}: {line}" for line in bad]
        allowed += [f"{file}: {line}" for line in ok]
    print(
        f"\n{name}: {total} nodes compared, {len(wrong) + len(allowed)} differences "
        f"({len(allowed)} deliberate)"
    )
    for line in allowed:
        print("  deliberate:", line)
    assert not wrong, f"{len(wrong)} differences from controller-gen:\n" + "\n".join(wrong[:60])


def test_builtin_overlay_is_what_controller_gen_writes(controller_gen: Path) -> None:
    """`gen/_builtin_overlay.json` and `gen/_builtin_descriptions.json.xz` are current: rebuilt from
    controller-gen over k8s.io/api, they are the same (`python -m pyscaffold_op.dev.builtin_overlay`
    rewrites them)."""
    from pyscaffold_op.dev import builtin_overlay

    overlay, walker, roots = builtin_overlay.build(controller_gen)
    assert not walker.conflicts and not walker.structural
    checked_in = json.loads(builtin_overlay.OUT.read_text())
    print(
        f"\nbuilt-in overlay: {roots} root types, {sum(len(p) for p in overlay['patches'].values())} patches"
    )
    assert overlay == checked_in, "run python -m pyscaffold_op.dev.builtin_overlay"
    described = builtin_overlay.read_descriptions(builtin_overlay.descriptions_file(walker))
    assert builtin_overlay.read_descriptions(builtin_overlay.DESCRIPTIONS.read_bytes()) == described, (
        "run python -m pyscaffold_op.dev.builtin_overlay"
    )
