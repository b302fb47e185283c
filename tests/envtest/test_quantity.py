"""Canonical Quantity strings (envtest/server/quantity.py) judged by kube-apiserver: a container's
emptyDir sizeLimit comes back as Go writes the quantity after parsing it."""

from __future__ import annotations

import pytest

from pyscaffold_op.envtest.server.quantity import canonical
from tests.conformance.conftest import NOT_INSTALLED, assets, have_oracle

QUANTITIES = [
    *[
        "0",
        "0Mi",
        "1",
        "1.5",
        "0.25",
        "0.1",
        "0.001",
        "0.0001",
        "1.0000000001",
        "0.000000001",
        "0.0000000001",
        "2.5000000001",
    ],
    *[
        "1m",
        "1000m",
        "1500m",
        "1u",
        "1n",
        "999n",
        "1000n",
        "1k",
        "100k",
        "1000",
        "1023",
        "1024",
        "123456789",
        "12345678901234",
    ],
    *[
        "1e3",
        "10e3",
        "12e2",
        "1.23456789e3",
        "1E6",
        "2e-3",
        "1e-9",
        "5e0",
        "1e18",
        "100M",
        "1G",
        "1T",
        "1P",
        "1E",
        "7E",
    ],
    *[
        "1Ki",
        "0.5Ki",
        "1.5Ki",
        "1023Ki",
        "1024Ki",
        "1000Ki",
        "512Mi",
        "1024Mi",
        "1.5Mi",
        "1.5Gi",
        "0.5Gi",
        "3Ti",
        "1Pi",
        "1Ei",
        "2047Ki",
    ],
]


@pytest.mark.oracle
def test_canonical_strings_are_kube_apiservers() -> None:
    if not have_oracle():
        pytest.skip(NOT_INSTALLED)
    from pyscaffold_op.envtest.controlplane import ControlPlane

    served: dict[str, str] = {}
    with ControlPlane(assets=assets()) as cp:
        for q in QUANTITIES:  # an emptyDir's sizeLimit (ResourceLists are rounded up to 1m by defaulting)
            volume = {"name": "v", "emptyDir": {"sizeLimit": q}}
            spec = {"containers": [{"name": "c", "image": "x"}], "volumes": [volume]}
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"}, "spec": spec}
            status, body = cp.request("POST", "/api/v1/namespaces/default/pods?dryRun=All", pod)
            assert status == 201, (q, body)
            served[q] = body["spec"]["volumes"][0]["emptyDir"]["sizeLimit"]
    assert {q: canonical(q) for q in QUANTITIES} == served
