"""kopf's examples/02-children on pyop: a Pod per KopfExample, owned by it, listed in its status.

kopf's `@kopf.on.create` runs once; this reconcile runs for any change and makes the state right:
the Pod exists (found by its label, created if missing), and `status.children` names it.

    python examples/kopf/children.py --kubeconfig ~/.kube/config
"""

from __future__ import annotations

import sys

from kopfexample import KopfExample, KopfExampleStatus

from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.models.core_v1 import Container, EnvVar, Pod, PodSpec
from pyscaffold_op.runtime import (
    Client,
    Manager,
    ManagerFlags,
    NotFound,
    Request,
    controllerutil,
    run_manager,
)

OWNER = "kopf.dev/example"  # the label that finds an example's Pods


class ChildrenReconciler:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def reconcile(self, request: Request) -> None:
        try:
            kex = await self.client.get(KopfExample, request.name, namespace=request.namespace)
        except NotFound:
            return  # deleted: the garbage collector deletes its Pods
        if kex.metadata.deletion_timestamp is not None:
            return  # going away: no new children
        pods = await self.client.list(Pod, namespace=request.namespace, labels={OWNER: request.name})
        if not pods:
            pods = [await self.client.create(child_pod(kex))]
        children = sorted(p.metadata.uid for p in pods if p.metadata.uid)
        if kex.status is None or kex.status.children != children:
            kex.status = KopfExampleStatus(children=children)
            await self.client.status().update(kex)


def child_pod(kex: KopfExample) -> Pod:
    field = kex.spec.field or "default-value"
    pod = Pod(
        metadata=ObjectMeta(labels={OWNER: kex.metadata.name or ""}),
        spec=PodSpec(
            containers=[
                Container(
                    name="the-only-one",
                    image="busybox",
                    command=["sh", "-x", "-c"],
                    args=[f'echo "FIELD=$FIELD"\nsleep {kex.spec.duration or 0}\n'],
                    env=[EnvVar(name="FIELD", value=field)],
                )
            ]
        ),
    )
    controllerutil.adopt(kex, pod)  # kopf.adopt: namespace, owner's labels, generateName, owner reference
    return pod


def setup(mgr: Manager, flags: ManagerFlags | None = None) -> None:
    mgr.builder().for_(KopfExample).owns(Pod).complete(ChildrenReconciler(mgr.client))


if __name__ == "__main__":
    sys.exit(run_manager(setup, prog="children", leader_election_id="children.kopf.dev"))
