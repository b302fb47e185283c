"""`pyop upgrade`: a project made from an older init template gets the template's changes, keeps the
user's edits, marks and lists conflicts; --dry-run shows the diff; errors exit 2 with nothing changed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.scaffold.init import InitOptions, init_project, make_context, render_template
from pyscaffold_op.scaffold.templates import templates_dir
from pyscaffold_op.scaffold.tree import TreeTemplate
from pyscaffold_op.scaffold.upgrade import apply_upgrade, plan_upgrade

from .conftest import AT_INIT, RunPyop, assert_one_line_error, snapshot

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git merge-file does the merge")

OPTIONS = InitOptions(domain="viper.run", repo="github.com/AbyssViper/programming-kubernetes")
MAKE_TARGET = "\n.PHONY: e2e\ne2e: ## The user's own end-to-end tests.\n\t./hack/e2e.sh\n"


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def older_template(tmp_path: Path) -> Path:
    """A copy of templates/init as an earlier release might have had it: what the current one changed."""
    old = tmp_path / "old-templates" / "init"
    shutil.copytree(templates_dir() / "init", old)
    edit(old / "project/README.md.jinja", "### Prerequisites\n", "### Requirements\n")
    edit(old / "project/Makefile.jinja", "\n.PHONY: lint-fix\n", "\n.PHONY: lint-fixes\n")
    (old / "project/.dockerignore").unlink()  # a file the current template added
    (old / "project/OLD_NOTES.md.jinja").write_text("# Notes on {{ project_name }}\n")  # one it dropped
    return old


def current_render(root: Path) -> dict[str, bytes]:
    return render_template(make_context(OPTIONS, check_installed=False), root)


def test_a_project_made_by_this_pyop_is_up_to_date(pyop: RunPyop, initialized: Path) -> None:
    before = snapshot(initialized)
    run = pyop("upgrade", cwd=initialized)
    assert run.code == 0, run.err
    assert run.out == "the project is up to date with the template\n"
    assert snapshot(initialized) == before


def test_upgrade_from_an_older_template_keeps_edits_and_applies_changes(
    pyop: RunPyop, tmp_path: Path
) -> None:
    old = older_template(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    assert (root / "OLD_NOTES.md").is_file() and not (root / ".dockerignore").exists()
    # the user's edits: a Makefile target (a file the template changes too), a Dockerfile tweak
    makefile = root / "Makefile"
    makefile.write_text(makefile.read_text() + MAKE_TARGET)
    edit(root / "Dockerfile", "FROM python:3.12-slim", "FROM python:3.12-slim-bookworm")
    dockerfile = (root / "Dockerfile").read_text()

    run = pyop("upgrade", "--base-templates", str(old), cwd=root)
    assert run.code == 0, run.err
    new = current_render(root)
    assert makefile.read_text() == new["Makefile"].decode() + MAKE_TARGET  # both changes
    assert (root / "README.md").read_bytes() == new["README.md"]  # the template's change
    assert (root / ".dockerignore").read_bytes() == new[".dockerignore"]  # added by the template
    assert not (root / "OLD_NOTES.md").exists()  # dropped by the template, never edited
    assert (root / "Dockerfile").read_text() == dockerfile  # the template did not change it
    assert (root / ".copier-answers.yml").read_bytes() == new[".copier-answers.yml"]
    assert run.out.splitlines() == [
        "updated .copier-answers.yml",
        "updated .dockerignore",
        "removed OLD_NOTES.md",
        "updated README.md",
        "merged Makefile",
    ]
    # now it is this pyop's revision: nothing left to do
    assert pyop("upgrade", cwd=root).out == "the project is up to date with the template\n"


def test_conflicts_are_marked_listed_and_exit_1(pyop: RunPyop, tmp_path: Path) -> None:
    old = older_template(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    # the user renamed the target the template renames too, differently
    edit(root / "Makefile", "\n.PHONY: lint-fixes\n", "\n.PHONY: fix\n")
    (root / "OLD_NOTES.md").write_text("# my notes\n")  # edited a file the template drops
    run = pyop("upgrade", "--base-templates", str(old), cwd=root)
    assert run.code == 1
    assert run.err == "resolve the <<<<<<< conflict markers in: Makefile\n"
    assert "conflict in Makefile" in run.out.splitlines()
    assert "kept OLD_NOTES.md: the template changed it, but you removed or edited it" in run.out
    text = (root / "Makefile").read_text()
    assert (
        "<<<<<<< Makefile (yours)\n.PHONY: fix\n=======\n.PHONY: lint-fix\n>>>>>>> Makefile (pyop template)"
        in text
    )
    assert (root / "OLD_NOTES.md").read_text() == "# my notes\n"
    assert (root / "README.md").read_bytes() == current_render(root)["README.md"]


def test_dry_run_prints_the_diff_and_changes_nothing(pyop: RunPyop, tmp_path: Path) -> None:
    old = older_template(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    before = snapshot(root)
    run = pyop("upgrade", "--dry-run", "--base-templates", str(old), cwd=root)
    assert run.code == 0, run.err
    assert snapshot(root) == before
    assert "--- a/README.md\n+++ b/README.md\n" in run.out
    assert "-### Requirements\n+### Prerequisites\n" in run.out
    assert "--- a/OLD_NOTES.md\n+++ /dev/null\n" in run.out
    assert "--- /dev/null\n+++ b/.dockerignore\n" in run.out
    assert "would update README.md" in run.out.splitlines()


def test_the_merge_works_in_process_without_the_cli(tmp_path: Path) -> None:
    old = older_template(tmp_path)
    new = tmp_path / "new-templates"
    shutil.copytree(templates_dir() / "init", new)
    edit(new / "project/Dockerfile.jinja", "FROM python:3.12-slim", "FROM python:3.13-slim")
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    plan = plan_upgrade(root, templates=new, base_templates=old)
    assert "Dockerfile" in plan.updated
    apply_upgrade(plan)
    assert "FROM python:3.13-slim" in (root / "Dockerfile").read_text()
    answers = yaml.safe_load((root / ".copier-answers.yml").read_text())
    assert answers["_commit"] == TreeTemplate.load(new).revision() != TreeTemplate.load(old).revision()


@pytest.mark.parametrize(
    ("change", "args", "fragments"),
    [
        ("no-answers", [], ["no .copier-answers.yml"]),
        ("foreign", [], ["_src_path is 'gh:someone/template'", "not made by pyop init"]),
        ("bad-answer", [], ["namespaced must be a bool"]),
        ("bad-name", [], ["invalid domain 'Viper.Run'"]),
        ("old-revision", [], ["made from template revision sha256-0000000000000000", "--base-templates"]),
        ("none", ["--base-templates", "."], ["--base-templates .: no copier.yml"]),
        ("old-revision", ["--base-templates", "TEMPLATES"], ["template revision sha256-", "was made from"]),
    ],
)
def test_errors_exit_2_and_change_nothing(
    pyop: RunPyop, initialized: Path, change: str, args: list[str], fragments: list[str]
) -> None:
    answers = initialized / ".copier-answers.yml"
    text = answers.read_text()
    replacements = {
        "foreign": ("_src_path: pyscaffold-op:templates/init", "_src_path: gh:someone/template"),
        "bad-answer": ("namespaced: false", "namespaced: maybe"),
        "bad-name": ("domain: viper.run", "domain: Viper.Run"),
        "old-revision": (text.split("_commit: ")[1].split("\n")[0], "sha256-0000000000000000"),
    }
    if change == "no-answers":
        answers.unlink()
    elif change in replacements:
        answers.write_text(text.replace(*replacements[change]))
    args = [str(templates_dir() / "init") if arg == "TEMPLATES" else arg for arg in args]
    before = snapshot(initialized)
    assert_one_line_error(pyop("upgrade", *args, cwd=initialized), *fragments)
    assert snapshot(initialized) == before


def test_outside_a_project(pyop: RunPyop, tmp_path: Path) -> None:
    assert_one_line_error(pyop("upgrade", cwd=tmp_path), "no PROJECT file")
    assert list(tmp_path.iterdir()) == []


def test_a_fresh_init_records_the_revision_upgrade_matches(pyop: RunPyop, tmp_path: Path) -> None:
    assert pyop(*AT_INIT, cwd=tmp_path).code == 0
    answers = yaml.safe_load((tmp_path / ".copier-answers.yml").read_text())
    assert answers["_commit"] == TreeTemplate.load(templates_dir() / "init").revision()


def test_what_create_api_added_to_init_files_is_kept(pyop: RunPyop, tmp_path: Path) -> None:
    """create api edits init's files at scaffold markers; for an upgrade those are the user's edits."""
    old = tmp_path / "old-templates" / "init"
    shutil.copytree(templates_dir() / "init", old)
    main_py = "project/src/{{ package }}/__main__.py.jinja"
    edit(old / main_py, "controller manager.", "manager.")  # the current one says more
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    api = ["create", "api", "--group", "programming-kubernetes", "--version", "v1alpha1", "--kind", "At"]
    assert pyop(*api, "--no-make", cwd=root).code == 0
    project = (root / "PROJECT").read_bytes()
    run = pyop("upgrade", "--base-templates", str(old), cwd=root)
    assert run.code == 0, run.err
    assert "merged src/programming_kubernetes/__main__.py" in run.out.splitlines()
    text = (root / "src/programming_kubernetes/__main__.py").read_text()
    assert 'description="The programming-kubernetes controller manager."' in text
    assert "from programming_kubernetes.controllers.at_controller import AtReconciler" in text
    assert "AtReconciler(" in text
    assert (root / "PROJECT").read_bytes() == project


def test_a_project_without_a_recorded_revision_needs_base_templates(pyop: RunPyop, tmp_path: Path) -> None:
    """Projects made before answers files recorded `_commit`: the user names the templates that made them."""
    old = older_template(tmp_path)
    root = tmp_path / "project"
    root.mkdir()
    init_project(OPTIONS, root, template_root=old)
    answers = root / ".copier-answers.yml"
    answers.write_text(
        "".join(line for line in answers.read_text().splitlines(True) if "_commit" not in line)
    )
    before = snapshot(root)
    assert_one_line_error(
        pyop("upgrade", cwd=root), "a template revision it does not record", "--base-templates"
    )
    assert snapshot(root) == before
    run = pyop("upgrade", "--base-templates", str(old), cwd=root)
    assert run.code == 0, run.err
    assert (root / "README.md").read_bytes() == current_render(root)["README.md"]
    assert "_commit: sha256-" in answers.read_text()


def test_renders_compare_with_what_init_wrote_after_ruff(pyop: RunPyop, tmp_path: Path) -> None:
    """init formats its Python with ruff (a long package name wraps lines in __main__.py): the old and
    new renders must be formatted alike, or an untouched file would look edited and be merged."""
    package = "abc_def_" * 12 + "x"
    options = InitOptions(domain="example.org", repo=f"github.com/a/{package}", project_name="p")
    old = tmp_path / "old-templates" / "init"
    shutil.copytree(templates_dir() / "init", old)
    edit(old / "project/src/{{ package }}/__main__.py.jinja", "controller manager.", "manager.")
    root = tmp_path / "project"
    root.mkdir()
    init_project(options, root, template_root=old)
    run = pyop("upgrade", "--base-templates", str(old), cwd=root)
    assert run.code == 0, run.err
    assert f"updated src/{package}/__main__.py" in run.out.splitlines()
    written = (root / f"src/{package}/__main__.py").read_bytes()
    assert (
        written
        == render_template(make_context(options, check_installed=False), root)[f"src/{package}/__main__.py"]
    )
