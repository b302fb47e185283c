"""The init template revisions pyop ships (`templates/history/init.json.xz`): the current one is there
(like golden files: `make testdata` records it), each shipped revision rebuilds to exactly its digest,
and `pyop upgrade` of a project an earlier release made needs no `--base-templates`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.scaffold.history import HISTORY_FILE, add_revision, materialized, shipped_revisions
from pyscaffold_op.scaffold.init import InitOptions, init_project, make_context, render_template
from pyscaffold_op.scaffold.templates import templates_dir
from pyscaffold_op.scaffold.tree import TreeTemplate, _revision

from .conftest import RunPyop

OPTIONS = InitOptions(domain="viper.run", repo="github.com/AbyssViper/programming-kubernetes")


def test_the_current_template_revision_is_shipped() -> None:
    current = TreeTemplate.load(templates_dir() / "init").revision()
    assert current in shipped_revisions(templates_dir()), (
        f"templates/init is revision {current}, which templates/history does not hold: "
        "run `make testdata` (python -m pyscaffold_op.dev.regen) and commit templates/history"
    )


def test_every_shipped_revision_rebuilds_to_its_own_digest() -> None:
    revisions = shipped_revisions(templates_dir())
    assert len(revisions) >= 2
    for revision in revisions:
        with materialized(templates_dir(), revision) as root:
            assert root is not None
            assert _revision(root) == revision
            assert (root / "copier.yml").is_file()


def test_an_unknown_revision_is_not_materialized() -> None:
    with materialized(templates_dir(), "sha256-0000000000000000") as root:
        assert root is None


def test_revisions_are_added_once_and_files_stored_once(tmp_path: Path) -> None:
    history = tmp_path / HISTORY_FILE
    assert add_revision(history, "sha256-a", {"copier.yml": "x: 1\n", "project/README.md": "same\n"})
    assert not add_revision(history, "sha256-a", {"copier.yml": "changed\n"})  # never rewritten
    assert add_revision(history, "sha256-b", {"copier.yml": "x: 2\n", "project/README.md": "same\n"})
    assert shipped_revisions(tmp_path) == ["sha256-a", "sha256-b"]
    with materialized(tmp_path, "sha256-a") as root:
        assert root is not None
        assert (root / "copier.yml").read_text() == "x: 1\n"
        assert (root / "project" / "README.md").read_text() == "same\n"
    import json
    import lzma

    data = json.loads(lzma.decompress(history.read_bytes()))
    assert len(data["blobs"]) == 3  # README.md once for both revisions


def _earlier_revisions() -> list[str]:
    current = TreeTemplate.load(templates_dir() / "init").revision()
    earlier = [r for r in shipped_revisions(templates_dir()) if r != current]
    return [earlier[0], earlier[-1]] if earlier else []  # the oldest and the last before this one


@pytest.mark.skipif(shutil.which("git") is None, reason="git merge-file does the merge")
@pytest.mark.parametrize("made_from", _earlier_revisions())
def test_a_project_made_by_an_earlier_release_upgrades_without_base_templates(
    pyop: RunPyop, tmp_path: Path, made_from: str
) -> None:
    current = TreeTemplate.load(templates_dir() / "init").revision()
    root = tmp_path / "project"
    root.mkdir()
    with materialized(templates_dir(), made_from) as old:
        assert old is not None
        init_project(OPTIONS, root, template_root=old)  # as that release's `pyop init` wrote it
    answers = root / ".copier-answers.yml"
    assert yaml.safe_load(answers.read_text())["_commit"] == made_from
    makefile = root / "Makefile"
    makefile.write_text(makefile.read_text() + "\n.PHONY: e2e\ne2e:\n\t./hack/e2e.sh\n")  # the user's edit

    run = pyop("upgrade", cwd=root)
    assert run.code in (0, 1), run.err  # 1: a conflict with the user's edit, marked in the file
    assert yaml.safe_load(answers.read_text())["_commit"] == current
    new = render_template(make_context(OPTIONS, check_installed=False), root)
    assert (root / "README.md").read_bytes() == new["README.md"]  # untouched: the current render
    assert "./hack/e2e.sh" in makefile.read_text()  # the user's edit kept
    if run.code == 0:
        assert pyop("upgrade", cwd=root).out == "the project is up to date with the template\n"
