"""StatefulSets, DaemonSets and Service endpoints under the simulated controllers, read with the
official kubernetes client (its typed models decode what the real server sends)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client as k8s
from kubernetes import config as k8s_config

from pyscaffold_op.envtest import Environment, KubeletSimulator
from pyscaffold_op.envtest.storage.objectstore import Event

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def env() -> Iterator[Environment]:
    kubelet = KubeletSimulator(pending_seconds=0.01, stop_seconds=0.01)
    e = Environment(kubelet=kubelet, workloads=True).start_in_thread()
    yield e
    e.stop()


@pytest.fixture(scope="module")
def api(env: Environment) -> Iterator[k8s.ApiClient]:
    with k8s_config.new_client_from_config(str(env.kubeconfig_path)) as c:
        yield c


def wait(check: Any, timeout: float = 10.0) -> Any:
    """Poll a synchronous check until it returns a truthy value without AssertionError."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            value = check()
            if value:
                return value
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout}s")
        time.sleep(0.02)


def template(app: str, image: str = "nginx:1.25", **pod_spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {
            "containers": [{"name": "c", "image": image, "ports": [{"name": "http", "containerPort": 8080}]}],
            **pod_spec,
        },
    }


def test_statefulset_creates_ordered_pods_with_claims(env: Environment, api: k8s.ApiClient) -> None:
    apps, core = k8s.AppsV1Api(api), k8s.CoreV1Api(api)
    order: list[str] = []

    def record(ev: Event) -> None:  # each pod must be created once its predecessor is Ready
        name = ev.obj["metadata"]["name"]
        if ev.gr == ("", "pods") and ev.type == "ADDED" and name.startswith("db-"):
            before = env.store.find(("", "pods"), "default", f"db-{int(name[3:]) - 1}")
            ready = before is not None and any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in before["status"].get("conditions") or []
            )
            order.append(name if name == "db-0" or ready else f"{name} (too early)")

    env.store.on_change.append(record)
    apps.create_namespaced_stateful_set(
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "db"},
            "spec": {
                "replicas": 3,
                "serviceName": "db",
                "selector": {"matchLabels": {"app": "db"}},
                "template": template("db"),
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            },
        },
    )

    def all_ready() -> bool:
        s = apps.read_namespaced_stateful_set("db", "default").status
        assert s.ready_replicas == 3 and s.current_revision == s.update_revision, s
        return True

    wait(all_ready)
    env.store.on_change.remove(record)
    assert order == ["db-0", "db-1", "db-2"]
    pod = core.read_namespaced_pod("db-1", "default")
    assert pod.spec.hostname == "db-1" and pod.spec.subdomain == "db"
    assert pod.metadata.generate_name == "db-"  # as controller.GetPodFromTemplate leaves it
    assert pod.metadata.labels["statefulset.kubernetes.io/pod-name"] == "db-1"
    assert pod.spec.volumes[0].persistent_volume_claim.claim_name == "data-db-1"
    pvc = core.read_namespaced_persistent_volume_claim("data-db-1", "default")
    assert pvc.status.phase == "Pending"
    # scale down removes the highest ordinal first
    apps.patch_namespaced_stateful_set_scale("db", "default", {"spec": {"replicas": 1}})

    def one_left() -> bool:
        names = sorted(
            p.metadata.name for p in core.list_namespaced_pod("default", label_selector="app=db").items
        )
        assert names == ["db-0"], names
        return apps.read_namespaced_stateful_set("db", "default").status.replicas == 1

    wait(one_left)
    # a template change rolls the pods onto a new revision
    sts = apps.read_namespaced_stateful_set("db", "default")
    old = sts.status.current_revision
    apps.patch_namespaced_stateful_set(
        "db", "default", {"spec": {"template": {"metadata": {"annotations": {"v": "2"}}}}}
    )

    def rolled() -> bool:
        s = apps.read_namespaced_stateful_set("db", "default").status
        assert (
            s.update_revision != old and s.current_revision == s.update_revision and s.ready_replicas == 1
        ), s
        pod = core.read_namespaced_pod("db-0", "default")
        return pod.metadata.labels["controller-revision-hash"] == s.update_revision

    wait(rolled)
    revisions = apps.list_namespaced_controller_revision("default").items
    assert {r.revision for r in revisions if r.metadata.name.startswith("db-")} == {1, 2}
    # history.NewControllerRevision: the template's labels and the hash under controller.kubernetes.io/hash
    for r in revisions:
        if r.metadata.name.startswith("db-"):
            assert r.metadata.labels == {"app": "db", "controller.kubernetes.io/hash": r.metadata.name[3:]}


