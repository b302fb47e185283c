"""Protobuf answers (envtest/server/protoanswer.py): the emulator answers `Accept:
application/vnd.kubernetes.protobuf` as kube-apiserver does. The real server judges the bytes in the
conformance corpus (tests/conformance/scenarios/protobuf_answers.py); these run without it, on bytes
kube-apiserver v1.37 wrote (captured once) and on the emulator's own answers."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest.server.protoanswer import _clauses
from pyscaffold_op.envtest.server.protobuf import decode
from pyscaffold_op.envtest.server.protoencode import encode, watch_frame
from pyscaffold_op.envtest.server.protowire import fields
from tests.envtest.conftest import ATS, at, cm

PB = "application/vnd.kubernetes.protobuf"
CMS = "/api/v1/namespaces/default/configmaps"

# kube-apiserver's answers to `GET .../configmaps/a` and to a missing one, `Accept: protobuf`
REAL_CONFIGMAP = (
    b'k8s\x00\n\x0f\n\x02v1\x12\tConfigMap\x12\xce\x01\n\xc3\x01\n\x01a\x12\x00\x1a\x01p"\x00*$5d32c347-e00f'
    b"-4afa-b2e5-3a575156c4562\x032228\x00B\x08\x08\xce\xeb\xda\xd8\x06\x10\x00Z\x06\n\x01x\x12\x01y\x8a\x01w\n"
    b'\x07unknown\x12\x06Update\x1a\x02v1"\x08\x08\xce\xeb\xda\xd8\x06\x10\x002\x08FieldsV1:J\nH{"f:data":'
    b'{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}B\x00\x12\x06\n\x01k\x12\x01v\x1a\x00"\x00'
)
REAL_NOT_FOUND = (
    b"k8s\x00\n\x0c\n\x02v1\x12\x06Status\x12[\n\x06\n\x00\x12\x00\x1a\x00\x12\x07Failure\x1a\x1econfigmaps "
    b'"missing" not found"\x08NotFound*\x1b\n\x07missing\x12\x00\x1a\nconfigmaps(\x002\x000\x94\x03'
    b'\x1a\x00"\x00'
)


@pytest.mark.parametrize("raw", [REAL_CONFIGMAP, REAL_NOT_FOUND], ids=["configmap", "status"])
def test_encoder_writes_the_real_servers_bytes(raw: bytes) -> None:
    assert encode(decode(raw)) == raw


def test_zero_values_are_written_as_gogo_writes_them() -> None:
    """Non-pointer fields even when zero (`generateName: ""`), no nil pointer (`immutable`)."""
    raw = encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    assert b"\n\x01a\x12\x00\x1a\x00" in raw  # name, then the empty generateName and namespace
    assert b"B\x00" in raw  # the zero creationTimestamp: an empty Time
    assert b" " not in raw  # field 4 (immutable, a pointer) absent


@pytest.mark.parametrize(
    ("accept", "order"),
    [
        (f"{PB},application/json", [PB, "application/json"]),
        (f"{PB};q=0.5,application/json", ["application/json", PB]),
        (f"*/*,{PB};q=0.9", [PB, "*/*"]),  # goautoneg's comparator: concrete first, whatever q
        (f"*/*,{PB}", [PB, "*/*"]),  # equal q: the concrete type first
    ],
)
def test_ranges_by_preference(accept: str, order: list[str]) -> None:
    assert [c[0] for c in _clauses(accept)] == order


async def _get(http: httpx2.AsyncClient, path: str, accept: str) -> httpx2.Response:
    return await http.get(path, headers={"Accept": accept})


async def test_get_list_and_errors_in_protobuf(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("a", k="v"))
    as_json = (await http.get(CMS + "/a")).json()
    got = await _get(http, CMS + "/a", PB)
    assert got.headers["content-type"] == PB
    assert decode(got.content) == as_json
    listed = await _get(http, CMS, f"{PB},application/json")
    assert decode(listed.content)["items"][0]["metadata"]["name"] == "a"
    missing = await _get(http, CMS + "/missing", PB)
    assert missing.status_code == 404
    assert decode(missing.content)["reason"] == "NotFound"


async def test_json_when_preferred_or_no_protobuf_form(http: httpx2.AsyncClient) -> None:
    await http.post(CMS, json=cm("a"))
    assert (await _get(http, CMS + "/a", f"{PB};q=0.5,application/json")).json()["kind"] == "ConfigMap"
    # as=Table has no protobuf form: the next range, the plain object
    got = await _get(http, CMS + "/a", f"{PB};as=Table;v=v1;g=meta.k8s.io,application/json")
    assert got.json()["kind"] == "ConfigMap"
    refused = await _get(http, CMS + "/a", f"{PB};as=Table;v=v1;g=meta.k8s.io")
    assert (refused.status_code, refused.headers["content-type"]) == (406, "application/json")


async def test_custom_resources_have_no_protobuf_form(http: httpx2.AsyncClient) -> None:
    await http.post(ATS, json=at("x"))
    assert (await _get(http, ATS + "/x", f"{PB},application/json")).json()["kind"] == "At"
    refused = await _get(http, ATS + "/x", PB)
    assert refused.status_code == 406
    assert decode(refused.content)["reason"] == "NotAcceptable"  # the refusal itself is protobuf
    meta = await _get(http, ATS + "/x", f"{PB};as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
    assert decode(meta.content)["kind"] == "PartialObjectMetadata"


def _frames(data: bytes) -> list[tuple[str, dict[str, Any], bytes]]:
    out = []
    while data:
        size = int.from_bytes(data[:4], "big")
        frame, data = data[4 : 4 + size], data[4 + size :]
        values = dict((n, bytes(v)) for n, _w, v in fields(frame, "WatchEvent"))  # type: ignore[arg-type]
        raw = dict((n, bytes(v)) for n, _w, v in fields(values[2], "RawExtension"))  # type: ignore[arg-type]
        out.append((values[1].decode(), decode(raw[1]), size.to_bytes(4, "big") + frame))
    return out


async def test_watch_is_length_prefixed_watch_events(http: httpx2.AsyncClient) -> None:
    created = (await http.post(CMS, json=cm("a", k="v"))).json()
    await http.delete(CMS + "/a")
    rv = created["metadata"]["resourceVersion"]
    params = {"watch": "true", "resourceVersion": rv, "timeoutSeconds": "1"}
    async with http.stream("GET", CMS, params=params, headers={"Accept": PB}) as r:
        assert r.headers["content-type"] == PB + ";stream=watch"
        data = b"".join([chunk async for chunk in r.aiter_bytes()])
    events = _frames(data)
    assert [(t, o["metadata"]["name"]) for t, o, _f in events] == [("DELETED", "a")]
    kind, obj, frame = events[0]
    assert watch_frame(kind, obj) == frame
