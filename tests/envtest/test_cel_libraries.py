"""CRD rules calling the Kubernetes CEL libraries (quantity, url, ip, cidr, semver): the emulator accepts
the CRD and enforces them on create and update with the server's answers."""

from __future__ import annotations

import copy
from typing import Any

import httpx2

STR = {"type": "string"}
CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "pools.test.pyop.io"},
    "spec": {
        "group": "test.pyop.io",
        "scope": "Namespaced",
        "names": {"kind": "Pool", "plural": "pools", "singular": "pool", "listKind": "PoolList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-validations": [
                                    {
                                        "rule": "quantity(self.request).compareTo(quantity(self.limit)) <= 0",
                                        "message": "request must not exceed limit",
                                        "fieldPath": ".request",
                                    },
                                    {
                                        "rule": "cidr(self.network).containsIP(self.gateway)",
                                        # not string(ip(...)): its size is unknown to the cost
                                        # estimate, and kube-apiserver refuses the CRD for it
                                        "messageExpression": "'gateway ' + self.gateway "
                                        "+ ' is outside ' + self.network",
                                    },
                                ],
                                "properties": {
                                    "request": STR,
                                    "limit": {
                                        **STR,
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "!quantity(self).isLessThan(quantity(oldSelf))",
                                                "message": "limit may only grow",
                                            }
                                        ],
                                    },
                                    "network": {
                                        **STR,
                                        "x-kubernetes-validations": [
                                            {"rule": "isCIDR(self)", "message": "not a CIDR"}
                                        ],
                                    },
                                    "gateway": {
                                        **STR,
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "isIP(self) && ip.isCanonical(self)",
                                                "message": "bad IP",
                                            }
                                        ],
                                    },
                                    "endpoint": {
                                        **STR,
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "url(self).getScheme() == 'https'",
                                                "message": "https only",
                                            }
                                        ],
                                    },
                                    "version": {
                                        **STR,
                                        "x-kubernetes-validations": [
                                            {
                                                "rule": "semver(self, true).isGreaterThan(semver('1.27.0'))",
                                                "reason": "FieldValueForbidden",
                                                "message": "needs a version after 1.27",
                                            }
                                        ],
                                    },
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}
BASE = "/apis/test.pyop.io/v1/namespaces/default/pools"


def pool(**spec: str) -> dict[str, Any]:
    fields = {
        "request": "500Mi",
        "limit": "1Gi",
        "network": "10.0.0.0/8",
        "gateway": "10.0.0.1",
        "endpoint": "https://example.com/x",
        "version": "v1.29",
    }
    return {
        "apiVersion": "test.pyop.io/v1",
        "kind": "Pool",
        "metadata": {"name": "p"},
        "spec": {**fields, **spec},
    }


def causes(r: httpx2.Response) -> list[dict[str, str]]:
    assert r.status_code == 422, r.text
    return r.json()["details"]["causes"]


async def test_rules_calling_the_libraries_are_enforced(http: httpx2.AsyncClient) -> None:
    r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=CRD)
    assert r.status_code == 201, r.text

    assert causes(await http.post(BASE, json=pool(request="2Gi"))) == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.request",
            "message": 'Invalid value: "object": request must not exceed limit',
        }
    ]
    assert causes(await http.post(BASE, json=pool(gateway="192.168.0.1"))) == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec",
            "message": 'Invalid value: "object": gateway 192.168.0.1 is outside 10.0.0.0/8',
        }
    ]
    assert causes(await http.post(BASE, json=pool(endpoint="http://example.com"))) == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.endpoint",
            "message": 'Invalid value: "string": https only',
        }
    ]
    assert causes(await http.post(BASE, json=pool(version="1.26.3"))) == [
        {
            "reason": "FieldValueForbidden",
            "field": "spec.version",
            "message": "Forbidden: needs a version after 1.27",
        }
    ]
    # a value the library refuses: the rule's evaluation error, as the server words it
    [bad] = causes(await http.post(BASE, json=pool(endpoint="../relative")))
    assert bad == {
        "reason": "FieldValueInvalid",
        "field": "spec.endpoint",
        "message": 'Invalid value: "string": URL parse error during conversion from string: '
        'parse "../relative": invalid URI for request evaluating rule: https only',
    }
    # ::ffff:10.0.0.1 is no IP to Kubernetes: isIP is false, and the containsIP rule's string argument
    # does not parse either (the server's "no such overload")
    found = causes(await http.post(BASE, json=pool(gateway="::ffff:10.0.0.1")))
    assert {(c["field"], c["message"]) for c in found} == {
        ("spec.gateway", 'Invalid value: "string": bad IP'),
        (
            "spec",
            "Invalid value: \"object\": 'no such overload': call arguments did not match a supported "
            "operator, function or macro signature for rule: cidr(self.network).containsIP(self.gateway)",
        ),
    }

    assert (await http.post(BASE, json=pool())).status_code == 201
    # transition rule: quantities compare by value, whatever their suffix
    merge = {"content-type": "application/merge-patch+json"}
    r = await http.patch(f"{BASE}/p", json={"spec": {"limit": "1000Mi"}}, headers=merge)
    assert causes(r) == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.limit",
            "message": 'Invalid value: "string": limit may only grow',
        }
    ]
    r = await http.patch(f"{BASE}/p", json={"spec": {"limit": "1073741824"}}, headers=merge)
    assert r.status_code == 200, r.text
    r = await http.patch(f"{BASE}/p", json={"spec": {"limit": "2G"}}, headers=merge)
    assert r.status_code == 200, r.text


async def test_a_rule_calling_the_format_library_is_refused_with_a_note(http: httpx2.AsyncClient) -> None:
    crd = copy.deepcopy(CRD)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["x-kubernetes-validations"] = [{"rule": "!format.dns1123Label().validate(self.network).hasValue()"}]
    r = await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json=crd)
    [c] = causes(r)
    assert (
        c["field"]
        == "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
    )
    assert "compilation failed: ERROR: <input>:1:2: undeclared reference to 'format'" in c["message"]
    assert "the Kubernetes format library is not emulated" in c["message"]
