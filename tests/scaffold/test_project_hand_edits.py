"""Issue 28 item 9: every value read back from PROJECT passes the rules its flag passed, so a hand edit
(`domain: ex$(touch x).com`) is one line naming PROJECT and the field, exit status 2, no file changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyscaffold_op import yaml12

from .conftest import RunPyop, assert_one_line_error, snapshot

CREATE_API = (
    "create",
    "api",
    "--group",
    "programming-kubernetes",
    "--version",
    "v1",
    "--kind",
    "Boat",
    "--no-make",
)


def edit_project(root: Path, change: dict[str, object], resource: dict[str, object] | None = None) -> None:
    path = root / "PROJECT"
    data = yaml12.load(path.read_text())
    data.update(change)
    if resource:
        data["resources"][0].update(resource)
    path.write_text(yaml12.dump(data))


@pytest.mark.parametrize(
    ("change", "resource", "field"),
    [
        ({"domain": "ex$(touch x).com"}, None, "domain"),
        ({"domain": "Example.COM"}, None, "domain"),
        ({"repo": "github.com/x/y z"}, None, "repo"),
        ({"repo": "github.com/x/import"}, None, "repo"),  # a Python keyword as the package
        ({"projectName": "a;rm -rf"}, None, "projectName"),
        (None, {"group": "ship$(id)"}, "resources[0].group"),
        (None, {"version": "v1\nkind: X"}, "resources[0].version"),
        (None, {"kind": "At(object):\n    pass\nimport os"}, "resources[0].kind"),
        (None, {"plural": "ats/../../x"}, "resources[0].plural"),
        (None, {"path": "programming_kubernetes.api.v1alpha1; import os"}, "resources[0].path"),
        (None, {"domain": "a b"}, "resources[0].domain"),
        (None, {"webhooks": {"defaulting": True, "defaultingPath": "/x\"y"}}, "resources[0].webhooks"),
        (None, {"webhooks": {"conversion": True, "spoke": ["v2; x"]}}, "resources[0].webhooks.spoke[0]"),
    ],
)  # fmt: skip
def test_a_hand_edited_project_is_refused_with_one_line(
    pyop: RunPyop,
    with_api: Path,
    change: dict[str, object] | None,
    resource: dict[str, object] | None,
    field: str,
) -> None:
    edit_project(with_api, change or {}, resource)
    before = snapshot(with_api)
    run = pyop(*CREATE_API, cwd=with_api)
    assert_one_line_error(run, "PROJECT: " + field)
    assert snapshot(with_api) == before
    assert not (with_api / "x").exists()


def test_the_generator_refuses_it_too(pyop: RunPyop, with_api: Path) -> None:
    edit_project(with_api, {}, {"group": "ship$(id)"})
    before = snapshot(with_api)
    assert_one_line_error(pyop("generate", "manifests", cwd=with_api), "PROJECT: resources[0].group")
    assert snapshot(with_api) == before


def test_an_untouched_project_still_works(pyop: RunPyop, with_api: Path) -> None:
    assert pyop(*CREATE_API, cwd=with_api).code == 0


def test_a_second_api_in_a_project_with_one_passes_the_project_rules(pyop: RunPyop, with_api: Path) -> None:
    """The merge of issue 28 item 9 called validate_group(group, domain) after it lost its domain
    argument: every command reading a PROJECT with a resource raised TypeError."""
    run = pyop(*CREATE_API, cwd=with_api)
    assert (run.code, run.err) == (0, "")