def test_a_statefulset_may_mount_its_claim_templates(api: k8s.ApiClient) -> None:
    """The template is validated with the claim templates as volumes, as kube-apiserver does (found by
    the workload corpus: the emulator answered 422 `volumeMounts[0].name: Not found: "data"`)."""
    spec = template("mounted")
    spec["spec"]["containers"][0]["volumeMounts"] = [{"name": "data", "mountPath": "/data"}]
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "mounted"},
        "spec": {
            "serviceName": "mounted",
            "selector": {"matchLabels": {"app": "mounted"}},
            "template": spec,
            "volumeClaimTemplates": [claim],
        },
    }
    created = k8s.AppsV1Api(api).create_namespaced_stateful_set("default", body)
    assert created.spec.volume_claim_templates[0].metadata.name == "data"
    spec["spec"]["containers"][0]["volumeMounts"] = [{"name": "nothing", "mountPath": "/data"}]
    with pytest.raises(k8s.ApiException) as refused:
        k8s.AppsV1Api(api).create_namespaced_stateful_set(
            "default", {**body, "metadata": {"name": "unmounted"}}
        )
    assert refused.value.status == 422 and 'Not found: \\"nothing\\"' in refused.value.body


def test_daemonset_runs_one_pod_per_node(api: k8s.ApiClient) -> None:
    apps, core = k8s.AppsV1Api(api), k8s.CoreV1Api(api)
    apps.create_namespaced_daemon_set(
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"name": "agent"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent")},
        },
    )

    def scheduled() -> Any:
        ds = apps.read_namespaced_daemon_set("agent", "default")
        s = ds.status
        assert s.desired_number_scheduled == 1 and s.number_ready == 1 and s.number_available == 1, s
        return ds

    wait(scheduled)
    [pod] = core.list_namespaced_pod("default", label_selector="app=agent").items
    assert pod.spec.node_name == "envtest-node"
    required = pod.spec.affinity.node_affinity.required_during_scheduling_ignored_during_execution
    terms = required.node_selector_terms
    assert terms[0].match_fields[0].values == ["envtest-node"]
    # a second node without a kubelet gets a pod that nobody runs: desired 2, ready 1
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2"}})

    def two_desired() -> bool:
        s = apps.read_namespaced_daemon_set("agent", "default").status
        assert s.desired_number_scheduled == 2 and s.number_ready == 1 and s.number_unavailable == 1, s
        return True

    wait(two_desired)
    pods = core.list_namespaced_pod("default", label_selector="app=agent").items
    pending = [p for p in pods if p.spec.node_name is None]
    assert len(pods) == 2 and len(pending) == 1 and pending[0].status.phase == "Pending"
    core.delete_node("node-2")
    wait(lambda: len(core.list_namespaced_pod("default", label_selector="app=agent").items) == 1)


def test_service_gets_endpointslices_of_ready_pods(api: k8s.ApiClient) -> None:
    apps, core, discovery = k8s.AppsV1Api(api), k8s.CoreV1Api(api), k8s.DiscoveryV1Api(api)
    core.create_namespaced_service(
        "default",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {
                "selector": {"app": "web"},
                "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
            },
        },
    )

    def slice_of(n: int) -> Any:
        [s] = discovery.list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=web"
        ).items
        assert len(s.endpoints or []) == n and all(e.conditions.ready for e in s.endpoints or []), s.endpoints
        return s

    empty = wait(lambda: slice_of(0))
    assert (
        empty.metadata.labels["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    )
    assert empty.metadata.owner_references[0].kind == "Service"
    apps.create_namespaced_deployment(
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template("web")},
        },
    )
    s = wait(lambda: slice_of(2))
    assert s.address_type == "IPv4" and (s.ports[0].name, s.ports[0].port) == ("http", 8080)
    pods = {
        p.status.pod_ip: p.metadata.name
        for p in core.list_namespaced_pod("default", label_selector="app=web").items
    }
    assert {e.addresses[0]: e.target_ref.name for e in s.endpoints} == pods
    ep = core.read_namespaced_endpoints("web", "default")
    assert (
        sorted(a.ip for a in ep.subsets[0].addresses) == sorted(pods) and ep.subsets[0].ports[0].port == 8080
    )
    apps.patch_namespaced_deployment_scale("web", "default", {"spec": {"replicas": 1}})
    wait(lambda: slice_of(1))


