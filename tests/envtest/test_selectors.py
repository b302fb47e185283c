"""Label and field selectors, limit/continue paging."""

from __future__ import annotations

import httpx2

from pyscaffold_op.envtest.server.selectors import parse_field_selector

from .conftest import cm

CMS = "/api/v1/namespaces/default/configmaps"


def test_field_selector() -> None:
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "status": {"phase": "Running"}, "spec": {}}
    allowed = ("status.phase", "spec.nodeName")
    assert parse_field_selector("status.phase=Running,metadata.namespace=ns", allowed)(pod)  # type: ignore[misc]
    assert not parse_field_selector("status.phase!=Running", allowed)(pod)  # type: ignore[misc]
    assert parse_field_selector("spec.nodeName=", allowed)(pod)  # type: ignore[misc]


async def test_selectors_over_http(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("a", labels={"app": "web"}))
    await http.post(CMS, json=cm("b", labels={"app": "db"}))
    r = await http.get(CMS, params={"labelSelector": "app in (web)"})
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["a"]
    r = await http.get(CMS, params={"labelSelector": "app in (web"})
    assert r.status_code == 400
    assert r.json()["message"] == "unable to parse requirement: found '', expected: ',' or ')'"
    r = await http.get(CMS, params={"fieldSelector": "metadata.name!=a"})
    assert [i["metadata"]["name"] for i in r.json()["items"]] == ["b"]
    r = await http.get("/api/v1/configmaps", params={"fieldSelector": "metadata.namespace=default"})
    assert len(r.json()["items"]) == 2
    r = await http.get("/api/v1/namespaces/default/pods", params={"fieldSelector": "status.phase=Running"})
    assert r.status_code == 200


async def test_limit_and_continue(http: httpx2.AsyncClient) -> None:
    for i in range(7):
        await http.post(CMS, json=cm(f"p{i}"))
    names: list[str] = []
    cont = None
    pages = 0
    while True:
        params = {"limit": "3", **({"continue": cont} if cont else {})}
        body = (await http.get(CMS, params=params)).json()
        pages += 1
        names += [i["metadata"]["name"] for i in body["items"]]
        cont = body["metadata"].get("continue")
        if not cont:
            assert "remainingItemCount" not in body["metadata"]
            break
        assert body["metadata"]["remainingItemCount"] == 7 - len(names)
    assert names == [f"p{i}" for i in range(7)] and pages == 3


async def test_continue_lists_a_consistent_snapshot(http: httpx2.AsyncClient) -> None:
    for i in range(4):
        await http.post(CMS, json=cm(f"s{i}", v=str(i)))
    first = (await http.get(CMS, params={"limit": "2"})).json()
    # writes between pages: a change, a deletion and an addition behind the cursor
    await http.patch(
        f"{CMS}/s2", json={"data": {"v": "changed"}}, headers={"content-type": "application/merge-patch+json"}
    )
    await http.delete(f"{CMS}/s3")
    await http.post(CMS, json=cm("s9"))
    second = (await http.get(CMS, params={"limit": "2", "continue": first["metadata"]["continue"]})).json()
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert [(i["metadata"]["name"], i["data"]["v"]) for i in second["items"]] == [("s2", "2"), ("s3", "3")]
    assert "continue" not in second["metadata"]
    # resourceVersionMatch=Exact reads the past too
    past = (
        await http.get(
            CMS,
            params={"resourceVersion": first["metadata"]["resourceVersion"], "resourceVersionMatch": "Exact"},
        )
    ).json()
    assert [i["metadata"]["name"] for i in past["items"]] == ["s0", "s1", "s2", "s3"]
    now = (await http.get(CMS)).json()
    assert [i["metadata"]["name"] for i in now["items"]] == ["s0", "s1", "s2", "s9"]
    r = await http.get(CMS, params={"resourceVersion": "1", "resourceVersionMatch": "Bogus"})
    assert r.status_code == 422
