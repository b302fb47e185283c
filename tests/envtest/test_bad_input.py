"""Client mistakes get the status code and Status body the real server returns; nothing crashes."""

from __future__ import annotations

import httpx2

from .conftest import ATS, at, cm

CMS = "/api/v1/namespaces/default/configmaps"


async def test_malformed_json_and_yaml(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["reason"] == "BadRequest"
    r = await http.post(CMS, content=b"a: [b", headers={"content-type": "application/yaml"})
    assert r.status_code == 400
    r = await http.post(CMS, content=b"[1, 2]", headers={"content-type": "application/json"})
    assert r.status_code == 400
    r = await http.post(
        CMS, content=b"metadata:\n  name: fromyaml\n", headers={"content-type": "application/yaml"}
    )
    assert r.status_code == 201


async def test_unknown_resources(http: httpx2.AsyncClient) -> None:
    for path in (
        "/api/v1/widgets",
        "/apis/apps/v9/deployments",
        "/api/v1/namespaces/default/pods/p/exec",
    ):
        r = await http.get(path)
        assert r.status_code == 404, path
        assert r.json()["message"] == "the server could not find the requested resource"
    # no handler is registered for these: Go's NotFoundHandler answers in plain text
    for path in ("/apis/nope.io/v1/things", "/apis/nope.io", "/nothing"):
        r = await http.get(path)
        assert (r.status_code, r.text) == (404, "404 page not found\n"), path
        assert r.headers["content-type"].startswith("text/plain")


async def test_wrong_api_version_or_kind(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, json={**cm("x"), "apiVersion": "apps/v1"})
    assert r.status_code == 400
    assert r.json()["message"] == (
        "the API version in the data (apps/v1) does not match the expected API version (v1)"
    )
    r = await http.post(CMS, json={**cm("x"), "kind": "Secret"})
    assert r.status_code == 400
    r = await http.post(ATS, json={"metadata": {"name": "x"}, "spec": {}})
    assert r.status_code == 400 and "Kind" in r.json()["message"]
    r = await http.post(CMS, json={**cm("x"), "metadata": {"name": "x", "namespace": "kube-system"}})
    assert r.status_code == 400


async def test_invalid_names(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, json=cm("Bad_Name"))
    assert r.status_code == 422
    body = r.json()
    assert body["reason"] == "Invalid"
    assert body["message"].startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain"
    )
    assert body["details"]["kind"] == "ConfigMap"
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"
    r = await http.post("/api/v1/namespaces", json={"metadata": {"name": "a.b"}})  # labels only
    assert r.status_code == 422
    r = await http.post(CMS, json={"metadata": {}})
    assert r.status_code == 422
    assert "name or generateName is required" in r.json()["message"]


async def test_body_too_large(http: httpx2.AsyncClient) -> None:
    big = cm("big", x="a" * (3 * 1024 * 1024 + 10))
    r = await http.post(CMS, json=big)
    assert r.status_code == 413
    assert r.json()["reason"] == "RequestEntityTooLarge"
    assert r.json()["message"] == "Request entity too large: limit is 3145728"
    huge = b"x" * (13 * 1024 * 1024)
    r = await http.post(CMS, content=huge, headers={"content-type": "application/json"})
    assert r.status_code == 413


async def test_bad_patches_and_methods(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("p"))
    r = await http.patch(f"{CMS}/p", content=b"{}", headers={"content-type": "text/plain"})
    assert r.status_code == 415
    r = await http.patch(
        f"{CMS}/p", content=b"{oops", headers={"content-type": "application/merge-patch+json"}
    )
    assert r.status_code == 400
    r = await http.patch(
        f"{CMS}/p", json={"op": "add"}, headers={"content-type": "application/json-patch+json"}
    )
    assert r.status_code == 400
    await http.post(ATS, json=at())
    r = await http.patch(
        f"{ATS}/example",
        json={"spec": {}},
        headers={"content-type": "application/strategic-merge-patch+json"},
    )
    assert r.status_code == 415
    r = await http.post(f"{CMS}/p", json=cm("p"))
    assert r.status_code == 405
    r = await http.get(CMS, params={"labelSelector": "a in (b"})
    assert r.status_code == 400
    r = await http.get(CMS, params={"fieldSelector": "data.x=1"})
    assert r.status_code == 400
    # kube-apiserver v1.37.2's words for a kind without field label conversions of its own
    assert (
        r.json()["message"]
        == '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'
    )
    # the real server's answer is a bare 500 (kubernetes#101350, #113939), and so is ours
    r = await http.get(CMS, params={"watch": "true", "resourceVersion": "abc"})
    assert r.status_code == 500 and "reason" not in r.json()
    r = await http.get(CMS, params={"continue": "garbage"})
    assert r.status_code == 400


async def test_server_survives_garbage(http: httpx2.AsyncClient) -> None:
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        for path in (CMS, f"{CMS}/x", f"{ATS}/x/status", "/apis", "/api/v1/namespaces/default/pods/x/scale"):
            r = await http.request(
                method, path, content=b"\xff\xfe\x00garbage", headers={"content-type": "application/json"}
            )
            assert r.status_code < 500, (method, path, r.text)
    assert (await http.get("/version")).status_code == 200
