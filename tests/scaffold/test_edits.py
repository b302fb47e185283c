"""Unit tests of the pure edit functions: scaffold markers and comment-keeping kustomization edits."""

from __future__ import annotations

import pytest

from pyscaffold_op.errors import ProjectError
from pyscaffold_op.scaffold import edits, pysource

KUSTOMIZATION = """\
# header comment
resources:
# first
- a.yaml  # inline
- b.yaml
# +pyop:scaffold:samples

patches: []
"""


def test_add_list_entry_goes_above_the_marker_and_keeps_comments() -> None:
    out = edits.add_list_entry(KUSTOMIZATION, "c.yaml", where="k", marker_name="samples")
    assert out == KUSTOMIZATION.replace("- b.yaml\n", "- b.yaml\n- c.yaml\n")
    assert edits.add_list_entry(out, "c.yaml", where="k", marker_name="samples") == out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "# keep\nresources:\n- a # inline\n# trailing\n",
            "# keep\nresources:\n- a # inline\n- b\n# trailing\n",
        ),
        ("resources:\n- a\n# trailing\n", "resources:\n- a\n- b\n# trailing\n"),
        ("resources:\n- a # inline\n", "resources:\n- a # inline\n- b\n"),
        ("resources:\n- a\n\n# next\nx: 1\n", "resources:\n- a\n- b\n\n# next\nx: 1\n"),
    ],
)
def test_add_list_entry_without_marker_round_trips_with_ruamel(text: str, expected: str) -> None:
    assert edits.add_list_entry(text, "b", where="k", marker_name="samples") == expected


def test_add_list_entry_creates_the_list() -> None:
    out = edits.add_list_entry("# only a comment\nnamespace: x\n", "a.yaml", where="k")
    assert out == "# only a comment\nnamespace: x\nresources:\n- a.yaml\n"


def test_add_list_entry_rejects_non_lists_and_bad_yaml() -> None:
    with pytest.raises(ProjectError, match="'resources' is not a list"):
        edits.add_list_entry("resources: a.yaml\n", "b.yaml", where="k")
    with pytest.raises(ProjectError, match="not valid YAML"):
        edits.add_list_entry("resources: [\n", "b.yaml", where="k")
    with pytest.raises(ProjectError, match="not a YAML mapping"):
        edits.add_list_entry("- a\n", "b.yaml", where="k")


def test_enable_list_entry() -> None:
    text = "resources:\n#- ../crd\n- ../rbac\n#- ../prometheus\n"
    out = edits.enable_list_entry(text, "../crd", where="k")
    assert out == "resources:\n- ../crd\n- ../rbac\n#- ../prometheus\n"
    assert edits.enable_list_entry(out, "../crd", where="k") == out
    assert edits.enable_list_entry("resources:\n- ../rbac # x\n", "../crd", where="k") == (
        "resources:\n- ../crd\n- ../rbac # x\n"
    )


def test_insert_at_marker_is_idempotent_and_indented() -> None:
    text = "def f():\n    x = 1\n    # +pyop:scaffold:controllers\n    return x\n"
    out = pysource.insert_at_marker(text, "controllers", ["g(", "    1,", ")"], where="f.py")
    assert (
        out
        == "def f():\n    x = 1\n    g(\n        1,\n    )\n    # +pyop:scaffold:controllers\n    return x\n"
    )
    assert pysource.insert_at_marker(out, "controllers", ["g(", "    1,", ")"], where="f.py") == out
    with pytest.raises(ProjectError, match=r"'# \+pyop:scaffold:imports' not found in f.py"):
        pysource.insert_at_marker(text, "imports", ["x"], where="f.py")


def test_insert_sorted_merges_or_starts_a_section() -> None:
    text = "import os\n\nfrom third import x\n\n# +pyop:scaffold:imports\n"
    belongs = lambda line: line.startswith("from mine.")  # noqa: E731
    key = pysource.import_sort_key
    out = pysource.insert_sorted(
        text, "imports", "from mine.b import B", where="m", sort_key=key, belongs=belongs
    )
    assert out == "import os\n\nfrom third import x\n\nfrom mine.b import B\n\n# +pyop:scaffold:imports\n"
    long_import = "from mine.a import (\n    Alpha,\n    Beta,\n)"  # as ruff wraps a long one
    out = pysource.insert_sorted(out, "imports", long_import, where="m", sort_key=key, belongs=belongs)
    assert out.endswith(
        "from mine.a import (\n    Alpha,\n    Beta,\n)\nfrom mine.b import B\n\n# +pyop:scaffold:imports\n"
    )
    again = pysource.insert_sorted(out, "imports", long_import, where="m", sort_key=key, belongs=belongs)
    assert again == out


def test_dunder_all_order() -> None:
    names = ['"Beta",', '"VERSION",', '"alpha",', '"At",', '"GROUP",']
    assert sorted(names, key=pysource.dunder_all_sort_key) == [
        '"GROUP",',
        '"VERSION",',
        '"At",',
        '"Beta",',
        '"alpha",',
    ]
