"""The protobuf decoder and encoder (envtest/server/protobuf.py, protoencode.py) judged by
kube-apiserver: every built-in list it serves as protobuf must decode to the JSON it serves for the
same request and re-encode to the same bytes, and the captured schema's JSON names must be the
OpenAPI document's."""

from __future__ import annotations

import json
import lzma
import random
import shutil
import ssl
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.apiextensions.celquantity import QuantityError
from pyscaffold_op.envtest.server import protoschema as S
from pyscaffold_op.envtest.server.protobuf import ProtobufError, decode
from pyscaffold_op.envtest.server.protoencode import encode
from pyscaffold_op.envtest.server.quantity import canonical
from tests.conformance.conftest import NOT_INSTALLED, assets, have_oracle
from tests.conformance.crds import CRDS
from tests.conformance.harness import Ctx, _resolve
from tests.conformance.scenarios.builtin import KINDS
from tests.conformance.scenarios.protobuf import FULL

PROTOBUF = "application/vnd.kubernetes.protobuf"
OPENAPI = Path(__file__).resolve().parents[2] / "pyscaffold_op" / "envtest" / "server" / "_openapi.json.xz"


def _json_names(message: str) -> set[str]:
    names: set[str] = set()
    for f in S.schema().messages[message]:
        names |= _json_names(f.type) if f.inline else {f.json}
    return names


def _definition(message: str) -> str:
    return "io." + message.replace("k8s.io.", "k8s.", 1).replace("_", "-")


def test_json_names_are_the_openapi_documents() -> None:
    """Go's json tags (the schema's names) against the server's published definitions: the proto
    names differ (`ref` is `$ref`, `volumeSource` is inlined), the tags must not."""
    definitions = json.loads(lzma.decompress(OPENAPI.read_bytes()))["v2"]["definitions"]
    compared = 0
    for message in S.schema().messages:
        definition = definitions.get(_definition(message), {})
        if "properties" not in definition:
            continue
        compared += 1
        assert _json_names(message) | {"apiVersion", "kind"} == set(definition["properties"]) | {
            "apiVersion",
            "kind",
        }, message
    assert compared > 500  # every built-in kind and its parts


@pytest.mark.parametrize("obj", [*FULL, *(k.body("x") for k in KINDS)], ids=lambda o: o["kind"])
def test_encoded_bodies_decode_to_what_was_encoded(obj: dict[str, Any]) -> None:
    """The corpus' encoder and the decoder agree (the real server judges both in the corpus)."""
    decoded = decode(encode(obj))
    for key, value in obj.items():
        assert decoded[key] == value or _holds(decoded[key], value), key


def _holds(got: Any, want: Any) -> bool:
    """`got` holds `want`, Go's zero values added and its `omitempty` zero values dropped (the JSON
    kubectl would send for the Go object)."""
    if got is None and want in ("", 0, [], {}):
        return True
    if isinstance(want, str) and isinstance(got, str) and got != want and _is_quantity(want):
        return got == canonical(want)  # Quantities come back canonical (0.25 is 250m)
    if isinstance(want, dict) and isinstance(got, dict):
        return all(_holds(got.get(k), v) for k, v in want.items())
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and all(_holds(g, w) for g, w in zip(got, want, strict=True))
    return bool(got == want)


def _is_quantity(text: str) -> bool:
    try:
        canonical(text)
    except QuantityError:
        return False
    return True


