"""Built-ins' quantities as the emulator stores them (envtest/registry/quantities.py): canonical, the
values of ResourceLists rounded up to a milli, a body with an undecodable one left as sent. The oracle
test has kube-apiserver judge the stored strings; the others check the rewrite's logic."""

from __future__ import annotations

import copy
import math
from fractions import Fraction
from typing import Any

import httpx2
import pytest

from pyscaffold_op.apiextensions import celquantity
from pyscaffold_op.envtest.registry.quantities import canonicalize, kind_plan
from tests.conformance.conftest import NOT_INSTALLED, assets, have_oracle
from tests.envtest.test_quantity import QUANTITIES

QUOTAS = "/api/v1/namespaces/default/resourcequotas"


def _value(text: str) -> Fraction:
    q = celquantity.parse(text)
    return Fraction(q.mantissa) * Fraction(10) ** q.exponent


def _deployment(requests: dict[str, Any], size_limit: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "x", "resources": {"requests": requests, "limits": dict(requests)}}
    volume = {"name": "v", "emptyDir": {"sizeLimit": size_limit}}
    template = {
        "spec": {"containers": [container], "initContainers": [copy.deepcopy(container)], "volumes": [volume]}
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": template},
    }


@pytest.mark.parametrize("text", QUANTITIES)
def test_scalars_keep_their_value_and_resource_lists_round_up_to_a_milli(text: str) -> None:
    obj = _deployment({"cpu": text}, text)
    assert canonicalize("apps/v1", "Deployment", obj) is None
    pod = obj["spec"]["template"]["spec"]
    sent = _value(text)
    # an emptyDir's sizeLimit is a plain Quantity: the same value, perhaps spelt another way
    assert _value(pod["volumes"][0]["emptyDir"]["sizeLimit"]) == sent
    millis = sent * 1000
    rounded = Fraction(math.ceil(millis) if millis > 0 else math.floor(millis), 1000)
    for container in (pod["containers"][0], pod["initContainers"][0]):
        for values in container["resources"].values():
            assert _value(values["cpu"]) == rounded
    # stored strings are a fixed point: decoding them again changes nothing
    again = copy.deepcopy(obj)
    assert canonicalize("apps/v1", "Deployment", again) is None
    assert again == obj


def test_an_undecodable_quantity_leaves_the_whole_body_as_sent() -> None:
    obj = _deployment({"cpu": "0.25", "memory": "lots"}, "1.5Gi")
    sent = copy.deepcopy(obj)
    with pytest.raises(celquantity.QuantityError) as expected:
        celquantity.parse("lots")
    assert canonicalize("apps/v1", "Deployment", obj) == str(expected.value)
    assert obj == sent


@pytest.mark.parametrize("value", [True, {"a": 1}, [1], ""])
def test_values_no_quantity_decodes_from_are_refused(value: Any) -> None:
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "spec": {"hard": {"cpu": value}}}
    assert canonicalize("v1", "ResourceQuota", quota) is not None


def test_json_numbers_and_null_decode_like_strings() -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "spec": {"hard": {"cpu": 0.5, "pods": 3, "memory": None}},
    }
    assert canonicalize("v1", "ResourceQuota", quota) is None
    hard = quota["spec"]["hard"]
    assert (_value(hard["cpu"]), _value(hard["pods"]), _value(hard["memory"])) == (Fraction(1, 2), 3, 0)
    assert all(isinstance(v, str) for v in hard.values())


def test_kinds_without_quantities_have_no_plan() -> None:
    assert kind_plan("v1", "ConfigMap") is None
    assert kind_plan("example.com/v1", "Widget") is None  # not a built-in
    assert kind_plan("v1", "Pod") is not None


async def test_create_patch_and_apply_store_canonical_quantities(http: httpx2.AsyncClient) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q"},
        "spec": {"hard": {"cpu": "0.5"}},
    }
    created = await http.post(QUOTAS, json=quota)
    assert created.status_code == 201
    assert created.json()["spec"]["hard"]["cpu"] != "0.5"
    assert _value(created.json()["spec"]["hard"]["cpu"]) == Fraction(1, 2)
    patched = await http.patch(
        f"{QUOTAS}/q",
        json={"spec": {"hard": {"memory": "1n"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert _value(patched.json()["spec"]["hard"]["memory"]) == Fraction(1, 1000)
    bad = await http.patch(
        f"{QUOTAS}/q?fieldManager=m&force=true",
        json={**quota, "spec": {"hard": {"cpu": "x"}}},
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert bad.status_code == 500, bad.text
    stored = await http.get(f"{QUOTAS}/q")
    assert stored.json()["spec"]["hard"] == patched.json()["spec"]["hard"]


@pytest.mark.oracle
async def test_resource_list_values_are_kube_apiservers(http: httpx2.AsyncClient) -> None:
    """Every string of test_quantity's list as a ResourceQuota's hard limit, stored by both."""
    if not have_oracle():
        pytest.skip(NOT_INSTALLED)
    from pyscaffold_op.envtest.controlplane import ControlPlane

    def quota(text: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "q"},
            "spec": {"hard": {"cpu": text}},
        }

    real: dict[str, Any] = {}
    with ControlPlane(assets=assets()) as cp:
        for text in QUANTITIES:
            status, body = cp.request("POST", f"{QUOTAS}?dryRun=All", quota(text))
            real[text] = (status, body["spec"]["hard"] if status == 201 else body.get("message"))
    emulated: dict[str, Any] = {}
    for text in QUANTITIES:
        answer = await http.post(f"{QUOTAS}?dryRun=All", json=quota(text))
        body = answer.json()
        emulated[text] = (
            answer.status_code,
            body["spec"]["hard"] if answer.status_code == 201 else body.get("message"),
        )
    assert emulated == real
