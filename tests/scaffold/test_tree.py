"""`pyop init` renders templates/init without copier; copier itself must render the very same bytes.

The init template stays a copier template (so its answers file can drive an upgrade), rendered in memory
by `pyscaffold_op.scaffold.tree`. This compares both renderers on every option that changes the tree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pyscaffold_op.project import PROJECT_FILE
from pyscaffold_op.scaffold.init import InitOptions, render, validate
from pyscaffold_op.scaffold.templates import INIT_TEMPLATE_TOKEN, templates_dir
from pyscaffold_op.scaffold.tree import TreeTemplate, to_nice_yaml

copier = pytest.importorskip("copier")

OPTIONS = [
    InitOptions(domain="viper.run", repo="github.com/AbyssViper/programming-kubernetes"),
    InitOptions(
        domain="example.org",
        repo="github.com/example/guestbook",
        project_name="guest-book",
        owner='Jane "JD" Doe: maintainer',
        license="none",
        namespaced=True,
        multigroup=True,
    ),
]


def copier_tree(options: InitOptions, dest: Path) -> dict[str, bytes]:
    context = validate(options, dest)
    copier.run_copy(
        str(templates_dir() / "init"),
        str(dest),
        data=context.template_data(),
        defaults=True,
        quiet=True,
        unsafe=True,  # the template's jinja extension (pyscaffold_op.yamlio.YamlFilters)
    )
    tree = {p.relative_to(dest).as_posix(): p.read_bytes() for p in sorted(dest.rglob("*")) if p.is_file()}
    # copier records where the template was; pyop records a token, so answers files match across machines
    answers = tree[".copier-answers.yml"].decode()
    answers = re.sub(r"(?m)^_src_path:.*$", f"_src_path: {INIT_TEMPLATE_TOKEN}", answers)
    tree[".copier-answers.yml"] = re.sub(r"(?m)^_commit:.*\n", "", answers).encode()
    return tree


@pytest.mark.slow
@pytest.mark.parametrize("options", OPTIONS, ids=["at", "every-option"])
def test_copier_renders_the_same_tree(options: InitOptions, tmp_path: Path) -> None:
    (tmp_path / "copier").mkdir()
    (tmp_path / "pyop").mkdir()
    expected = copier_tree(options, tmp_path / "copier")
    plan = render(validate(options, tmp_path / "pyop"), tmp_path / "pyop")
    actual = {relpath: data for relpath, data in plan.files.items() if relpath != PROJECT_FILE}
    # copier writes `_commit` for git templates only; pyop writes the revision of its template
    answers = actual[".copier-answers.yml"].decode()
    actual[".copier-answers.yml"] = re.sub(r"(?m)^_commit: sha256-[0-9a-f]{16}\n", "", answers).encode()
    assert sorted(actual) == sorted(expected)
    for relpath, data in expected.items():
        assert actual[relpath] == data, relpath


def test_questions_marked_when_false_are_not_recorded() -> None:
    template = TreeTemplate.load(templates_dir() / "init")
    assert template.recorded == (
        "domain",
        "repo",
        "project_name",
        "owner",
        "license",
        "namespaced",
        "multigroup",
    )


@pytest.mark.parametrize(
    "value",
    [
        {"b": [1, {"c": True}], "a": "x: y", "_src_path": "pyscaffold-op:templates/init"},
        {"owner": 'Jane "JD" Doe: maintainer', "empty": "", "unicode": "Zoë", "number": "0755", "yes": "yes"},
    ],
)
def test_to_nice_yaml_is_ansibles(value: dict[str, object]) -> None:
    ansible = pytest.importorskip("jinja2_ansible_filters.core_filters")
    assert to_nice_yaml(value) == ansible.to_nice_yaml(value)
