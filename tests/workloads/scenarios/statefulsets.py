"""StatefulSets: ordered and parallel start, scaling down from the highest ordinal, rolling updates
(partition, OnDelete), claims from volumeClaimTemplates, ordinals, deletion."""

from __future__ import annotations

from typing import Any

from tests.workloads.harness import Scenario
from tests.workloads.kube import SLEEP, Kube, container, obj, pod_template

RESOURCES = ("statefulsets", "pods", "controllerrevisions", "persistentvolumeclaims", "events")


def statefulset(name: str = "db", replicas: int = 3, **spec: Any) -> dict[str, Any]:
    labels = {"app": name}
    return obj(
        "apps/v1",
        "StatefulSet",
        name,
        {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": labels},
            "template": pod_template(labels, container("db", "nginx:1.25")),
            **spec,
        },
    )


def settled(s: dict[str, Any]) -> bool:
    status, want = s.get("status") or {}, (s.get("spec") or {}).get("replicas", 1)
    return (
        status.get("observedGeneration", 0) >= s["metadata"].get("generation", 1)
        and status.get("replicas", 0) == want
        and status.get("readyReplicas", 0) == want
        and status.get("updatedReplicas", 0) == want
        and status.get("currentRevision") == status.get("updateRevision")
    )


def ready_count(n: int) -> Any:
    def check(s: dict[str, Any]) -> bool:
        status = s.get("status") or {}
        return (
            status.get("observedGeneration", 0) >= s["metadata"].get("generation", 1)
            and status.get("readyReplicas", 0) == n
            and status.get("replicas", 0) == n
        )

    return check


def _create(replicas: int = 3, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(statefulset(replicas=replicas, **spec))
        k.wait("statefulsets", "db", settled, "is settled", 120)

    return act


def _scale(first: int, then: int, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(statefulset(replicas=first, **spec))
        k.wait("statefulsets", "db", settled, "is settled", 120)
        k.scale("statefulsets", "db", then)
        k.wait("statefulsets", "db", ready_count(then), f"has {then} ready", 120)
        k.wait_count("pods", then, "app=db", timeout=90)

    return act


def set_image(k: Kube, image: str) -> None:
    k.patch(
        "statefulsets",
        "db",
        {"spec": {"template": {"spec": {"containers": [{"name": "db", "image": image}]}}}},
        "strategic",
    )


def _update(**strategy: Any) -> Any:
    def act(k: Kube) -> None:
        k.create(statefulset(replicas=3, updateStrategy=strategy) if strategy else statefulset(replicas=3))
        k.wait("statefulsets", "db", settled, "is settled", 120)
        set_image(k, "nginx:1.26")
        partition = (strategy.get("rollingUpdate") or {}).get("partition")
        if strategy.get("type") == "OnDelete":
            k.wait(
                "statefulsets",
                "db",
                lambda s: s["status"].get("observedGeneration") == 2,
                "observed the update",
            )
            k.delete("pods", "db-2")
            k.wait(
                "statefulsets",
                "db",
                lambda s: s["status"].get("updatedReplicas") == 1 and s["status"].get("readyReplicas") == 3,
                "updated db-2",
                120,
            )
        elif partition is not None:
            k.wait(
                "statefulsets",
                "db",
                lambda s: (
                    s["status"].get("updatedReplicas") == 3 - partition
                    and s["status"].get("readyReplicas") == 3
                ),
                "updated the partition",
                120,
            )
        else:
            k.wait("statefulsets", "db", settled, "is settled again", 180)

    return act


def _replace_pod(k: Kube) -> None:
    k.create(statefulset(replicas=2))
    k.wait("statefulsets", "db", settled, "is settled", 120)
    uid = k.get("pods", "db-0")["metadata"]["uid"]
    k.delete("pods", "db-0")
    k.wait(
        "pods",
        "db-0",
        lambda p: p["metadata"]["uid"] != uid and p["status"].get("phase") == "Running",
        "is back",
        90,
    )
    k.wait("statefulsets", "db", settled, "is settled again", 120)


def _claims(with_volume: bool, **spec: Any) -> Any:
    def act(k: Kube) -> None:
        claim = {
            "metadata": {"name": "data"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}},
                "storageClassName": "",
            },
        }
        s = statefulset(replicas=1, volumeClaimTemplates=[claim], **spec)
        s["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] = [
            {"name": "data", "mountPath": "/data"}
        ]
        if with_volume:  # a volume for the claim to bind to: nothing provisions one
            pv = obj(
                "v1",
                "PersistentVolume",
                f"pv-{k.ns}",
                {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "storageClassName": "",
                    "hostPath": {"path": f"/tmp/{k.ns}"},
                    "claimRef": {"namespace": k.ns, "name": "data-db-0"},
                },
            )
            k.request("POST", "/api/v1/persistentvolumes", pv)
        k.create(s)
        if with_volume:
            k.wait(
                "persistentvolumeclaims",
                "data-db-0",
                lambda c: c["status"].get("phase") == "Bound",
                "is Bound",
                90,
            )
            k.wait("statefulsets", "db", settled, "is settled", 120)
            k.request("DELETE", f"/api/v1/persistentvolumes/pv-{k.ns}")
        else:
            k.wait("persistentvolumeclaims", "data-db-0", lambda c: c is not None, "exists", 60)
            k.wait("pods", "db-0", lambda p: p is not None, "exists", 60)

    return act


