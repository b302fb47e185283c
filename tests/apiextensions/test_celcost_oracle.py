"""pyop's CEL cost verdicts against the real kube-apiserver: every CRD of the corpus is accepted (201)
or rejected for its rule costs (422) by both alike."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pyscaffold_op.apiextensions.crdvalidation import crd_causes
from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from tests.apiextensions.cel_cost_corpus import CORPUS, crd

pytestmark = pytest.mark.oracle

_CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@pytest.fixture(scope="module")
def control_plane() -> Iterator[Any]:
    server = oracle_bin("kube-apiserver")
    if server is None or oracle_bin("etcd") is None:
        pytest.skip(missing_reason("kube-apiserver"))
    from pyscaffold_op.envtest.controlplane import ControlPlane

    with ControlPlane(assets=server.parent) as cp:
        yield cp


def _tail(field: str) -> str:
    """A field below the version's schema, the same whether the server hoisted it to spec.validation."""
    return field.split("openAPIV3Schema", 1)[-1]


def test_cost_verdicts_equal_kube_apiservers(control_plane: Any) -> None:
    differences = []
    for name, spec in CORPUS:
        definition = crd(name, spec)
        status, body = control_plane.request("POST", _CRDS, definition)
        assert status in (201, 422), (name, status, body)
        server = sorted(
            (_tail(c.get("field", "")), c.get("message", ""))
            for c in ((body.get("details") or {}).get("causes") or [])
            if status == 422
        )
        ours = sorted((_tail(c["field"]), c["message"]) for c in (dict(x) for x in crd_causes(definition)))
        if (status == 201) != (not ours):
            differences.append((name, status, server, ours))
            continue

        # the budget errors themselves, with the factor (which fields "contributed" to a total over
        # budget is a tie the server breaks in map order, so only their number is compared)
        def budget(causes: list[tuple[str, str]]) -> list[tuple[str, str]]:
            return [c for c in causes if "exceeds budget" in c[1]]

        def contributed(causes: list[tuple[str, str]]) -> int:
            return sum("contributed to" in c[1] for c in causes)

        if budget(server) != budget(ours) or contributed(server) != contributed(ours):
            differences.append((name, status, server, ours))
    agree = len(CORPUS) - len(differences)
    print(f"\nCEL cost: {agree}/{len(CORPUS)} rules agree with kube-apiserver")
    assert not differences, differences
