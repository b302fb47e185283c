"""Name rules of apimachinery's util/validation, shared by the scaffolder, the generator and the emulator."""

from __future__ import annotations

import pytest

from pyscaffold_op.apimachinery.validation import (
    is_dns1035_label,
    is_dns1123_label,
    is_dns1123_subdomain,
    is_qualified_name,
    is_valid_label_value,
)


@pytest.mark.parametrize("name", ["a", "my-name", "123-abc", "a" * 63])
def test_dns1123_labels(name: str) -> None:
    assert is_dns1123_label(name) == []
    assert is_dns1123_subdomain(name) == []


@pytest.mark.parametrize("name", ["", "-a", "a-", "A", "a_b", "a.b", "a" * 64])
def test_not_dns1123_labels(name: str) -> None:
    assert is_dns1123_label(name)


def test_subdomains_allow_dots_up_to_253() -> None:
    assert is_dns1123_subdomain("example.com") == []
    assert is_dns1123_subdomain(".".join(["a" * 63] * 4)[:253].rstrip(".")) == []
    assert is_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert is_dns1123_subdomain("a..b") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
        "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
        "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]


def test_dns1035_labels_start_with_a_letter() -> None:
    assert is_dns1035_label("widgets") == []
    assert is_dns1035_label("1widgets")
    assert is_dns1035_label("wid_gets")


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("app", None),
        ("example.com/app", None),
        ("App.Name_1", None),
        ("/app", "prefix part must be non-empty"),
        ("Example.com/app", "prefix part a lowercase RFC 1123 subdomain"),
        ("example.com/", "name part must be non-empty"),
        # apimachinery v0.37's validate/content rules count bytes, and kube-apiserver says so
        ("a" * 64, "name part must be no more than 63 bytes"),
        ("a" * 254 + "/x", "prefix part must be no more than 253 bytes"),
        ("-app", "name part must consist of alphanumeric characters"),
        ("a/b/c", "a valid label key must consist of"),
    ],
)
def test_qualified_names(key: str, problem: str | None) -> None:
    problems = is_qualified_name(key)
    if problem is None:
        assert problems == []
    else:
        assert problems and problems[0].startswith(problem)


def test_label_values_may_be_empty() -> None:
    assert is_valid_label_value("") == []
    assert is_valid_label_value("My_value.1") == []
    assert is_valid_label_value("-x")
    assert is_valid_label_value("x" * 64)[0] == "must be no more than 63 bytes"