class _Server:
    def __init__(self, url: str, token: str, ca_pem: bytes) -> None:
        self.url, self.token = url, token
        self.ssl = ssl.create_default_context(cadata=ca_pem.decode())

    def send(
        self, method: str, path: str, body: bytes | None = None, accept: str = "application/json"
    ) -> bytes:
        req = urllib.request.Request(self.url + path, data=body, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", accept)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, context=self.ssl, timeout=30) as resp:
                return bytes(resp.read())
        except urllib.error.HTTPError as err:
            return bytes(err.read())

    def listable(self) -> list[str]:
        groups = [("/api/v1", json.loads(self.send("GET", "/api/v1")))]
        for group in json.loads(self.send("GET", "/apis"))["groups"]:
            for version in group["versions"]:
                base = f"/apis/{version['groupVersion']}"
                groups.append((base, json.loads(self.send("GET", base))))
        return [
            f"{base}/{r['name']}"
            for base, doc in groups
            for r in doc["resources"]
            if "/" not in r["name"] and "list" in r["verbs"]
        ]


def _same_moment(server: _Server, path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The list as protobuf (decoded) and as JSON with nothing written in between (events and leases
    keep coming): the JSON read before and after must agree."""
    for _attempt in range(10):
        before = server.send("GET", path)
        raw = server.send("GET", path, accept=PROTOBUF)
        got = decode(raw)
        if server.send("GET", path) == before:
            # the emulator's answers use the same encoder: it writes the server's bytes exactly
            assert encode(got) == raw, path
            return got, json.loads(before)
    raise AssertionError(f"{path} kept changing")


@pytest.mark.oracle
def test_every_builtin_list_decodes_to_the_servers_json() -> None:
    if not have_oracle():
        pytest.skip(NOT_INSTALLED)
    from pyscaffold_op.envtest.controlplane import ControlPlane

    with ControlPlane(assets=assets()) as cp:
        server = _Server(cp.url, cp.token, cp.ca_pem)
        ns = "pb-oracle"
        server.send("POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}).encode())
        for crd in CRDS:  # CustomResourceDefinitions: JSONSchemaProps and its JSON-valued fields
            server.send(
                "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(crd).encode()
            )
        custom = tuple(f"/apis/{crd['spec']['group']}/" for crd in CRDS)
        for k in KINDS:
            server.send(
                "POST",
                _resolve(k.collection(), Ctx(ns)),
                json.dumps(_resolve(k.body("pb"), Ctx(ns))).encode(),
            )
        for obj in FULL:
            kind = next(k for k in KINDS if k.kind == obj["kind"] and k.api_version == obj["apiVersion"])
            server.send("POST", _resolve(kind.collection(), Ctx(ns)), json.dumps(obj).encode())
        kinds_with_items = 0
        for path in server.listable():
            if path.endswith("/componentstatuses") or path.startswith(custom):
                continue  # probed anew on every request, in no fixed order; custom kinds have no protobuf
            got, want = _same_moment(server, path)
            # an empty list's `items` is [] in JSON, absent in protobuf: the same Go value
            assert {**got, "items": got.get("items") or []} == want, path
            kinds_with_items += bool(want["items"])
            for item in want["items"]:  # and the encoder writes what the decoder reads back
                whole = {"apiVersion": want["apiVersion"], "kind": want["kind"].removesuffix("List"), **item}
                assert decode(encode(whole)) == whole, path
        assert kinds_with_items > 30  # the corpus' kinds and the server's own objects


def test_mangled_bodies_are_errors_not_crashes() -> None:
    """Every byte string decodes or raises ProtobufError (a 400): truncations, flipped bytes and
    spliced fields of real bodies, seeded so a failure replays."""
    rng = random.Random(25)
    bodies = [encode(obj) for obj in FULL]
    outcomes = {"decoded": 0, "refused": 0}
    for _ in range(3000):
        body = bytearray(rng.choice(bodies))
        for _edit in range(rng.randint(1, 4)):
            at = rng.randrange(4, len(body))
            choice = rng.random()
            if choice < 0.4:
                body[at] = rng.randrange(256)
            elif choice < 0.7:
                del body[at : at + rng.randint(1, 8)]
            else:
                body[at:at] = rng.randbytes(rng.randint(1, 6))
        try:
            decode(bytes(body))
            outcomes["decoded"] += 1
        except ProtobufError:
            outcomes["refused"] += 1
    assert outcomes["decoded"] and outcomes["refused"]  # both kinds of body were met


def test_nesting_past_the_stack_is_an_error() -> None:
    """JSONSchemaProps nest without bound in protobuf; Go decodes them, Python's stack cannot."""
    props: dict[str, Any] = {"type": "object"}
    for _ in range(3000):
        props = {"type": "object", "properties": {"a": props}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "deep"},
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": props}}]},
    }
    with pytest.raises(ProtobufError, match="exceeded max depth"):
        decode(_encode_deep(crd))


def _encode_deep(obj: dict[str, Any]) -> bytes:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(50_000)  # the encoder recurses too: only the decoder is under test
    try:
        return encode(obj)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.oracle
def test_committed_schema_is_the_capture_of_the_pinned_modules() -> None:
    """`_protobuf.json.xz` is what dev/proto_capture.py reads from the Go module cache now."""
    from pyscaffold_op.dev import proto_capture

    if shutil.which("go") is None:
        pytest.skip("go is not installed (the capture reads its module cache)")
    try:
        captured = proto_capture.capture()
    except FileNotFoundError as err:
        pytest.skip(f"the pinned modules are not in the Go module cache: {err}")
    committed = json.loads(lzma.decompress(proto_capture.OUT.read_bytes()))
    assert captured == committed