def test_headless_service_endpoints_as_the_real_controllers(api: k8s.ApiClient) -> None:
    """The labels and annotation the real controllers write (managed-by, headless, the Service's
    labels, last-change-trigger-time), an EndpointSlice's generation, Pod hostnames under the
    Service's subdomain, and the Endpoints going with a deleted Service (found by the workload
    corpus against a cluster)."""
    apps, core, discovery = k8s.AppsV1Api(api), k8s.CoreV1Api(api), k8s.DiscoveryV1Api(api)
    core.create_namespaced_service(
        "default",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "hl", "labels": {"tier": "db"}},
            "spec": {"clusterIP": "None", "selector": {"app": "hl"}, "ports": [{"port": 8080}]},
        },
    )
    apps.create_namespaced_stateful_set(
        "default",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "hl"},
            "spec": {
                "replicas": 1,
                "serviceName": "hl",
                "selector": {"matchLabels": {"app": "hl"}},
                "template": template("hl"),
            },
        },
    )

    def ready_slice() -> Any:
        [s] = discovery.list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=hl"
        ).items
        assert s.endpoints and s.endpoints[0].conditions.ready, s
        return s

    s = wait(ready_slice)
    assert s.metadata.labels == {
        "tier": "db",
        "service.kubernetes.io/headless": "",
        "kubernetes.io/service-name": "hl",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert s.metadata.generation >= 2  # created as a placeholder, then given the Pod
    assert "endpoints.kubernetes.io/last-change-trigger-time" in s.metadata.annotations
    assert s.endpoints[0].hostname == "hl-0" and s.endpoints[0].conditions.serving
    ep = core.read_namespaced_endpoints("hl", "default")
    assert ep.metadata.labels == {
        "tier": "db",
        "service.kubernetes.io/headless": "",
        "endpoints.kubernetes.io/managed-by": "endpoint-controller",
    }
    assert "endpoints.kubernetes.io/last-change-trigger-time" in ep.metadata.annotations
    assert ep.subsets[0].addresses[0].hostname == "hl-0"
    apps.delete_namespaced_stateful_set("hl", "default")
    core.delete_namespaced_service("hl", "default")

    def endpoints_gone() -> bool:
        return not [e for e in core.list_namespaced_endpoints("default").items if e.metadata.name == "hl"]

    wait(endpoints_gone)


def test_published_not_ready_pod_is_ready_but_not_serving(api: k8s.ApiClient) -> None:
    core, discovery = k8s.CoreV1Api(api), k8s.DiscoveryV1Api(api)
    core.create_namespaced_service(
        "default",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "pub"},
            "spec": {"selector": {"app": "pub"}, "ports": [{"port": 80}], "publishNotReadyAddresses": True},
        },
    )
    spec = template("pub", image="busybox")["spec"]
    spec["containers"][0]["command"] = ["sh", "-c", "exit 1"]  # crash-loops: never ready
    core.create_namespaced_pod(
        "default",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "pub", "labels": {"app": "pub"}},
            "spec": spec,
        },
    )

    def listed() -> Any:
        [s] = discovery.list_namespaced_endpoint_slice(
            "default", label_selector="kubernetes.io/service-name=pub"
        ).items
        assert s.endpoints, s
        c = s.endpoints[0].conditions
        assert (c.ready, c.serving, c.terminating) == (True, False, False), c
        return c

    wait(listed)  # once the container has crashed
    ep = core.read_namespaced_endpoints("pub", "default")
    assert [a.target_ref.name for a in ep.subsets[0].addresses] == ["pub"] and not ep.subsets[
        0
    ].not_ready_addresses
    core.delete_namespaced_pod("pub", "default")
    core.delete_namespaced_service("pub", "default")


def test_statefulset_names_and_revisions_as_the_real_controller(api: k8s.ApiClient) -> None:
    """ordinals.start numbers the Pods, which carry their prefix as generateName too; the
    ControllerRevision's label is controller.kubernetes.io/hash, the Pods' controller-revision-hash
    names the revision (found by the workload corpus against a cluster)."""
    apps, core = k8s.AppsV1Api(api), k8s.CoreV1Api(api)
    body = {
        "metadata": {"name": "num"},
        "spec": {
            "replicas": 2,
            "ordinals": {"start": 5},
            "serviceName": "num",
            "selector": {"matchLabels": {"app": "num"}},
            "template": template("num"),
        },
    }
    apps.create_namespaced_stateful_set("default", body)

    def two_ready() -> list[Any]:
        pods = core.list_namespaced_pod("default", label_selector="app=num").items
        assert sorted(p.metadata.name for p in pods) == ["num-5", "num-6"]
        return pods

    pods = wait(two_ready)
    assert {p.metadata.generate_name for p in pods} == {"num-"}
    assert {p.metadata.labels["apps.kubernetes.io/pod-index"] for p in pods} == {"5", "6"}
    [rev] = apps.list_namespaced_controller_revision("default", label_selector="app=num").items
    assert "controller-revision-hash" not in rev.metadata.labels
    assert rev.metadata.name == f"num-{rev.metadata.labels['controller.kubernetes.io/hash']}"
    assert {p.metadata.labels["controller-revision-hash"] for p in pods} == {rev.metadata.name}
    apps.delete_namespaced_stateful_set("num", "default")


