"""A conversion webhook that answers wrongly: the 500's message is kube-apiserver's, word for word.

apiextensions-apiserver's webhook converter (`pkg/apiserver/conversion/webhook_converter.go`) words
each failure; the emulator said `returned failure:` where it says `failed:` (issue 35), and refused a
changed resourceVersion the real server silently restores. The same cases run against the emulator and,
with `make oracles`' binaries, against the real kube-apiserver, which judges the expected texts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pyscaffold_op.dev.oracles import missing_reason, oracle_bin
from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import ApiError, new_client
from pyscaffold_op.runtime.webhook import WebhookServer
from tests.envtest.test_conversion_webhook import shape_crd, v1_shape
from tests.runtime.webhook_kinds import Shape, ShapeV2

GVK = "shapes.pyop.io/v1, Kind=Shape"
Answer = Callable[[dict[str, Any]], dict[str, Any]]


def converted(obj: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    """The object as v2, with `metadata` changed."""
    spec = {"dimensions": {"width": obj["spec"].get("size", 0)}}
    return {
        **obj,
        "apiVersion": "shapes.pyop.io/v2",
        "spec": spec,
        "metadata": {**obj["metadata"], **metadata},
    }


def success(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return {"convertedObjects": objects, "result": {"status": "Success"}}


# name -> (the webhook's response for a request, the end of the message of a GET and a LIST: the real
# server puts its storage error before it, `StorageError: corrupt object, Code: 7, Key: ...`)
CASES: dict[str, tuple[Answer, str]] = {
    "failure": (
        lambda req: {"result": {"status": "Failure", "message": "no way"}},
        f"conversion webhook for {GVK} failed: no way",
    ),
    "failure-without-message": (
        lambda req: {"result": {"status": "Failure"}},
        f"conversion webhook for {GVK} failed: response.result.status was 'Failure', not 'Success'",
    ),
    "renamed": (
        lambda req: success([converted(o, name="other") for o in req["objects"]]),
        f"conversion webhook for {GVK} returned invalid object: must have the same name: s != other",
    ),
    "wrong-version": (
        lambda req: success(req["objects"]),
        f"conversion webhook for {GVK} returned invalid object at index 0: invalid groupVersion "
        "(expected shapes.pyop.io/v2, received shapes.pyop.io/v1)",
    ),
    "too-many": (
        lambda req: success([converted(o) for o in req["objects"]] * 2),
        f"conversion webhook for {GVK} returned 2 objects, expected 1",
    ),
}


class Converter:
    """A conversion endpoint whose answer the test chooses (`answer`), in a well-formed review."""

    def __init__(self) -> None:
        self.answer: Answer = lambda req: success([converted(o) for o in req["objects"]])

    async def __call__(self, body: Any) -> dict[str, Any]:
        request = body["request"]
        response = {"uid": request["uid"], **self.answer(request)}
        return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}


@pytest.fixture(
    params=[
        "emulator",
        pytest.param("real", marks=[pytest.mark.oracle, pytest.mark.slow]),
    ]
)
def real(request: pytest.FixtureRequest) -> bool:
    if request.param == "real" and (oracle_bin("kube-apiserver") is None or oracle_bin("etcd") is None):
        pytest.skip(missing_reason("kube-apiserver" if oracle_bin("kube-apiserver") is None else "etcd"))
    return bool(request.param == "real")


async def test_a_wrong_answer_is_worded_as_kube_apiserver_words_it(real: bool, tmp_path: Path) -> None:
    converter = Converter()
    server = WebhookServer(host="127.0.0.1", port=0)
    server.register("/convert", converter)
    apiserver = oracle_bin("kube-apiserver")
    assets = apiserver.parent if real and apiserver is not None else None
    async with server, Environment(kubelet=None, real=real, assets=assets) as env:
        crd = tmp_path / "shapes.yaml"
        crd.write_text(json.dumps(shape_crd(server)))
        await env.install_crds([crd])
        client = new_client(env.config)
        try:
            await client.create(
                Shape.model_validate({**v1_shape("s", 3), "metadata": {"name": "s", "namespace": "default"}})
            )
            for name, (answer, message) in CASES.items():
                converter.answer = answer
                with pytest.raises(ApiError) as got:
                    await client.get(ShapeV2, "s", namespace="default")
                assert got.value.code == 500, name
                assert _message(got.value).endswith(message), name
                with pytest.raises(ApiError) as listed:
                    await client.list(ShapeV2, namespace="default")
                assert listed.value.code == 500, name
                assert _message(listed.value).endswith(message), name
            # labels and annotations are the webhook's to change; the rest of metadata is restored
            converter.answer = lambda req: success(
                [
                    converted(o, labels={"seen": "yes"}, resourceVersion="1", generation=9)
                    for o in req["objects"]
                ]
            )
            got_v2 = await client.get(ShapeV2, "s", namespace="default")
            assert got_v2.metadata.labels == {"seen": "yes"}
            assert got_v2.metadata.generation == 1 and got_v2.metadata.resource_version != "1"
        finally:
            await client.close()


def _message(err: ApiError) -> str:
    return re.sub(r"\s+", " ", err.message)


async def test_a_list_is_converted_one_review_per_object(real: bool, tmp_path: Path) -> None:
    """kube-apiserver converts each object as a served version's storage decodes it (into its watch
    cache, as events arrive, or item by item from etcd): a webhook never gets more than one object,
    and a list of three in another version has cost three reviews. The emulator sent the list in one."""
    converter = Converter()
    reviewed: list[list[str]] = []
    answer = converter.answer

    def counting(req: dict[str, Any]) -> dict[str, Any]:
        reviewed.append([o["metadata"]["name"] for o in req["objects"]])
        return answer(req)

    converter.answer = counting
    server = WebhookServer(host="127.0.0.1", port=0)
    server.register("/convert", converter)
    apiserver = oracle_bin("kube-apiserver")
    assets = apiserver.parent if real and apiserver is not None else None
    async with server, Environment(kubelet=None, real=real, assets=assets) as env:
        crd = tmp_path / "shapes.yaml"
        crd.write_text(json.dumps(shape_crd(server)))
        await env.install_crds([crd])
        client = new_client(env.config)
        try:
            for name in ("a", "b", "c"):
                body = {**v1_shape(name, 1), "metadata": {"name": name, "namespace": "default"}}
                await client.create(Shape.model_validate(body))
            listed = await client.list(ShapeV2, namespace="default")
            assert sorted(s.metadata.name or "" for s in listed) == ["a", "b", "c"]
            assert {len(names) for names in reviewed} == {1}, reviewed
            assert {name for names in reviewed for name in names} == {"a", "b", "c"}
        finally:
            await client.close()
