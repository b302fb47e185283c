"""Query parameters and media types the real server refuses are refused the same way, before any write."""

from __future__ import annotations

import httpx2

from pyscaffold_op.envtest import Environment

from .conftest import ATS, CMS


def _cm(name: str, **extra: object) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}, **extra}


async def test_bogus_dry_run_is_422_and_writes_nothing(http: httpx2.AsyncClient, env: Environment) -> None:
    r = await http.post(CMS, params={"dryRun": "Bogus"}, json=_cm("dry"))
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["reason"] == "Invalid"
    assert body["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: '
        'supported values: "All"'
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: []string{"Bogus"}: supported values: "All"',
            "field": "dryRun",
        }
    ]
    assert env.store.find(("", "configmaps"), "default", "dry") is None
    assert (await http.post(CMS, params={"dryRun": "All"}, json=_cm("dry"))).status_code == 201
    assert env.store.find(("", "configmaps"), "default", "dry") is None

    assert (await http.post(CMS, json=_cm("real"))).status_code == 201
    r = await http.put(f"{CMS}/real", params={"dryRun": ["All", "Bogus"]}, json=_cm("real", data={"a": "2"}))
    assert r.status_code == 422
    assert r.json()["message"].startswith('UpdateOptions.meta.k8s.io "" is invalid: dryRun: ')
    assert '[]string{"All", "Bogus"}' in r.json()["message"]
    merge = {"content-type": "application/merge-patch+json"}
    r = await http.patch(f"{CMS}/real", params={"dryRun": "Bogus"}, json={"data": {"a": "3"}}, headers=merge)
    assert r.status_code == 422 and r.json()["details"]["kind"] == "PatchOptions"
    r = await http.delete(f"{CMS}/real", params={"dryRun": "Bogus"})
    assert r.status_code == 422 and r.json()["details"]["kind"] == "DeleteOptions"
    stored = env.store.find(("", "configmaps"), "default", "real")
    assert stored is not None and stored["data"] == {"a": "1"}


async def test_bogus_field_validation_is_422(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, params={"fieldValidation": "Bogus"}, json=_cm("fv"))
    assert r.status_code == 422
    assert r.json()["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )
    for mode in ("Ignore", "Warn", "Strict", ""):
        r = await http.post(CMS, params={"fieldValidation": mode}, json=_cm(f"fv{mode.lower()}"))
        assert r.status_code == 201, (mode, r.text)


async def test_media_types(http: httpx2.AsyncClient, env: Environment) -> None:
    body = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"}}'
    r = await http.post(CMS, content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 415
    assert r.json()["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    r = await http.post(ATS, content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 415
    assert r.json()["message"].endswith("include: application/json, application/yaml")
    # 415 comes before the options are looked at, as in the server's handlers
    r = await http.post(CMS, params={"dryRun": "Bogus"}, content=body, headers={"content-type": "text/plain"})
    assert r.status_code == 415
    # NegotiateInputSerializer takes a missing Content-Type as the first supported one, JSON
    req = http.build_request("POST", CMS, content=body)
    assert "content-type" not in req.headers
    r = await http.send(req)
    assert r.status_code == 201, r.text
    assert env.store.find(("", "configmaps"), "default", "plain") is not None
    # a patch names its type: without one it is 415
    req = http.build_request("PATCH", f"{CMS}/plain", content=b'{"data":{"a":"b"}}')
    assert (await http.send(req)).status_code == 415


async def test_label_selector_syntax(http: httpx2.AsyncClient) -> None:
    r = await http.get(CMS, params={"labelSelector": "a===b"})
    assert r.status_code == 400
    assert r.json()["message"] == "unable to parse requirement: found '=', expected: identifier"
    r = await http.get(CMS, params={"labelSelector": "a==!b"})
    assert r.status_code == 400
    assert r.json()["message"] == "unable to parse requirement: found '!', expected: identifier"
    for ok in ("a==b", "a=b,c!=d", "a in (x,y)", "!a", "a", "a=", "a.b/c=d-e_f.g"):
        r = await http.get(CMS, params={"labelSelector": ok})
        assert r.status_code == 200, (ok, r.text)


async def test_malformed_resource_version_on_list_and_watch(http: httpx2.AsyncClient) -> None:
    """A watch gets the storage layer's bare 500 (no reason) from strconv.ParseUint, kubernetes#101350;
    a list names it a bad request (both checked against kube-apiserver v1.37.2)."""
    parse_error = 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    r = await http.get(CMS, params={"watch": "true", "resourceVersion": "abc"})
    assert r.status_code == 500
    assert r.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": parse_error,
        "code": 500,
    }
    r = await http.get(CMS, params={"resourceVersion": "abc"})
    assert (r.status_code, r.json()["reason"]) == (400, "BadRequest")
    assert r.json()["message"] == f"invalid resource version: {parse_error}"
    r = await http.get(CMS, params={"resourceVersion": "99999999999999999999"})
    assert r.status_code == 400 and r.json()["message"].endswith("value out of range")
    for good in ("", "0", "1"):
        assert (await http.get(CMS, params={"resourceVersion": good})).status_code == 200


async def test_unknown_fields_of_builtins_are_dropped(http: httpx2.AsyncClient, env: Environment) -> None:
    r = await http.post(
        CMS, json={**_cm("warned"), "junk": {"x": 1}, "metadata": {"name": "warned", "bogus": 1}}
    )
    assert r.status_code == 201
    # in the order of the document, as the server's decoder meets them
    assert (
        r.headers["warning"] == '299 - "unknown field \\"metadata.bogus\\"", 299 - "unknown field \\"junk\\""'
    )
    stored = env.store.find(("", "configmaps"), "default", "warned")
    assert stored is not None and "junk" not in stored and "bogus" not in stored["metadata"]
    assert "junk" not in (await http.get(f"{CMS}/warned")).json()

    r = await http.post(CMS, params={"fieldValidation": "Ignore"}, json={**_cm("ignored"), "junk": 1})
    assert r.status_code == 201 and "warning" not in r.headers
    ignored = env.store.find(("", "configmaps"), "default", "ignored")
    assert ignored is not None and "junk" not in ignored

    r = await http.post(CMS, params={"fieldValidation": "Strict"}, json={**_cm("strict"), "junk": 1})
    assert r.status_code == 400
    assert r.json()["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        'strict decoding error: unknown field "junk"'
    )
    current = (await http.get(f"{CMS}/warned")).json()
    r = await http.put(f"{CMS}/warned", json={**current, "extra": "x"})
    assert r.status_code == 200 and "extra" not in r.json()
    assert r.headers["warning"] == '299 - "unknown field \\"extra\\""'