def test_daemonsets_over_fake_nodes_with_taints(api: k8s.ApiClient) -> None:
    """Nodes annotated kwok.x-k8s.io/node=fake are run by the kubelet simulator, as kwok runs them; a
    DaemonSet runs only where it tolerates the taints (NodeShouldRunDaemonPod), records its templates
    as ControllerRevisions and rolls a new template node by node (found by the workload corpus)."""
    apps, core = k8s.AppsV1Api(api), k8s.CoreV1Api(api)
    taint = {"key": "team", "value": "blue", "effect": "NoSchedule"}
    for name in ("fake-0", "fake-1"):
        core.create_node(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "annotations": {"kwok.x-k8s.io/node": "fake"}},
                "spec": {"taints": [taint]},
            }
        )
    wait(
        lambda: all(
            any(c.type == "Ready" and c.status == "True" for c in core.read_node(n).status.conditions or [])
            for n in ("fake-0", "fake-1")
        )
    )
    # kwok's node-initialize: the resources a node was created without are kwok's defaults
    assert core.read_node("fake-0").status.allocatable == {"cpu": "1k", "memory": "1Ti", "pods": "1M"}
    body = {
        "metadata": {"name": "blue"},
        "spec": {
            "selector": {"matchLabels": {"app": "blue"}},
            "template": template(
                "blue",
                tolerations=[{"key": "team", "operator": "Equal", "value": "blue", "effect": "NoSchedule"}],
            ),
        },
    }
    apps.create_namespaced_daemon_set("default", body)
    plain = {
        "metadata": {"name": "plain"},
        "spec": {"selector": {"matchLabels": {"app": "plain"}}, "template": template("plain")},
    }
    apps.create_namespaced_daemon_set("default", plain)

    def everywhere() -> Any:
        s = apps.read_namespaced_daemon_set("blue", "default").status
        assert (s.desired_number_scheduled, s.number_ready) == (3, 3), s  # envtest-node and both fakes
        return s

    wait(everywhere)
    plain_status = wait(
        lambda: (
            apps.read_namespaced_daemon_set("plain", "default").status.number_ready == 1
            and apps.read_namespaced_daemon_set("plain", "default").status
        )
    )
    assert plain_status.desired_number_scheduled == 1  # the tainted fakes are not for it
    pods = core.list_namespaced_pod("default", label_selector="app=blue").items
    assert sorted(p.spec.node_name for p in pods) == ["envtest-node", "fake-0", "fake-1"]
    assert {p.status.host_ip for p in pods} == {"10.0.0.1", "10.0.0.2", "10.0.0.3"}
    # the node IPAM controller gives each node a /24 of 10.244.0.0/16; its Pods get addresses there
    cidrs = {n: core.read_node(n).spec.pod_cidr for n in ("envtest-node", "fake-0", "fake-1")}
    assert len(set(cidrs.values())) == 3 and all(
        c.startswith("10.244.") and c.endswith(".0/24") for c in cidrs.values()
    )
    for p in pods:
        assert p.status.pod_ip.rsplit(".", 1)[0] == cidrs[p.spec.node_name].rsplit(".", 1)[0], p.status
    [rev] = apps.list_namespaced_controller_revision("default", label_selector="app=blue").items
    assert (
        rev.revision == 1 and rev.metadata.name == f"blue-{rev.metadata.labels['controller-revision-hash']}"
    )
    assert {p.metadata.labels["controller-revision-hash"] for p in pods} == {
        rev.metadata.labels["controller-revision-hash"]
    }
    # a new template rolls over every node, one unavailable at a time
    apps.patch_namespaced_daemon_set(
        "blue",
        "default",
        {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}},
    )

    def rolled() -> bool:
        s = apps.read_namespaced_daemon_set("blue", "default").status
        assert s.observed_generation == 2 and s.updated_number_scheduled == 3 and s.number_ready == 3, s
        return True

    wait(rolled, timeout=20)
    revisions = apps.list_namespaced_controller_revision("default", label_selector="app=blue").items
    assert sorted(r.revision for r in revisions) == [1, 2]
    for name in ("blue", "plain"):
        apps.delete_namespaced_daemon_set(name, "default")
    for name in ("fake-0", "fake-1"):
        core.delete_node(name)
