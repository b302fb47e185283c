"""`pyscaffold_op.yamlio`: a string is written plain only when Go's YAML, YAML 1.1 and YAML 1.2 all read
it back as that string (tests/scaffold/test_go_yaml.py asks Go itself about scaffolded projects)."""

from __future__ import annotations

import jinja2
import pytest
import yaml
from ruamel.yaml import YAML

from pyscaffold_op import yamlio

# Go reads these as bool, null, int, float or a timestamp (go-yaml v2/v3), some also YAML 1.1 or 1.2
NOT_STRINGS = [
    *("y", "Y", "n", "N", "yes", "Yes", "YES", "yEs", "no", "on", "On", "off", "OFF", "true", "False"),
    *("~", "null", "Null", "NULL", "", "<<", "="),
    *("123", "+1", "-1", "017", "08", "0x1F", "0X1f", "0o17", "0O17", "0b101", "-0b1", "1_000", "0_x1F"),
    *("1e3", "1E3", "1.", ".5", "1.5e-3", "+.5", "99999999999999999999", ".inf", "-.Inf", "+.INF", ".nan"),
    *("1:20", "2001-12-14", "2001-1-2", "2001-12-14T21:59:43.10Z", "2001-12-14 21:59:43.10 -5"),
]
STRINGS = [
    *("programming-kubernetes", "v1", "v1alpha1", "example.com", "on.example.com", "y-system", "yes-"),
    *("3scale", "1-", "e3", "nan", "inf", "Infinity", "0x", "0o", "2001-12-14-x", "yesno", "nil", "_1"),
]


@pytest.mark.parametrize("value", NOT_STRINGS)
def test_what_some_reader_misreads_is_quoted(value: str) -> None:
    assert not yamlio.plain_is_string(value)
    for text in (
        yamlio.dump({value: [value]}),
        yamlio.dump_documents([{value: [value]}]),
        yamlio.dump_project({"k": value}),
        f"k: {yamlio.yaml_str(value)}\n",
    ):
        data = yaml.safe_load(text)
        assert data == YAML(typ="safe").load(text)
        assert value in data or data == {"k": value}


@pytest.mark.parametrize("value", STRINGS)
def test_what_every_reader_reads_as_itself_stays_plain(value: str) -> None:
    assert yamlio.plain_is_string(value)
    assert yamlio.yaml_str(value) == value
    assert yamlio.dump({"k": value}) == f"k: {value}\n"
    assert yamlio.dump_documents([{"k": value}]) == f"---\nk: {value}\n"


def test_jinja_filters_from_the_extension() -> None:
    env = jinja2.Environment(extensions=["pyscaffold_op.yamlio.YamlFilters"])
    template = env.from_string("a: {{ a | yaml_str }}\nb: {{ b | yaml_str }}\n{{ c | to_nice_yaml }}")
    assert (
        template.render(a="y", b="guestbook", c={"n": "on", "m": 1})
        == "a: 'y'\nb: guestbook\nm: 1\n'n': 'on'\n"
    )