def _crash_blocks_order(k: Kube) -> None:
    s = statefulset(replicas=2)
    s["spec"]["template"]["spec"]["containers"][0]["command"] = ["sh", "-c", "exit 1"]
    k.create(s)
    k.wait(
        "pods",
        "db-0",
        lambda p: p["status"].get("containerStatuses", [{}])[0].get("restartCount", 0) > 0,
        "restarted",
        90,
    )
    k.record("db-1 exists", k.get("pods", "db-1") is not None)


def _long(k: Kube) -> None:
    s = statefulset(replicas=2)
    s["spec"]["template"]["spec"]["containers"][0]["command"] = SLEEP
    k.create(s)
    k.wait("statefulsets", "db", settled, "is settled", 120)


def _delete(propagation: str | None) -> Any:
    def act(k: Kube) -> None:
        k.create(statefulset(replicas=2))
        k.wait("statefulsets", "db", settled, "is settled", 120)
        k.delete("statefulsets", "db", propagation)
        k.wait_gone("statefulsets", "db")
        if propagation == "Orphan":
            k.until(
                "the pods are orphans",
                lambda: all(not p["metadata"].get("ownerReferences") for p in k.list("pods", "app=db")),
            )
        else:
            k.wait_count("pods", 0, "app=db", timeout=90)

    return act


SCENARIOS: list[Scenario] = [
    Scenario("statefulset/ordered-3", "statefulset", _create(3), RESOURCES),
    Scenario("statefulset/parallel-3", "statefulset", _create(3, podManagementPolicy="Parallel"), RESOURCES),
    Scenario("statefulset/create-0", "statefulset", _create(0), RESOURCES),
    Scenario("statefulset/ordinals-start-5", "statefulset", _create(2, ordinals={"start": 5}), RESOURCES),
    Scenario("statefulset/min-ready-seconds", "statefulset", _create(2, minReadySeconds=1), RESOURCES),
    Scenario("statefulset/long-running", "statefulset", _long, RESOURCES),
    Scenario("statefulset/scale-down-3-to-1", "statefulset", _scale(3, 1), RESOURCES),
    Scenario("statefulset/scale-up-1-to-3", "statefulset", _scale(1, 3), RESOURCES),
    Scenario("statefulset/scale-to-0", "statefulset", _scale(2, 0), RESOURCES),
    Scenario(
        "statefulset/scale-down-parallel",
        "statefulset",
        _scale(3, 1, podManagementPolicy="Parallel"),
        RESOURCES,
    ),
    Scenario("statefulset/rolling-update", "statefulset", _update(), RESOURCES),
    Scenario(
        "statefulset/rolling-update-partition-2",
        "statefulset",
        _update(type="RollingUpdate", rollingUpdate={"partition": 2}),
        RESOURCES,
    ),
    Scenario("statefulset/on-delete-update", "statefulset", _update(type="OnDelete"), RESOURCES),
    Scenario("statefulset/replace-deleted-pod", "statefulset", _replace_pod, RESOURCES),
    Scenario("statefulset/crash-blocks-next-ordinal", "statefulset", _crash_blocks_order, RESOURCES),
    Scenario("statefulset/claims-unbound", "statefulset", _claims(False), RESOURCES),
    Scenario("statefulset/claims-bound", "statefulset", _claims(True), RESOURCES),
    Scenario("statefulset/delete-background", "statefulset", _delete(None), RESOURCES),
    Scenario("statefulset/delete-orphan", "statefulset", _delete("Orphan"), RESOURCES),
]
