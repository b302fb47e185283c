"""`pyop generate kustomize manifests`: owned CRDs and descriptors from the types and markers; the
user's edits to the base kept."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from pyscaffold_op.dev.golden_at import AT_DIR
from pyscaffold_op.errors import GenerateError
from pyscaffold_op.olm.csvbase import base_path, generate_kustomize_manifests, words
from pyscaffold_op.olm.markers import parse

BASE = base_path("programming-kubernetes")


@pytest.fixture
def at(tmp_path: Path) -> Path:
    dest = tmp_path / "at"
    shutil.copytree(AT_DIR, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def owned(root: Path) -> dict:
    return yaml.safe_load((root / BASE).read_text())["spec"]["customresourcedefinitions"]["owned"][0]


def test_the_at_base_gets_its_owned_crd_and_descriptors(at: Path) -> None:
    assert generate_kustomize_manifests(at) == [at / BASE]
    entry = owned(at)
    assert entry["name"] == "ats.programming-kubernetes.viper.run"
    assert entry["resources"] == [{"kind": "Pod", "name": "", "version": "v1"}]
    assert [d["path"] for d in entry["specDescriptors"]] == ["schedule", "command", "image"]
    assert [d["path"] for d in entry["statusDescriptors"]] == ["phase", "conditions", "podName", "outcome"]
    assert entry["specDescriptors"][0]["x-descriptors"] == ["urn:alm:descriptor:com.tectonic.ui:text"]
    assert generate_kustomize_manifests(at) == []  # idempotent
    assert generate_kustomize_manifests(at, check=True) == []


def test_user_edits_to_the_base_are_kept(at: Path) -> None:
    generate_kustomize_manifests(at)
    doc = yaml.safe_load((at / BASE).read_text())
    doc["spec"]["description"] = "Runs a command once, at a time."
    doc["metadata"]["annotations"]["categories"] = "Developer Tools"
    entry = doc["spec"]["customresourcedefinitions"]["owned"][0]
    entry["description"] = "My own words."
    entry["statusDescriptors"].append({"path": "exitCode", "displayName": "Exit code"})
    entry["specDescriptors"][0]["displayName"] = "overwritten by the marker"
    (at / BASE).write_text(yaml.safe_dump(doc))
    generate_kustomize_manifests(at)
    again = yaml.safe_load((at / BASE).read_text())
    assert again["spec"]["description"] == "Runs a command once, at a time."
    assert again["metadata"]["annotations"]["categories"] == "Developer Tools"
    entry = again["spec"]["customresourcedefinitions"]["owned"][0]
    assert entry["description"] == "My own words."
    assert entry["statusDescriptors"][-1] == {"path": "exitCode", "displayName": "Exit code"}
    assert entry["specDescriptors"][0]["displayName"] == "Schedule"


def test_a_kind_gone_from_the_project_leaves_the_base(at: Path) -> None:
    generate_kustomize_manifests(at)
    doc = yaml.safe_load((at / BASE).read_text())
    crds = doc["spec"]["customresourcedefinitions"]
    crds["owned"].append({"name": "olds.programming-kubernetes.viper.run", "version": "v1", "kind": "Old"})
    crds["owned"].append({"name": "others.example.com", "version": "v1", "kind": "Other"})
    (at / BASE).write_text(yaml.safe_dump(doc))
    generate_kustomize_manifests(at)
    names = [
        e["name"]
        for e in yaml.safe_load((at / BASE).read_text())["spec"]["customresourcedefinitions"]["owned"]
    ]
    assert names == ["ats.programming-kubernetes.viper.run", "others.example.com"]


def test_markers_parse_like_operator_sdks() -> None:
    marker = parse('type=spec,displayName="Size",xDescriptors={"urn:a","urn:b"},order=2', "f.py:1")
    assert marker.args == {
        "type": "spec",
        "displayName": "Size",
        "xDescriptors": ["urn:a", "urn:b"],
        "order": 2,
    }
    assert parse("resources={{Deployment,v1,memcached-deployment},{Service,v1,x}}", "f.py:1").args[
        "resources"
    ] == [
        ["Deployment", "v1", "memcached-deployment"],
        ["Service", "v1", "x"],
    ]
    for bad in ("type=other", "colour=red", "displayName", 'displayName="x', "order=first"):
        with pytest.raises(GenerateError, match=r"f\.py:1"):
            parse(bad, "f.py:1")
    assert words("CronJob") == "Cron Job"
    assert words("podName") == "Pod Name"
