"""Field selectors: the one parser and matcher the emulator and the runtime share."""

from __future__ import annotations

import pytest

from pyscaffold_op.apimachinery.fieldselector import FieldSelectorError, field_value, matcher, parse

POD = {
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"nodeName": "", "hostNetwork": True},
    "status": {"phase": "Running"},
}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("status.phase=Running", True),
        ("status.phase==Running,metadata.namespace=ns", True),
        ("status.phase!=Running", False),
        ("status.phase != Pending", True),
        ("spec.nodeName=", True),  # empty string
        ("spec.schedulerName=", True),  # absent compares as ""
        ("spec.schedulerName!=", False),
        ("spec.hostNetwork=true", True),  # booleans in Go's spelling
        ("spec.hostNetwork=True", False),
        ("", True),
        (",status.phase=Running,", True),
    ],
)
def test_match(selector: str, matches: bool) -> None:
    assert parse(selector).matches(POD) is matches


@pytest.mark.parametrize("selector", ["status.phase", "=Running", "status.phase<1"])
def test_bad_selectors_carry_the_server_message(selector: str) -> None:
    with pytest.raises(FieldSelectorError, match=r"^invalid selector: '.*'; can't understand '.*'$"):
        parse(selector)


def test_runtime_forms_dicts_strings_and_none() -> None:
    assert matcher(None).empty() and matcher("").empty() and matcher({}).empty()
    assert matcher({"metadata.name": "p"}).matches(POD)
    assert not matcher({"metadata.name": "q"}).matches(POD)
    assert matcher("metadata.name!=q").matches(POD)


def test_field_value_walks_only_mappings() -> None:
    assert field_value(POD, "metadata.name.x") == ""
    assert field_value({"spec": {"replicas": 3}}, "spec.replicas") == "3"
