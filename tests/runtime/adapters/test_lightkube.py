"""The lightkube adapter (pyscaffold_op.runtime.adapters.lightkube, extra [lightkube]): lightkube's
models, generic resources, KubeConfig and errors in the runtime, and the clear errors when pyop's and
lightkube's models are mixed. Moved here from the runtime's tests when lightkube left the runtime."""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx
import pydantic
import pytest
from lightkube.models.core_v1 import Container as LightkubeContainer
from lightkube.models.core_v1 import PodSpec as LightkubePodSpec
from lightkube.models.meta_v1 import ObjectMeta as LightkubeMeta
from lightkube.resources.core_v1 import ConfigMap as LightkubeConfigMap
from lightkube.resources.core_v1 import Namespace as LightkubeNamespace
from lightkube.resources.core_v1 import Pod as LightkubePod

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.envtest import Environment
from pyscaffold_op.models.apps_v1 import Deployment
from pyscaffold_op.models.core_v1 import ConfigMap, Pod
from pyscaffold_op.runtime import (
    Client,
    NotFound,
    Request,
    RestConfig,
    controllerutil,
    objmeta,
)
from pyscaffold_op.runtime.adapters.lightkube import MixedModelsError, from_exception
from pyscaffold_op.testing import eventually

from ..conftest import make_manager
from ..test_units import owned_widget
from ..widgets import Widget, widget


async def _true(v: bool) -> bool:
    return v


async def test_pyop_meta_inside_a_lightkube_object_fails_at_once_naming_the_fix(api: Client) -> None:
    owner = await api.create(widget("mix"))
    pod = LightkubePod(
        metadata=ObjectMeta(name="p", namespace="default"),  # type: ignore[arg-type]
        spec=LightkubePodSpec(containers=[LightkubeContainer(name="c", image="busybox")]),
    )
    with pytest.raises(MixedModelsError, match=r"pyscaffold_op\.models\.core_v1\.Pod"):
        controllerutil.set_controller_reference(owner, pod)
    with pytest.raises(MixedModelsError, match=r"pyscaffold_op\.models"):
        await api.create(pod)
    # nested deeper than metadata: refused when encoding, before any request is sent
    cm = LightkubeConfigMap(metadata=LightkubeMeta(name="x"), data=ObjectMeta(name="oops"))  # type: ignore[arg-type]
    with pytest.raises(MixedModelsError, match="typed models"):
        await api.create(cm)


def test_lightkube_meta_inside_a_typed_model_fails_at_once_naming_the_fix() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"pyscaffold_op\.apimachinery\.ObjectMeta"):
        Pod(metadata=LightkubeMeta(name="p"))  # type: ignore[arg-type]
    with pytest.raises(pydantic.ValidationError, match="lightkube"):
        Deployment.model_validate({"metadata": LightkubeMeta(name="d")})


async def test_lightkube_models_keep_working(api: Client) -> None:
    cm = LightkubeConfigMap(metadata=LightkubeMeta(name="lk", namespace="default"), data={"a": "b"})
    await api.create(cm)
    assert (await api.get(LightkubeConfigMap, "lk", "default")).data == {"a": "b"}
    # and the same object read as a typed model
    assert (await api.get(ConfigMap, "lk", "default")).metadata.name == "lk"


def test_httpx_status_errors_map_by_code() -> None:
    req = httpx.Request("GET", "http://x/api")
    resp = httpx.Response(
        404, request=req, content=b"<html>nope</html>", headers={"Content-Type": "text/html"}
    )
    mapped = from_exception(httpx.HTTPStatusError("x", request=req, response=resp))
    assert isinstance(mapped, NotFound)
    other = ValueError("x")
    assert from_exception(other) is other


def test_objmeta_on_pydantic_lightkube_and_dict() -> None:
    pod = LightkubePod(
        metadata=LightkubeMeta(name="p", namespace="n", labels={"a": "b"}, resourceVersion="7")
    )
    w = widget("w", "n", app="x")
    d = {"metadata": {"name": "d", "namespace": "n", "generation": 3}}
    assert objmeta.key(pod) == "n/p" and objmeta.resource_version(pod) == "7"
    assert objmeta.labels(w) == {"app": "x"} and objmeta.generation(d) == 3
    assert objmeta.key(LightkubeNamespace(metadata=LightkubeMeta(name="x"))) == "x"


def test_set_controller_reference_on_pydantic_and_lightkube() -> None:
    owner = owned_widget("u1")
    child = widget("child")
    controllerutil.set_controller_reference(owner, child)
    ref = child.metadata.owner_references[0]
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == (
        "test.pyop.io/v1",
        "Widget",
        "owner",
        "u1",
        True,
        True,
    )
    controllerutil.set_controller_reference(owner, child)  # idempotent
    assert len(child.metadata.owner_references) == 1
    pod = LightkubePod(metadata=LightkubeMeta(name="p", namespace="default"))
    controllerutil.set_controller_reference(owner, pod)
    assert pod.metadata.ownerReferences[0].controller is True
    assert pod.to_dict()["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True


async def test_lightkube_generic_resources_work_too(env: Environment, api: Client) -> None:
    from lightkube.generic_resource import create_namespaced_resource

    GenericWidget = create_namespaced_resource("test.pyop.io", "v1", "Widget", "widgets")
    obj = GenericWidget({"metadata": {"name": "gen", "namespace": "default"}, "spec": {"size": 3}})
    await api.create(obj)
    assert obj["metadata"]["uid"]
    got = await api.get(GenericWidget, "gen")
    assert got["spec"]["size"] == 3
    controllerutil.add_finalizer(got, "x.io/f")
    await api.update(got)
    assert (await api.get(Widget, "gen")).metadata.finalizers == ["x.io/f"]

    async def seen(req: Request) -> None:
        names.append(req.name)

    names: list[str] = []
    mgr = make_manager(env)
    mgr.builder().for_(GenericWidget).named("generic").complete(seen)
    async with mgr.running():
        await eventually(lambda: _true(names == ["gen"]))
        cached = await mgr.client.get(GenericWidget, "gen")
        assert cached["metadata"]["finalizers"] == ["x.io/f"]


def test_lightkube_config_is_converted_when_lightkube_is_installed(tmp_path: Path) -> None:
    lightkube = pytest.importorskip("lightkube")
    from lightkube.config.models import Cluster, User

    from pyscaffold_op.runtime.client.restconfig import as_rest_config

    config = lightkube.KubeConfig.from_one(
        cluster=Cluster(server="https://lk:6443", certificate_auth="ca.crt"),
        user=User(token="lk-token"),
        namespace="ns",
        fname=tmp_path / "kubeconfig",
    )
    cfg = as_rest_config(config)
    assert isinstance(cfg, RestConfig)
    assert (cfg.server, cfg.token, cfg.namespace) == ("https://lk:6443", "lk-token", "ns")
    assert cfg.ca_file == str(tmp_path / "ca.crt")
    with pytest.raises(TypeError, match="expected a RestConfig"):
        as_rest_config({"server": "x"})
