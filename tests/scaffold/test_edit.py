"""`pyop edit`: init settings changed afterwards, merged as `pyop upgrade` merges a template change."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyscaffold_op.project import load_project
from tests.scaffold.conftest import AT_INIT, PACKAGE, RunPyop, assert_one_line_error, snapshot

FRIGATE = ["--group", "ship", "--version", "v1", "--kind", "Frigate"]
API = ["create", "api", "--no-make", *FRIGATE]
EDIT = ["edit", "--no-make"]


def _run(pyop: RunPyop, root: Path, *args: str) -> None:
    run = pyop(*args, cwd=root)
    assert run.code == 0, (args, run.out, run.err)


def _project(pyop: RunPyop, root: Path, *init_flags: str) -> Path:
    root.mkdir()
    _run(pyop, root, *AT_INIT, *init_flags)
    _run(pyop, root, *API)
    return root


@pytest.mark.parametrize("flag", ["--namespaced", "--multigroup", "--license=none", "--owner=Someone Else"])
def test_edit_gives_what_init_with_the_setting_gives(pyop: RunPyop, tmp_path: Path, flag: str) -> None:
    edited = _project(pyop, tmp_path / "edited")
    _run(pyop, edited, *EDIT, flag)
    made = _project(pyop, tmp_path / "made", flag)
    if flag == "--multigroup":  # the API made before stays in api/v1/ (like kubebuilder)
        assert load_project(edited).multigroup
        assert (edited / "src" / PACKAGE / "api" / "v1" / "frigate_types.py").is_file()
        return
    assert snapshot(edited) == snapshot(made)


def test_namespaced_rewrites_the_rbac_markers_and_back(pyop: RunPyop, tmp_path: Path) -> None:
    root = _project(pyop, tmp_path / "p")
    before = snapshot(root)
    _run(pyop, root, *EDIT, "--namespaced=true")
    controller = (root / "src" / PACKAGE / "controllers" / "frigate_controller.py").read_text()
    assert controller.count(",namespace=programming-kubernetes-system") == 3
    assert "kind: Role\n" in (root / "config/rbac/role.yaml").read_text()
    assert "WATCH_NAMESPACE" in (root / "config/manager/manager.yaml").read_text()
    _run(pyop, root, *EDIT, "--namespaced=false")
    assert snapshot(root) == before


def test_license_change_keeps_delete_api_working(pyop: RunPyop, tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    _run(pyop, root, *AT_INIT)
    before = snapshot(root)
    _run(pyop, root, *API)
    _run(pyop, root, *EDIT, "--owner", "Me")
    types = (root / "src" / PACKAGE / "api" / "v1" / "frigate_types.py").read_text()
    assert types.startswith("# Copyright Me.\n")
    _run(pyop, root, "delete", "api", "--no-make", *FRIGATE)  # the record follows the new headers
    _run(pyop, root, *EDIT, "--owner", "The programming-kubernetes Authors")
    assert snapshot(root) == before


def test_multigroup_keeps_existing_apis_and_adds_new_groups(pyop: RunPyop, tmp_path: Path) -> None:
    root = _project(pyop, tmp_path / "p")
    run = pyop(*EDIT, "--multigroup", cwd=root)
    assert run.code == 0 and "existing APIs stay" in run.err
    _run(pyop, root, "create", "api", "--no-make", "--group", "infra", "--version", "v1", "--kind", "Cluster")
    project = load_project(root)
    frigate = project.find("ship", "v1", "Frigate")
    cluster = project.find("infra", "v1", "Cluster")
    assert frigate is not None and cluster is not None
    assert project.api_module(frigate) == f"{PACKAGE}.api.v1"
    assert project.api_module(cluster) == f"{PACKAGE}.api.infra.v1"
    assert_one_line_error(pyop(*EDIT, "--multigroup=false", cwd=root), "infra, ship")


def test_nothing_to_change(pyop: RunPyop, tmp_path: Path) -> None:
    root = _project(pyop, tmp_path / "p")
    before = snapshot(root)
    run = pyop(*EDIT, "--namespaced=false", cwd=root)
    assert run.code == 0 and "nothing to change" in run.out
    assert snapshot(root) == before


def test_a_conflict_is_refused_unless_forced(pyop: RunPyop, tmp_path: Path) -> None:
    root = _project(pyop, tmp_path / "p")
    binding = root / "config/rbac/role_binding.yaml"
    binding.write_text(
        binding.read_text().replace("kind: ClusterRoleBinding", "kind: ClusterRoleBinding # mine")
    )
    before = snapshot(root)
    assert_one_line_error(pyop(*EDIT, "--namespaced", cwd=root), "config/rbac/role_binding.yaml", "--force")
    assert snapshot(root) == before
    run = pyop(*EDIT, "--namespaced", "--force", cwd=root)
    assert run.code == 1 and "conflict in config/rbac/role_binding.yaml" in run.out
    assert "<<<<<<<" in binding.read_text()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [(["--license", "mit"], "invalid license 'mit'"), (["--owner", "a\nb"], "single line")],
)
def test_bad_values_change_nothing(pyop: RunPyop, tmp_path: Path, args: list[str], fragment: str) -> None:
    root = _project(pyop, tmp_path / "p")
    before = snapshot(root)
    assert_one_line_error(pyop(*EDIT, *args, cwd=root), fragment)
    assert snapshot(root) == before


def test_another_template_revision_asks_for_upgrade(pyop: RunPyop, tmp_path: Path) -> None:
    root = _project(pyop, tmp_path / "p")
    answers = root / ".copier-answers.yml"
    answers.write_text(answers.read_text().replace("_commit: sha256-", "_commit: sha256-0"))
    before = snapshot(root)
    assert_one_line_error(pyop(*EDIT, "--namespaced", cwd=root), "pyop upgrade")
    assert snapshot(root) == before
