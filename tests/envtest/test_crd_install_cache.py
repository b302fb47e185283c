"""CRD work shared by content across environments (apiextensions.schemacache): a suite re-installing the
same CRDs pays neither the YAML parse, the CRD's checks nor the schema compilation again, and nothing one
environment does to its objects reaches another."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
import yaml

from pyscaffold_op.envtest import Environment

from .conftest import CRDS, at

AT_CRD = Path(CRDS) / "cnat.programming-kubernetes.info_ats.yaml"


def cache() -> ModuleType:
    """The module as the code under test imports it now (some tests re-import pyop's modules)."""
    return importlib.import_module("pyscaffold_op.apiextensions.schemacache")


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    cache().clear()


def _served(env: Environment, version: str = "v1alpha1") -> object:
    return env.store.info("cnat.programming-kubernetes.info", version, "ats")


async def test_a_second_environment_shares_the_schema_its_compilation_and_the_crd_checks() -> None:
    async with Environment(crd_paths=[AT_CRD]) as first:
        info = _served(first)
        first.store.create(info, "default", at("one"))  # compiles what a write needs
        compiled = info.compiled_schema  # type: ignore[attr-defined]
    before = cache().stats()
    async with Environment(crd_paths=[AT_CRD]) as second:
        again = _served(second)
        assert again.schema is info.schema  # type: ignore[attr-defined]
        assert again.compiled_schema is compiled  # type: ignore[attr-defined]
        second.store.create(again, "default", at("two"))
    after = cache().stats()
    # the file's CRDs are not checked again (a hit each) and no schema is new
    assert after["memo_misses"] == before["memo_misses"] and after["memo_hits"] == before["memo_hits"] + 2
    assert after["schema_misses"] == before["schema_misses"]


async def test_what_an_environment_does_to_its_crd_never_reaches_the_shared_schema() -> None:
    async with Environment(crd_paths=[AT_CRD]) as first:
        info = _served(first)
        shared = info.schema  # type: ignore[attr-defined]
        name = "ats.cnat.programming-kubernetes.info"
        stored = first.store.find(("apiextensions.k8s.io", "customresourcedefinitions"), "", name)
        assert stored is not None
        stored_schema = stored["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        assert stored_schema is not shared and stored_schema == shared
        stored_schema["properties"]["spec"]["properties"]["schedule"]["type"] = "integer"  # a vandal
    async with Environment(crd_paths=[AT_CRD]) as second:
        created = second.store.create(_served(second), "default", at("still-a-string"))
        assert created["spec"]["schedule"] == "2026-12-02T15:00:00Z"


async def test_a_changed_crd_file_is_read_again_and_served_with_its_new_schema(tmp_path: Path) -> None:
    crd = next(
        d for d in yaml.safe_load_all(AT_CRD.read_text()) if d and d["spec"]["names"]["plural"] == "ats"
    )
    path = tmp_path / "ats.yaml"
    path.write_text(yaml.safe_dump(crd))
    async with Environment(crd_paths=[path]) as first:
        created = first.store.create(_served(first), "default", at("one", note="pruned"))
        assert "note" not in created["spec"]
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["note"] = {"type": "string"}
    path.write_text(yaml.safe_dump(crd))
    async with Environment(crd_paths=[path]) as second:
        created = second.store.create(_served(second), "default", at("two", note="kept"))
        assert created["spec"]["note"] == "kept"


def test_each_load_of_a_cached_file_is_a_fresh_object() -> None:
    crds = importlib.import_module("pyscaffold_op.envtest.registry.crds")
    first, second = crds.load_crd_files([AT_CRD]), crds.load_crd_files([AT_CRD])
    assert first == second and first[0] is not second[0]
    first[0]["spec"]["group"] = "changed"
    assert crds.load_crd_files([AT_CRD])[0]["spec"]["group"] != "changed"


def test_the_cache_is_bounded_by_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    schemacache = cache()
    monkeypatch.setattr(schemacache, "MAX_SCHEMAS", 3)
    kept = [schemacache.canonical({"type": "object", "description": str(i)}) for i in range(5)]
    assert cache().stats()["schemas"] == 3
    # the oldest were dropped: asking again makes a new instance
    assert schemacache.canonical({"type": "object", "description": "0"}) is not kept[0]
    assert schemacache.canonical({"type": "object", "description": "4"}) is kept[4]
