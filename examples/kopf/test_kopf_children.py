"""02-children: a Pod per KopfExample, owned by it and listed in its status."""

from __future__ import annotations

from typing import Any

import children
from kopfexample import KopfExample, kopf_example

from pyscaffold_op.models.core_v1 import Pod
from pyscaffold_op.runtime import Client
from pyscaffold_op.testing import eventually


async def test_each_example_gets_one_child_pod_named_in_its_status(client: Client, running: Any) -> None:
    async with running(children.setup):
        await client.create(kopf_example("kex-1", duration="30"))

        async def child() -> Pod | None:
            pods = await client.list(Pod, namespace="default", labels={children.OWNER: "kex-1"})
            kex = await client.get(KopfExample, "kex-1", namespace="default")
            if len(pods) == 1 and kex.status and kex.status.children == [pods[0].metadata.uid]:
                return pods[0]
            return None

        found = await eventually(child)
        assert found is not None
        pod = found
        assert pod.metadata.name and pod.metadata.name.startswith("kex-1-")  # kopf.adopt's generateName
        assert pod.metadata.labels == {"somelabel": "somevalue", children.OWNER: "kex-1"}  # and labels
        [owner] = pod.metadata.owner_references or []
        assert (owner.kind, owner.name, owner.controller) == ("KopfExample", "kex-1", True)
        assert pod.spec is not None
        container = pod.spec.containers[0]
        assert container.args == ['echo "FIELD=$FIELD"\nsleep 30\n']
        assert [(e.name, e.value) for e in container.env or []] == [("FIELD", "value")]
        # a Pod lost is a Pod made again (kopf's on.create would not notice)
        await client.delete(Pod, pod.metadata.name, namespace="default")

        async def replaced() -> bool:
            again = await child()
            return again is not None and again.metadata.uid != pod.metadata.uid

        await eventually(replaced)
