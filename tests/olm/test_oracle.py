"""operator-framework/api's validators (what `operator-sdk bundle validate` runs; `hack/oracles`
builds them as bin/olm-validate) judge pyop's bundle, and agree with pyop where pyop refuses one."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.olm.validate import validate_bundle
from tests.olm.test_validate import CSV, DEFAULT_CASES, OPERATORHUB_CASES, _with_icon, edit

pytestmark = pytest.mark.oracle

ORACLE = oracle_bin("olm-validate")
needs_oracle = pytest.mark.skipif(ORACLE is None, reason=missing_reason("olm-validate"))


def judge(bundle: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    assert ORACLE is not None
    done = subprocess.run(
        [str(ORACLE), *args, str(bundle / "manifests")], capture_output=True, text=True, check=False
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


@needs_oracle
def test_operator_sdks_validators_accept_the_at_bundle(at_bundle: Path) -> None:
    code, lines = judge(at_bundle)
    assert code == 0, lines
    assert [x for x in lines if x["level"] == "warning"] == []


@needs_oracle
def test_operator_sdks_operatorhub_suite_refuses_what_pyop_refuses(at_bundle: Path) -> None:
    code, lines = judge(at_bundle, "--select-optional", "suite=operatorframework")
    assert code == 1
    assert [
        "csv.Spec.Icon elements should contain both data and mediatype" in x["detail"]
        for x in lines
        if x["level"] == "error"
    ] == [True]
    edit(at_bundle, CSV, _with_icon)
    code, lines = judge(at_bundle, "--select-optional", "suite=operatorframework")
    assert code == 0, lines
    assert validate_bundle(at_bundle, "suite=operatorframework").passed


# the CSV, bundle and OperatorHub rules operator-framework/api holds (the format, CRD and annotation
# rules are operator-registry's, which the oracle does not build). pyop is stricter on four: a version
# that is not semver (the Go CSV type refuses to decode it, so the oracle cannot load the bundle), an
# owned entry without kind, a webhook of a deployment the CSV lacks (OLM fails the install), and
# duplicate install modes (operator-framework/api v0.35.0 never fills the set it checks them against).
SHARED = {c[0] for c in DEFAULT_CASES if c[1] == CSV} - {
    "csv-version",
    "csv-owned-fields",
    "csv-webhook-deployment",
    "csv-install-mode-dup",
}


@needs_oracle
@pytest.mark.parametrize(
    ("rule", "rel", "change", "expected"),
    [c for c in DEFAULT_CASES if c[0] in SHARED],
    ids=sorted(SHARED, key=[c[0] for c in DEFAULT_CASES].index),
)
def test_the_oracle_refuses_each_csv_and_bundle_case(
    at_bundle: Path, rule: str, rel: str, change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    edit(at_bundle, rel, change)
    assert not validate_bundle(at_bundle).passed
    code, lines = judge(at_bundle)
    assert code == 1, (rule, lines)


@needs_oracle
@pytest.mark.parametrize(
    ("rule", "change", "expected"),
    [c for c in OPERATORHUB_CASES if c[0] not in ("icon-base64", "max-k8s")],
    ids=[c[0] for c in OPERATORHUB_CASES if c[0] not in ("icon-base64", "max-k8s")],
)
def test_the_oracle_refuses_each_operatorhub_case(
    at_bundle: Path, rule: str, change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    edit(at_bundle, CSV, _with_icon)
    edit(at_bundle, CSV, change)
    code, lines = judge(at_bundle, "--select-optional", "suite=operatorframework")
    assert code == 1, (rule, lines)
    assert any(expected.split(" is invalid")[0] in x["detail"] for x in lines if x["level"] == "error"), lines
