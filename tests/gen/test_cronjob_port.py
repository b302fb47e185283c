"""controller-gen judges `make manifests` of `testdata/cronjob/`: the real controller-gen over
kubebuilder's Go original of the (multiversion) CronJob tutorial (`tests/gen/kubebuilder_cronjob/`), run as
the Go project's `make manifests` runs it, against pyop's `make manifests` over the Python port, compared
node by node (`tests/gen/test_controllergen.py`'s machinery): the CRD (after the kustomize patch that
adds the conversion webhook on the Go side), the ClusterRole and the webhook configurations.

Twice: with every description (`crd`, the strictest comparison: 6,900 nodes), and as the tutorial's
Makefile runs it, `crd:maxDescLen=0` against `pyop generate manifests --max-desc-len 0`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any, cast

import pytest
import yaml

from pyscaffold_op.dev.controllergen import run_controller_gen_generators
from pyscaffold_op.dev.golden_cronjob import CRONJOB_DIR
from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.gen import generate_manifests

from .test_controllergen import compare

GO_ORIGINAL = Path(__file__).parent / "kubebuilder_cronjob"
CRD = "batch.tutorial.kubebuilder.io_cronjobs.yaml"
# controller-gen's file -> pyop's `make manifests` file
OUTPUTS = {
    CRD: f"config/crd/bases/{CRD}",
    "role.yaml": "config/rbac/role.yaml",
    "manifests.yaml": "config/webhook/manifests.yaml",
}

pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed (controller-gen needs it)"),
]

# path pattern -> why the port's manifests differ from the Go original's, on purpose
DELIBERATE: dict[str, str] = {
    r"\.metadata\.annotations\.controller-gen\.kubebuilder\.io/version$": (
        "controller-gen stamps its version; pyop stamps its own (pyop.io/version)"
    ),
    r"\.metadata\.annotations\.pyop\.io/version$": "pyop's version stamp, in place of controller-gen's",
    r"^\[0\]\.spec\.versions\[1\]\.schema\.openAPIV3Schema\.properties\.status\.properties\.active"
    r"\.description$": (
        "the Go original's v2 `Active` keeps the scaffold's placeholder comment (`INSERT ADDITIONAL "
        "STATUS FIELD - define observed state of cluster ...`) as its doc; the port describes the field"
    ),
}


def go_files() -> dict[str, str]:
    return {
        p.relative_to(GO_ORIGINAL).as_posix(): p.read_text()
        for p in sorted(GO_ORIGINAL.rglob("*"))
        if p.is_file() and (p.suffix == ".go" or p.name in {"go.mod", "go.sum"})
    }


def merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    """A strategic-merge patch made only of maps, as kustomize applies webhook_in_cronjobs.yaml."""
    out = dict(base)
    for key, value in patch.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge(out[key], value) if nested else value
    return out


@pytest.fixture(scope="module")
def controller_gen() -> Path:
    path = oracle_bin("controller-gen")
    if path is None:
        pytest.skip(missing_reason("controller-gen"))
    return path


@pytest.mark.parametrize("max_desc_len", [None, 0], ids=["descriptions", "maxDescLen=0"])
def test_make_manifests_equals_controller_gens_on_the_go_original(
    max_desc_len: int | None, controller_gen: Path, tmp_path: Path
) -> None:
    crd_generator = "crd" if max_desc_len is None else f"crd:maxDescLen={max_desc_len}"
    theirs = run_controller_gen_generators(
        go_files(), controller_gen, ("rbac:roleName=manager-role", crd_generator, "webhook")
    )
    assert sorted(theirs) == sorted(OUTPUTS), "controller-gen wrote other files than make manifests does"
    patch = yaml.safe_load((GO_ORIGINAL / "config/crd/patches/webhook_in_cronjobs.yaml").read_text())
    theirs[CRD] = [merge(theirs[CRD][0], patch)]

    port = tmp_path / "cronjob"
    shutil.copytree(CRONJOB_DIR, port, ignore=shutil.ignore_patterns("wheels", "__pycache__", ".*_cache"))
    generate_manifests(port, max_desc_len=max_desc_len)
    total, wrong, allowed = 0, list[str](), list[str]()
    for name, relative in OUTPUTS.items():
        ours = [doc for doc in yaml.safe_load_all((port / relative).read_text()) if doc is not None]
        nodes, differences, _ = compare(cast(Any, theirs[name]), cast(Any, ours))  # lists of documents
        total += nodes
        for line in differences:
            path = line.split(": controller-gen ", 1)[0]
            deliberate = any(re.search(p, path) for p in DELIBERATE)
            (allowed if deliberate else wrong).append(f"{name}: {line}")
    print(f"\ncronjob ({crd_generator}): {total} nodes compared, {len(wrong) + len(allowed)} differences")
    for line in allowed:
        print("  deliberate:", line)
    assert not wrong, f"{len(wrong)} differences from controller-gen:\n" + "\n".join(wrong[:60])
