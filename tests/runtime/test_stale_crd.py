"""Issue 27: a CRD in the cluster older than the Python types (a field required since `make install`)
is one clear log line per failed reconcile, naming the kind, the object, the field and `make install`,
with no traceback (it was 342 lines of tracebacks in 4 s)."""

from __future__ import annotations

import logging

import pytest

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, KubeModel
from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Request
from pyscaffold_op.runtime.objects.kinds import ObjectDecodeError, info_for
from pyscaffold_op.testing import eventually

from .conftest import make_manager
from .widgets import widget


class NewerWidgetSpec(KubeModel):
    size: int = 1
    owner: str  # added to the types, not yet to the CRD the cluster has


class NewerWidget(CustomResource):
    gvk = GroupVersionKind("test.pyop.io", "v1", "Widget")
    spec: NewerWidgetSpec


def test_decode_names_the_kind_the_object_the_field_and_make_install() -> None:
    raw = b'{"apiVersion": "test.pyop.io/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"},'
    raw += b' "spec": {"size": 2}}'
    with pytest.raises(ObjectDecodeError) as err:
        info_for(NewerWidget).decode(raw)
    assert str(err.value) == (
        f"Widget ns/w from the API server does not fit {__name__}.NewerWidget: spec.owner: Field required; "
        "the CRD in the cluster may be older than the types: run make install (in tests: make manifests)"
    )


async def test_a_stale_crd_is_one_line_per_retry_without_traceback(
    env: Environment, api: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="pyscaffold_op.runtime.controller")  # a traceback at debug only
    mgr = make_manager(env)

    async def reconcile(request: Request) -> None:
        await mgr.client.get(NewerWidget, request.name, namespace=request.namespace)

    mgr.builder().for_(NewerWidget).complete(reconcile)
    async with mgr.running():
        await api.create(widget("w1", size=4))

        async def failed_twice() -> bool:
            return sum(r.msg == "Reconciler error" for r in caplog.records) >= 2

        await eventually(failed_twice)
    errors = [r for r in caplog.records if r.msg == "Reconciler error"]
    assert all(r.exc_info is None for r in errors)
    assert errors[0].error.startswith("Widget default/w1 from the API server does not fit")  # type: ignore[attr-defined]
    assert "spec.owner: Field required" in errors[0].error  # type: ignore[attr-defined]
    assert "run make install" in errors[0].error  # type: ignore[attr-defined]
