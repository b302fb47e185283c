"""Hostile request bodies: the emulator answers like kube-apiserver (400/413), never expands, never 500s."""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable

import httpx2
import pytest

from pyscaffold_op.envtest import Environment
from pyscaffold_op.envtest.server.decode import MAX_BODY, MAX_DEPTH, MAX_OBJECT_DEPTH, decode_body
from pyscaffold_op.envtest.status import StatusError

from .conftest import ATS, CMS

YAML = {"content-type": "application/yaml"}
JSON = {"content-type": "application/json"}

# The 357-byte probe of issue 17: nine levels of nine aliases, 9^9 "lol"s once expanded.
LAUGHS = b"""apiVersion: v1
kind: ConfigMap
metadata: {name: laughs}
a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def _nested_json(depth: int) -> bytes:
    """A ConfigMap whose `junk` field holds objects nested so the whole body is `depth` deep."""
    inner = depth - 1
    return (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"junk":'
        + b'{"a":' * inner
        + b'"x"'
        + b"}" * inner
        + b"}"
    )


async def test_billion_laughs_is_refused_not_expanded(http: httpx2.AsyncClient, env: Environment) -> None:
    assert len(LAUGHS) < 400
    r = await http.post(CMS, content=LAUGHS, headers=YAML)
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["reason"] == "BadRequest"
    assert body["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): "
        "yaml: document contains excessive aliasing ("
    )
    assert env.store.find(("", "configmaps"), "default", "laughs") is None


async def test_small_alias_use_still_works(http: httpx2.AsyncClient) -> None:
    doc = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: anchors
  labels: &labels {app: web, tier: front}
  annotations: *labels
data: {a: "1"}
"""
    r = await http.post(CMS, content=doc, headers=YAML)
    assert r.status_code == 201, r.text
    assert r.json()["metadata"]["annotations"] == {"app": "web", "tier": "front"}


