"""`pyop delete api`: takes out exactly what `create api` added; refuses edited files without --force."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pyscaffold_op.scaffold.transaction import FilePlan, apply
from tests.scaffold.conftest import AT_INIT, PACKAGE, RunPyop, assert_one_line_error, snapshot

API = ["create", "api", "--no-make"]
DELETE = ["delete", "api", "--no-make"]
FRIGATE = ["--group", "ship", "--version", "v1", "--kind", "Frigate"]
CRUISER = ["--group", "ship", "--version", "v1", "--kind", "Cruiser"]
FRIGATE_V2 = ["--group", "ship", "--version", "v2", "--kind", "Frigate"]
DESTROYER = ["--group", "ship", "--version", "v2", "--kind", "Destroyer"]
DEPLOYMENT = ["--group", "apps", "--version", "v1", "--kind", "Deployment"]


def _run(pyop: RunPyop, root: Path, *args: str) -> None:
    run = pyop(*args, cwd=root)
    assert run.code == 0, (args, run.out, run.err)


@pytest.fixture
def project(pyop: RunPyop, tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    _run(pyop, root, *AT_INIT)
    return root


@pytest.mark.parametrize(
    "added",
    [
        [CRUISER],
        [DESTROYER],
        [[*FRIGATE_V2, "--controller=false"]],
        [[*DEPLOYMENT, "--resource=false"]],
        [CRUISER, DESTROYER],
        [DESTROYER, CRUISER],
    ],
    ids=["same-version", "new-version", "second-version-of-kind", "core-kind", "two", "two-reversed"],
)
@pytest.mark.parametrize("order", ["last-first", "first-first"])
def test_create_then_delete_leaves_the_tree_byte_identical(
    pyop: RunPyop, project: Path, added: list[list[str]], order: str
) -> None:
    _run(pyop, project, *API, *FRIGATE)
    before = snapshot(project)
    for args in added:
        _run(pyop, project, *API, *args)
    assert snapshot(project) != before
    targets = [[a for a in args if not a.startswith(("--resource", "--controller"))] for args in added]
    for args in reversed(targets) if order == "last-first" else targets:
        _run(pyop, project, *DELETE, *args)
    assert snapshot(project) == before


def test_deleting_the_only_api_gives_back_the_initialized_project(pyop: RunPyop, project: Path) -> None:
    before = snapshot(project)
    _run(pyop, project, *API, *FRIGATE)
    run = pyop(*DELETE, *FRIGATE, cwd=project)
    assert run.code == 0, run.err
    assert f"removed src/{PACKAGE}/api/v1/frigate_types.py" in run.out
    assert snapshot(project) == before
    assert not (project / "src" / PACKAGE / "api").exists()


def test_multigroup_round_trip(pyop: RunPyop, tmp_path: Path) -> None:
    root = tmp_path / "mg"
    root.mkdir()
    _run(pyop, root, *AT_INIT, "--multigroup")
    _run(pyop, root, *API, *FRIGATE)
    before = snapshot(root)
    _run(pyop, root, *API, "--group", "infra", "--version", "v1", "--kind", "Cluster")
    assert (root / "src" / PACKAGE / "controllers" / "infra").is_dir()
    _run(pyop, root, *DELETE, "--group", "infra", "--version", "v1", "--kind", "Cluster")
    assert snapshot(root) == before


def test_an_edited_file_is_refused_without_force(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *FRIGATE)
    before = snapshot(project)
    _run(pyop, project, *API, *CRUISER)
    controller = project / "src" / PACKAGE / "controllers" / "cruiser_controller.py"
    types = project / "src" / PACKAGE / "api" / "v1" / "cruiser_types.py"
    for path in (controller, types):
        path.write_text(path.read_text() + "# mine\n")
    edited = snapshot(project)
    run = pyop(*DELETE, *CRUISER, cwd=project)
    assert_one_line_error(run, f"src/{PACKAGE}/api/v1/cruiser_types.py", "cruiser_controller.py", "--force")
    assert snapshot(project) == edited
    _run(pyop, project, *DELETE, *CRUISER, "--force")
    assert snapshot(project) == before


def test_create_api_force_re_records_the_files(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *FRIGATE)
    before = snapshot(project)
    _run(pyop, project, *API, *CRUISER)
    types = project / "src" / PACKAGE / "api" / "v1" / "cruiser_types.py"
    types.write_text(types.read_text() + "# mine\n")
    _run(pyop, project, *API, *CRUISER, "--force")  # back to the scaffolded content
    _run(pyop, project, *DELETE, *CRUISER)
    assert snapshot(project) == before


def test_shared_lines_edited_by_the_user_stay(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *FRIGATE)
    main = project / "src" / PACKAGE / "__main__.py"
    main.write_text(main.read_text().replace("# +pyop:scaffold:imports", "# mine\n# +pyop:scaffold:imports"))
    _run(pyop, project, *DELETE, *FRIGATE)
    text = main.read_text()
    assert "# mine\n" in text and "FrigateReconciler" not in text


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (CRUISER, "is not in PROJECT"),
        (["--group", "ship", "--version", "v1alpha", "--kind", "Frigate"], "invalid version"),
        (["--group", "ship", "--version", "v1", "--kind", "frigate"], "invalid kind"),
    ],
)
def test_errors_change_nothing(pyop: RunPyop, project: Path, args: list[str], fragment: str) -> None:
    _run(pyop, project, *API, *FRIGATE)
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *args, cwd=project), fragment)
    assert snapshot(project) == before


def test_an_api_with_webhooks_is_refused(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *FRIGATE)
    _run(pyop, project, "create", "webhook", *FRIGATE, "--defaulting", "--no-make")
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=project), "has webhooks")
    assert snapshot(project) == before


def test_no_record_is_refused(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *FRIGATE)
    (project / ".pyop-apis.yml").unlink()
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=project), "no record")
    assert snapshot(project) == before


def test_outside_a_project(pyop: RunPyop, tmp_path: Path) -> None:
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=tmp_path), "no PROJECT")


def test_a_failed_removal_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("a")
    (tmp_path / "pkg" / "b.py").write_text("b")
    (tmp_path / "keep.txt").write_text("old")
    before = snapshot(tmp_path)
    plan = FilePlan(tmp_path)
    plan.write("keep.txt", "new")
    plan.remove("pkg/sub/a.py")
    plan.remove("pkg/b.py")
    real = os.replace
    calls = []

    def failing(src: object, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 4:  # keep.txt backed up and written, one removal done: the second fails
            raise OSError(28, "No space left on device")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        apply(plan)
    monkeypatch.setattr(os, "replace", real)
    assert snapshot(tmp_path) == before


def test_removals_take_emptied_folders(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub" / "__pycache__").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("a")
    (tmp_path / "pkg" / "sub" / "__pycache__" / "a.cpython-312.pyc").write_bytes(b"x")
    (tmp_path / "other").mkdir()
    plan = FilePlan(tmp_path)
    plan.remove("pkg/sub/a.py")
    apply(plan)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other"]


def test_read_current_sees_planned_removals(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("a")
    plan = FilePlan(tmp_path)
    plan.remove("a")
    assert plan.read_current("a") is None
    plan.write("a", "b")
    assert plan.read_current("a") == "b" and not plan.removals


def test_the_record_is_yaml_in_json_form_and_a_block_yaml_record_still_reads(
    pyop: RunPyop, project: Path
) -> None:
    import yaml

    from pyscaffold_op.scaffold.journal import load_record

    _run(pyop, project, *API, *FRIGATE)
    text = (project / ".pyop-apis.yml").read_text()
    record = load_record(text)
    assert [api.kind for api in record.apis] == ["Frigate"]
    as_yaml = yaml.safe_load(text)  # what a YAML tool reads: the same data
    assert as_yaml == record.model_dump(mode="json", exclude={"webhooks"})
    # a record written as block YAML (pyop before stop 21, or edited by hand) reads the same
    header = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
    (project / ".pyop-apis.yml").write_text(header + yaml.safe_dump(as_yaml, sort_keys=False))
    assert load_record((project / ".pyop-apis.yml").read_text()) == record
    _run(pyop, project, *DELETE, *FRIGATE)  # and delete api works from it
    assert not (project / f"src/{PACKAGE}/api/v1/frigate_types.py").exists()


def test_deleting_the_first_kind_of_a_version_keeps_what_the_other_kinds_import(
    pyop: RunPyop, project: Path
) -> None:
    """Found replaying kubebuilder's project-v4 (issue 27): `delete api` of the kind that created its
    version package removed `groupversion_info.py` while another kind of the version still imports it
    (`make manifests` then failed with ModuleNotFoundError). Deleting the other kind too gives back the
    initialized project."""
    before = snapshot(project)
    _run(pyop, project, *API, *FRIGATE)
    _run(pyop, project, *API, *CRUISER)
    _run(pyop, project, *DELETE, *FRIGATE)
    version = project / f"src/{PACKAGE}/api/v1"
    assert (version / "groupversion_info.py").is_file()
    assert "from programming_kubernetes.api.v1.cruiser_types import" in (version / "__init__.py").read_text()
    assert pyop("generate", "manifests", cwd=project).code == 0
    (project / "config/crd/bases/ship.viper.run_cruisers.yaml").unlink()
    _run(pyop, project, *DELETE, *CRUISER)
    after = snapshot(project)
    assert {k: v for k, v in after.items() if k != "config/rbac/role.yaml"} == {
        k: v for k, v in before.items() if k != "config/rbac/role.yaml"
    }
