"""`pyop delete webhook`: takes out exactly what `create webhook` added; then `delete api` works."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scaffold.conftest import AT_INIT, RunPyop, assert_one_line_error, snapshot

API = ["create", "api", "--no-make"]
HOOK = ["create", "webhook", "--no-make"]
DELETE = ["delete", "webhook", "--no-make"]
FRIGATE = ["--group", "ship", "--version", "v1", "--kind", "Frigate"]
FRIGATE_V2 = ["--group", "ship", "--version", "v2", "--kind", "Frigate"]
CRUISER = ["--group", "ship", "--version", "v1", "--kind", "Cruiser"]
DEF, VAL, CONV = "--defaulting", "--programmatic-validation", "--conversion"


def _run(pyop: RunPyop, root: Path, *args: str) -> None:
    run = pyop(*args, cwd=root)
    assert run.code == 0, (args, run.out, run.err)


@pytest.fixture
def project(pyop: RunPyop, tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    _run(pyop, root, *AT_INIT)
    _run(pyop, root, *API, *FRIGATE)
    _run(pyop, root, *API, *FRIGATE_V2, "--controller=false")
    return root


@pytest.mark.parametrize(
    ("created", "deleted"),
    [
        ([[DEF]], [[]]),
        ([[VAL]], [[VAL]]),
        ([[CONV, "--spoke", "v2"]], [[CONV]]),
        ([[DEF, VAL, CONV, "--spoke", "v2"]], [[]]),
        ([[DEF], [VAL, "--force"]], [[VAL], [DEF]]),
        ([[DEF], [VAL, "--force"]], [[DEF], [VAL]]),
        ([[DEF, VAL], [CONV, "--spoke", "v2"]], [[CONV], [DEF, VAL]]),
    ],
    ids=[
        "defaulting",
        "validation",
        "conversion",
        "all",
        "two-runs",
        "two-runs-first-first",
        "then-conversion",
    ],
)
def test_create_then_delete_leaves_the_tree_byte_identical(
    pyop: RunPyop, project: Path, created: list[list[str]], deleted: list[list[str]]
) -> None:
    before = snapshot(project)
    for flags in created:
        _run(pyop, project, *HOOK, *FRIGATE, *flags)
    assert snapshot(project) != before
    for flags in deleted:
        _run(pyop, project, *DELETE, *FRIGATE, *flags)
    assert snapshot(project) == before
    _run(pyop, project, "delete", "api", "--no-make", *FRIGATE_V2)
    _run(pyop, project, "delete", "api", "--no-make", *FRIGATE)


def test_partial_delete_equals_creating_the_rest(pyop: RunPyop, project: Path, tmp_path: Path) -> None:
    _run(pyop, project, *HOOK, *FRIGATE, VAL)
    only_validation = snapshot(project)
    _run(pyop, project, *DELETE, *FRIGATE)
    _run(pyop, project, *HOOK, *FRIGATE, DEF, VAL)
    _run(pyop, project, *DELETE, *FRIGATE, DEF)
    assert snapshot(project) == only_validation


def test_two_kinds_share_the_webhook_config_until_the_last_goes(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *API, *CRUISER)
    before = snapshot(project)
    _run(pyop, project, *HOOK, *FRIGATE, DEF)
    with_frigate = snapshot(project)
    _run(pyop, project, *HOOK, *CRUISER, DEF, VAL)
    _run(pyop, project, *DELETE, *CRUISER)
    assert snapshot(project) == with_frigate
    _run(pyop, project, *HOOK, *CRUISER, VAL)
    _run(pyop, project, *DELETE, *FRIGATE)
    assert (project / "config/webhook/service.yaml").is_file()
    _run(pyop, project, *DELETE, *CRUISER)
    assert snapshot(project) == before


def test_errors_change_nothing(pyop: RunPyop, project: Path) -> None:
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=project), "no webhooks")
    _run(pyop, project, *HOOK, *FRIGATE, DEF)
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, VAL, cwd=project), "no validation webhook")
    assert snapshot(project) == before
    assert_one_line_error(pyop("delete", "api", "--no-make", *FRIGATE, cwd=project), "delete webhook")
    assert snapshot(project) == before
    hook = next(project.glob("src/*/webhooks/v1/frigate_webhook.py"))
    hook.write_text(hook.read_text() + "# mine\n")
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=project), "edited since")
    assert snapshot(project) == before
    _run(pyop, project, *DELETE, *FRIGATE, "--force")
    assert not hook.exists()


def test_a_webhook_without_a_record_is_refused(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *HOOK, *FRIGATE, DEF)
    from pyscaffold_op.scaffold.journal import Record, load_record

    record = project / ".pyop-apis.yml"
    record.write_text(Record(apis=load_record(record.read_text()).apis).dump())  # the webhooks' record gone
    before = snapshot(project)
    assert_one_line_error(pyop(*DELETE, *FRIGATE, cwd=project), "no record")
    assert snapshot(project) == before


def test_edit_license_re_records_the_webhook_files(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *HOOK, *FRIGATE, DEF, VAL)
    _run(pyop, project, "edit", "--license", "none", "--no-make")
    hook = next(project.glob("src/*/webhooks/v1/frigate_webhook.py"))
    assert "Licensed" not in hook.read_text()
    _run(pyop, project, *DELETE, *FRIGATE)
    assert not hook.exists()
    _run(pyop, project, "delete", "api", "--no-make", *FRIGATE_V2)


def test_multigroup_round_trip(pyop: RunPyop, tmp_path: Path) -> None:
    root = tmp_path / "m"
    root.mkdir()
    _run(pyop, root, *AT_INIT)
    _run(pyop, root, "edit", "--multigroup", "--no-make")
    _run(pyop, root, *API, *FRIGATE)
    _run(pyop, root, *API, "--group", "sea", "--version", "v1", "--kind", "Buoy")
    before = snapshot(root)
    _run(pyop, root, *HOOK, *FRIGATE, DEF)
    _run(pyop, root, *HOOK, "--group", "sea", "--version", "v1", "--kind", "Buoy", VAL)
    _run(pyop, root, *DELETE, *FRIGATE)
    _run(pyop, root, *DELETE, "--group", "sea", "--version", "v1", "--kind", "Buoy")
    assert snapshot(root) == before


def test_a_second_webhook_type_needs_no_force_while_the_file_is_unedited(
    pyop: RunPyop, project: Path, tmp_path: Path
) -> None:
    """Like kubebuilder, adding --programmatic-validation after --defaulting is not an overwrite: the
    webhook file is rendered again for both types, as long as nobody edited it since."""
    twin = tmp_path / "twin"
    twin.mkdir()
    _run(pyop, twin, *AT_INIT)
    _run(pyop, twin, *API, *FRIGATE)
    _run(pyop, twin, *API, *FRIGATE_V2, "--controller=false")
    _run(pyop, twin, *HOOK, *FRIGATE, DEF, VAL)
    _run(pyop, project, *HOOK, *FRIGATE, DEF)
    _run(pyop, project, *HOOK, *FRIGATE, VAL)
    record = ".pyop-apis.yml"  # the two runs record their changes as two steps
    assert {k: v for k, v in snapshot(project).items() if k != record} == {
        k: v for k, v in snapshot(twin).items() if k != record
    }
    _run(pyop, project, *DELETE, *FRIGATE, VAL)
    _run(pyop, project, *DELETE, *FRIGATE)


def test_a_second_webhook_type_is_refused_when_the_file_was_edited(pyop: RunPyop, project: Path) -> None:
    _run(pyop, project, *HOOK, *FRIGATE, DEF)
    hook = next(project.rglob("webhooks/**/frigate_webhook.py"))
    hook.write_text(hook.read_text() + "# mine\n")
    before = snapshot(project)
    assert_one_line_error(
        pyop(*HOOK, *FRIGATE, VAL, cwd=project), "frigate_webhook.py", "edited since pyop wrote it", "--force"
    )
    assert snapshot(project) == before
