"""The version range a generated project pins pyop to."""

from __future__ import annotations

import pytest
from packaging.specifiers import SpecifierSet

from pyscaffold_op.scaffold.pins import version_range


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.1.0", ">=0.1,<1"),
        ("0.12.3", ">=0.12,<1"),
        ("1.4.2", ">=1.4,<2"),
        ("2.0", ">=2.0,<3"),
        ("0.2.0.dev3", ">=0.2.0.dev3,<1"),
        ("1.0.0rc1", ">=1.0.0rc1,<2"),
        ("3.7.1+g1234", ">=3.7,<4"),
    ],
)
def test_range_from_the_running_version(version: str, expected: str) -> None:
    assert version_range(version) == expected


@pytest.mark.parametrize("version", ["0.1.0", "0.2.0.dev3", "1.0.0rc1", "3.7.1+local"])
def test_the_range_admits_the_pyop_that_wrote_it_and_not_the_next_major(version: str) -> None:
    spec = SpecifierSet(version_range(version), prereleases=True)
    major = int(version.split(".")[0])
    assert version in spec
    assert f"{major + 1}.0.0" not in spec
    assert f"{major}.999" in spec


def test_a_version_without_major_minor_is_refused() -> None:
    with pytest.raises(ValueError, match=r"MAJOR\.MINOR"):
        version_range("unknown")
