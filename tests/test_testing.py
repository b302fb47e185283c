"""pyscaffold_op.testing.load_sample: a sample YAML file as a typed object."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.testing import load_sample


class ThingSpec(KubeModel):
    size: int
    image_name: str = "busybox"


class Thing(CustomResource):
    gvk = GroupVersionKind("example.com", "v1", "Thing")
    spec: ThingSpec = Field(default_factory=lambda: ThingSpec(size=1))


def test_the_document_of_the_models_kind_is_taken(tmp_path: Path) -> None:
    sample = tmp_path / "sample.yaml"
    sample.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n---\n"
        "apiVersion: example.com/v2\nkind: Thing\nmetadata: {name: wrong-version}\nspec: {size: 9}\n---\n"
        "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: sample\n  labels: {a: b}\n"
        "spec:\n  size: 3\n  imageName: nginx\n"
    )
    thing = load_sample(Thing, sample)
    assert isinstance(thing, Thing)
    assert (thing.metadata.name, thing.metadata.labels, thing.spec.size, thing.spec.image_name) == (
        "sample",
        {"a": "b"},
        3,
        "nginx",
    )


def test_a_file_without_the_kind_is_an_error_naming_it(tmp_path: Path) -> None:
    sample = tmp_path / "sample.yaml"
    sample.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n")
    with pytest.raises(ValueError, match=r"sample\.yaml: no Thing of apiVersion example\.com/v1 in it"):
        load_sample(Thing, sample)


def test_a_sample_missing_a_required_field_is_an_error_naming_the_file(tmp_path: Path) -> None:
    sample = tmp_path / "sample.yaml"
    sample.write_text("apiVersion: example.com/v1\nkind: Thing\nmetadata: {name: s}\nspec: {}  # TODO\n")
    with pytest.raises(ValueError, match=r"(?s)sample\.yaml: the sample is not a valid Thing:.*spec\.size"):
        load_sample(Thing, sample)
