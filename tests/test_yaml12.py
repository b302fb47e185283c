"""`pyscaffold_op.yaml12` reads plain scalars as ruamel.yaml's safe loader (YAML 1.2) does: PROJECT was
written by ruamel, and is read by the generator and `create api` with PyYAML's libyaml parser; it is
written by `yamlio.dump_project` as ruamel writes it, with what Go or YAML 1.1 would misread quoted."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from ruamel.yaml import YAML

from pyscaffold_op import yaml12, yamlio
from pyscaffold_op.errors import ProjectError
from pyscaffold_op.project import _HEADER, load_project

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


def _ruamel_dump(data: Any) -> str:
    """How PROJECT was written before (ruamel), with the strings Go's YAML or YAML 1.1 would read as
    something else single-quoted (`'no'`, `'y'`, `'1e3'`): ruamel, a YAML 1.2 writer, leaves them plain."""
    import io

    yaml = YAML()
    yaml.indent(mapping=2, sequence=2, offset=0)
    out = io.StringIO()
    yaml.dump(yamlio._ruamel_quoted(data), out)
    return out.getvalue()


ODD_STRINGS = [
    *SCALARS,
    *("", " lead", "trail ", "a: b", "a #b", "#c", "- x", "-x", "? q", "[x]", "{y}", "*a", "&b", "!t", "%p"),
    *("@at", "`tick", "'single'", '"double"', "a'b", 'a"b', "é", "日本", "tab\there", "line\nbreak", "x\n"),
    *("long " * 30, "w" * 120, "github.com/example/" + "n" * 90, "v1alpha1", "programming-kubernetes"),
    *("x" * 50, "x" * 51, "word " * 10, "g" * 40 + " " + "h" * 9, " ".join("abcdefghijklmnopqrstuvw")),
]


@pytest.mark.parametrize("value", ODD_STRINGS)
def test_dump_writes_as_ruamel_writes(value: str) -> None:
    data = {
        "domain": value,
        "layout": [value, "python.pyop.io/v1"],
        "resources": [
            {"api": {"crdVersion": value, "namespaced": True}, "group": value, "spoke": [value]},
            {"webhooks": {"defaultingPath": value, "spoke": [value, value]}},
        ],
        "empty": [],
        "version": "3",
    }
    text = yaml12.dump(data)
    assert text == _ruamel_dump(data)
    assert yaml12.load(text) == data
    assert YAML(typ="safe").load(text) == data  # YAML 1.2
    assert yaml.safe_load(text) == data  # YAML 1.1


def test_project_dump_round_trips(tmp_path: Path) -> None:
    text = (
        "domain: example.com\nlayout:\n- python.pyop.io/v1\nprojectName: no\nrepo: github.com/example/no\n"
        "resources:\n- api:\n    crdVersion: v1\n    namespaced: true\n  controller: true\n"
        "  domain: example.com\n  group: 'on'\n  kind: At\n  version: v1\nversion: '3'\n"
    )
    (tmp_path / "PROJECT").write_text(text)
    project = load_project(tmp_path)
    assert yamlio._same_in_both(project.model_dump(mode="json", by_alias=True))  # libyaml writes it
    assert project.dump() == _HEADER + _ruamel_dump(YAML(typ="safe").load(project.dump()))
    (tmp_path / "PROJECT").write_text(project.dump())
    assert load_project(tmp_path) == project
