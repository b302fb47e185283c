"""`pyscaffold_op.yaml12` reads plain scalars as ruamel.yaml's safe loader (YAML 1.2) does: PROJECT is
written by ruamel, and read by the generator and `create api` with PyYAML's libyaml parser."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from pyscaffold_op import yaml12
from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import load_project

# where YAML 1.1 and 1.2 differ (booleans, octals, sexagesimals, floats without a dot), and the rest
SCALARS = [
    *("no", "No", "on", "yes", "y", "Y", "n", "off", "OFF", "true", "True", "TRUE", "tRue", "false"),
    *("~", "null", "Null", "NULL", "nil", "017", "-017", "08", "0o17", "0o8", "0x1F", "-0x1f", "0x", "0b101"),
    *("+0b1", "1_000", "1__0", "_1", "1:20", "-1:20", "190:20:30", "1:20.5", "3", "+12", "-0", "0"),
    *(".inf", "-.Inf", "+.INF", ".NaN", "1e3", "1E3", "12e", "1.5", "-1.5E+3", "1.5e-3", "+.5", ".5", "1."),
    *("0.", "1_0.5", "2001-12-14", "2001-12-14 21:59:43.10 -5", "2001-12-14t21:59:43.10Z"),
    "2001-1-2 3:04:05",
    *("v1", "v1alpha1", "programming-kubernetes", "example.com", "<<x", "0o", "3.0.0"),
]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("scalar", SCALARS)
def test_plain_scalar_reads_as_ruamel_reads_it(scalar: str) -> None:
    text = f"key: {scalar}\nlist: [{scalar}]\nblock:\n- {scalar}\n"
    expected = YAML(typ="safe").load(text)
    got = yaml12.load(text)
    for a, b in ((got["key"], expected["key"]), (got["list"][0], expected["list"][0])):
        assert _same(a, b), (a, b)
    assert _same(got["block"][0], expected["block"][0])


def test_project_with_yaml_1_1_words_as_names(tmp_path: Path) -> None:
    (tmp_path / "PROJECT").write_text(
        "domain: on\nlayout:\n- python.pyop.io/v1\nprojectName: yes\nrepo: github.com/example/no\n"
        "resources:\n- api:\n    crdVersion: v1\n    namespaced: true\n  domain: on\n  group: no\n"
        "  kind: Y\n  version: v1\nversion: '3'\n"
    )
    project = load_project(tmp_path)
    assert (project.domain, project.project_name, project.repo) == ("on", "yes", "github.com/example/no")
    assert project.resources[0].qualified_group() == "no.on" and project.resources[0].kind == "Y"


def test_malformed_project_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "PROJECT").write_text("domain: [unclosed\n")
    with pytest.raises(ProjectError, match=r"cannot read .*PROJECT") as info:
        load_project(tmp_path)
    assert "\n" not in str(info.value)