async def test_aliases_expanding_past_the_body_limit_are_413(http: httpx2.AsyncClient) -> None:
    # enough plain nodes keep go-yaml's alias ratio satisfied, but the expansion passes 3 MiB
    plain = ", ".join(f"k{i}: {'v' * 2000}" for i in range(100))
    doc = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: wide}\n"
        f"data: &d {{{plain}}}\n"
        "x: &x [" + ", ".join(["*d"] * 20) + "]\n"
    ).encode()
    assert len(doc) < 256 * 1024
    r = await http.post(CMS, content=doc, headers=YAML)
    assert r.status_code == 413, r.text
    assert r.json()["message"] == f"Request entity too large: limit is {MAX_BODY}"


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 10_000, 100_000])
async def test_deep_json_is_400(http: httpx2.AsyncClient, env: Environment, depth: int) -> None:
    r = await http.post(CMS, content=_nested_json(depth), headers=JSON)
    assert r.status_code == 400, r.text[:300]
    assert "json parse error: exceeded max depth" in r.json()["message"]
    assert env.store.find(("", "configmaps"), "default", "deep") is None


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10_000])
async def test_deep_yaml_is_400(http: httpx2.AsyncClient, depth: int) -> None:
    flow = b"metadata: {name: flow}\njunk: " + b"[" * depth + b"]" * depth + b"\n"
    r = await http.post(CMS, content=flow, headers=YAML)
    assert r.status_code == 400, r.text[:300]
    assert f"yaml: exceeded max depth of {MAX_DEPTH}" in r.json()["message"]
    block = b"metadata: {name: block}\njunk:\n" + b"".join(
        b"  " * (i + 1) + b"- \n" for i in range(depth // 10)
    )
    if depth // 10 > MAX_DEPTH:
        r = await http.post(CMS, content=block, headers=YAML)
        assert r.status_code in (400, 413), r.text[:300]


async def test_deep_patch_bodies_are_400(http: httpx2.AsyncClient) -> None:
    r = await http.post(CMS, json={"metadata": {"name": "p"}, "data": {"a": "1"}})
    assert r.status_code == 201
    deep = b'{"data":' + b"[" * 5_000 + b"]" * 5_000 + b"}"
    for ctype in ("application/merge-patch+json", "application/strategic-merge-patch+json"):
        r = await http.patch(f"{CMS}/p", content=deep, headers={"content-type": ctype})
        assert r.status_code == 400, (ctype, r.text[:300])
    r = await http.patch(
        f"{CMS}/p", content=b"[" * 5_000, headers={"content-type": "application/json-patch+json"}
    )
    assert r.status_code == 400


async def test_custom_resource_at_the_depth_limit_round_trips(http: httpx2.AsyncClient) -> None:
    """Everything under the limit goes through every verb: create, read, watch, patch, apply, and
    a client sending back the object it read (managedFields nest deeper than the fields)."""
    inner = MAX_OBJECT_DEPTH - 2  # under the object and its spec
    extra: object = "leaf"
    for _ in range(inner):
        extra = {"n": extra}
    obj = {
        "apiVersion": "cnat.programming-kubernetes.info/v1alpha1",
        "kind": "At",
        "metadata": {"name": "deep"},
        "spec": {"schedule": "2026-12-02T15:00:00Z", "command": "echo", "extra": extra},
    }
    r = await http.post(ATS, json=obj)
    assert r.status_code == 201, r.text[:300]
    assert (await http.get(f"{ATS}/deep")).json()["spec"]["extra"] == extra
    assert (await http.get(ATS)).status_code == 200
    async with http.stream("GET", ATS, params={"watch": "true", "timeoutSeconds": "1"}) as w:
        assert w.status_code == 200
        lines = [line async for line in w.aiter_lines() if line]
    assert len(lines) == 1
    r = await http.patch(
        f"{ATS}/deep",
        json={"metadata": {"labels": {"a": "b"}}},
        headers={"content-type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text[:300]
    r = await http.patch(
        f"{ATS}/deep",
        params={"fieldManager": "probe"},
        json=obj,
        headers={"content-type": "application/apply-patch+yaml"},
    )
    assert r.status_code == 200, r.text[:300]
    r = await http.put(f"{ATS}/deep", json={**obj, "metadata": r.json()["metadata"]})
    assert r.status_code == 200, r.text[:300]
    deeper = {**obj, "metadata": {"name": "deeper"}, "spec": {**obj["spec"], "extra": {"n": extra}}}
    r = await http.post(ATS, json=deeper)
    assert r.status_code == 400, r.text[:300]
    assert "exceeded max depth" in r.json()["message"]


def _peak_of(decode: Callable[[], object]) -> tuple[int, int, BaseException | None]:
    """(bytes allocated at the peak, Python calls made, the exception raised) while `decode` runs: the
    work a body costs, counted, not timed."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    raised: BaseException | None = None
    tracemalloc.start()
    sys.setprofile(count)
    try:
        decode()
    except Exception as err:
        raised = err
    finally:
        sys.setprofile(None)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak, calls, raised


def _aliased_string(name: str, size: int, aliases: int) -> bytes:
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata:\n  a: &s {'x' * size}\n"
        + "".join(f"  k{i}: *s\n" for i in range(aliases))
    ).encode()


def test_a_large_string_aliased_is_refused_before_it_is_built() -> None:
    # Before: PyYAML shares an aliased scalar, go-yaml's node ratio never counts it (100 aliases), so a
    # 2 MiB string aliased 100 times was built and stored as a 202 MB ConfigMap (+407 MB RSS).
    body = _aliased_string("big", 2 * 1024 * 1024, 100)
    peak, calls, raised = _peak_of(lambda: decode_body(body, True, "ConfigMap"))
    assert isinstance(raised, StatusError) and raised.code == 413, raised
    assert peak < 4 * len(body)  # the body and its scalar, never the expansion
    assert calls < 5_000  # libyaml scans the 2 MiB scalar; the pure-Python scanner made ~10^7 calls


@pytest.mark.parametrize(
    "body",
    [
        b"metadata: {name: flow}\njunk: " + b"[" * 1_500_000 + b"]" * 1_500_000 + b"\n",
        b"metadata: {name: flow}\njunk: " + b"{a: " * 700_000 + b"}" * 700_000 + b"\n",
        b"metadata: {name: block}\njunk:\n" + b"".join(b" " * (i + 1) + b"- \n" for i in range(2_400)),
        b"metadata: {name: block}\njunk:\n" + b"".join(b" " * (i + 1) + b"a:\n" for i in range(2_400)),
    ],
    ids=["flow-seq", "flow-map", "block-seq", "block-map"],
)
def test_deep_yaml_is_refused_after_a_bounded_prefix(body: bytes) -> None:
    # Before: the depth check ran once PyYAML's scanner (quadratic on open flow levels) and composer
    # had worked through the body: 0.6-2.7 s with the server blocked.
    peak, calls, raised = _peak_of(lambda: decode_body(body, True, "ConfigMap"))
    assert isinstance(raised, StatusError) and raised.code == 400, raised
    assert f"yaml: exceeded max depth of {MAX_DEPTH}" in str(raised)
    assert calls < 20 * MAX_DEPTH  # a few calls per level up to the limit, nothing per byte
    assert peak < 2 * len(body) + (1 << 20)


def test_nesting_through_aliases_counts() -> None:
    half = MAX_DEPTH // 2 + 1
    doc = ("a: &a " + "[" * half + "]" * half + "\nb: " + "[" * half + "*a" + "]" * half + "\n").encode()
    with pytest.raises(StatusError, match=f"exceeded max depth of {MAX_DEPTH}"):
        decode_body(doc, True, "ConfigMap")
    ok = MAX_DEPTH // 2 - 2
    doc = ("a: &a " + "[" * ok + "]" * ok + "\nb: " + "[" * ok + "*a" + "]" * ok + "\n").encode()
    assert decode_body(doc, True, "ConfigMap")["b"] is not None


def test_an_anchor_that_contains_itself_is_400() -> None:
    with pytest.raises(StatusError, match="yaml: anchor 'a' value contains itself") as err:
        decode_body(b"a: &a [x, *a]\n", True, "ConfigMap")
    assert err.value.code == 400


async def test_server_side_apply_of_aliases_is_refused_bounded(
    http: httpx2.AsyncClient, env: Environment
) -> None:
    # Before: 990 aliases through server-side apply stalled the server 45 s and took +5.9 GB.
    body = _aliased_string("ssa", 64 * 1024, 990)
    tracemalloc.start()
    try:
        r = await http.patch(
            f"{CMS}/ssa",
            content=body,
            params={"fieldManager": "probe"},
            headers={"content-type": "application/apply-patch+yaml"},
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.status_code == 413, r.text[:300]
    assert r.json()["message"] == f"Request entity too large: limit is {MAX_BODY}"
    assert peak < 16 * 1024 * 1024  # the expansion would be 63 MiB as a string, more as objects
    assert env.store.find(("", "configmaps"), "default", "ssa") is None
    r = await http.post(CMS, content=_aliased_string("fine", 1024, 100), headers=YAML)
    assert r.status_code == 201, r.text[:300]  # 100 KiB expanded: under the limit, stored
    assert r.json()["data"]["k99"] == "x" * 1024
