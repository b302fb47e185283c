"""`pyop scorecard`: the at bundle passes the basic and OLM suites; each test fails where scorecard's does."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.olm.scorecard import format_results, run_scorecard
from tests.olm.test_validate import CSV, edit


def states(bundle: Path, selector: str | None = None) -> dict[str, str]:
    return {
        t["status"]["results"][0]["name"]: t["status"]["results"][0]["state"]
        for t in run_scorecard(bundle, selector=selector)
    }


def test_the_at_bundle_passes_the_basic_and_olm_suites(at_bundle: Path) -> None:
    assert states(at_bundle) == {
        "basic-check-spec": "pass",
        "olm-bundle-validation": "pass",
        "olm-crds-have-validation": "pass",
        "olm-crds-have-resources": "pass",
        "olm-spec-descriptors": "pass",
        "olm-status-descriptors": "pass",
    }


def test_the_selector_picks_a_suite(at_bundle: Path) -> None:
    assert list(states(at_bundle, "suite=basic")) == ["basic-check-spec"]
    assert len(states(at_bundle, "suite=olm")) == 5
    assert list(states(at_bundle, "test=olm-spec-descriptors-test")) == ["olm-spec-descriptors"]


def _examples(d: dict[str, Any], examples: list[dict[str, Any]]) -> None:
    d["metadata"]["annotations"]["alm-examples"] = json.dumps(examples)


AT = {"apiVersion": "programming-kubernetes.viper.run/v1alpha1", "kind": "At", "metadata": {"name": "a"}}


@pytest.mark.parametrize(
    ("test", "change", "error"),
    [
        ("basic-check-spec", lambda d: _examples(d, [AT]), "spec missing from [a]"),
        ("basic-check-spec", lambda d: _examples(d, [{**AT, "spec": {"schedule": "tomorrow", "command": "x"}}]), "the API server refused [a]: 422"),
        ("olm-bundle-validation", lambda d: d["spec"].pop("installModes"), "install modes not found"),
        ("olm-crds-have-resources", lambda d: d["spec"]["customresourcedefinitions"]["owned"][0].pop("resources"), "Owned CRDs do not have resources specified"),
        ("olm-spec-descriptors", lambda d: d["spec"]["customresourcedefinitions"]["owned"][0]["specDescriptors"].pop(0), "schedule does not have a spec descriptor"),
        ("olm-status-descriptors", lambda d: (_examples(d, [{**AT, "spec": {"schedule": "2026-01-01T00:00:00Z", "command": "x"}, "status": {"phase": "DONE"}}]), d["spec"]["customresourcedefinitions"]["owned"][0].pop("statusDescriptors")), "does not have a status descriptor"),
    ],
)  # fmt: skip
def test_each_test_fails_its_broken_bundle(at_bundle: Path, test: str, change: Any, error: str) -> None:
    edit(at_bundle, CSV, change)
    result = next(
        t["status"]["results"][0]
        for t in run_scorecard(at_bundle)
        if t["status"]["results"][0]["name"] == test
    )
    assert result["state"] == "fail"
    assert any(error in e for e in result["errors"]), result


def test_crds_have_validation_suggests_the_fields_the_schema_lacks(at_bundle: Path) -> None:
    edit(
        at_bundle,
        CSV,
        lambda d: _examples(
            d, [{**AT, "spec": {"schedule": "2026-01-01T00:00:00Z", "command": "x", "extra": 1}}]
        ),
    )
    result = next(
        t["status"]["results"][0]
        for t in run_scorecard(at_bundle, selector="test=olm-crds-have-validation-test")
    )
    assert result["state"] == "fail"
    assert result["suggestions"] == ["Add CRD validation for spec field `extra` in At/v1alpha1"]


def test_the_output_formats(at_bundle: Path) -> None:
    tests = run_scorecard(at_bundle)
    listed = json.loads(format_results(tests, "json"))
    assert listed["apiVersion"] == "scorecard.operatorframework.io/v1alpha3"
    assert listed["kind"] == "TestList"
    assert listed["items"][0]["spec"]["entrypoint"] == ["scorecard-test", "basic-check-spec"]
    suites = ET.fromstring(format_results(tests, "xunit"))
    assert suites.tag == "testsuites"
    assert len(suites.findall("testsuite/testcase")) == 6
    assert suites.findall(".//failure") == []
    text = format_results(tests, "text")
    assert "Entrypoint: [scorecard-test olm-spec-descriptors]" in text
    assert text.count("State: pass") == 6
