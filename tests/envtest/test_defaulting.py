"""Defaulting of built-in objects on every write, as a real API server does it (envtest/defaulting.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx2
import pytest

from pyscaffold_op.envtest import Environment

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def deployment(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": "nginx:1.27",
                            "ports": [{"containerPort": 80}],
                            "envFrom": [{"configMapRef": {}}],
                            "livenessProbe": {"httpGet": {"path": "/", "port": 80}},
                        }
                    ]
                },
            },
            **spec,
        },
    }


async def test_create_fills_deployment_pod_template_and_container_defaults(
    http: httpx2.AsyncClient,
) -> None:
    r = await http.post(DEPLOYMENTS, json=deployment("web"))
    assert r.status_code == 201, r.text
    obj = r.json()
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod = spec["template"]["spec"]
    assert pod["restartPolicy"] == "Always" and pod["dnsPolicy"] == "ClusterFirst"
    assert pod["terminationGracePeriodSeconds"] == 30 and pod["schedulerName"] == "default-scheduler"
    assert pod["securityContext"] == {}
    c = pod["containers"][0]
    assert c["imagePullPolicy"] == "IfNotPresent"
    assert (c["terminationMessagePath"], c["terminationMessagePolicy"]) == ("/dev/termination-log", "File")
    assert c["resources"] == {}
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]  # the spec's +default overlay
    assert c["envFrom"] == [{"configMapRef": {"name": ""}}]  # LocalObjectReference.name +default=""
    probe = c["livenessProbe"]
    assert probe["httpGet"]["scheme"] == "HTTP"
    assert (probe["timeoutSeconds"], probe["periodSeconds"], probe["failureThreshold"]) == (1, 10, 3)
    assert obj["status"] == {}


async def test_update_and_patches_default_again_what_they_leave_out(http: httpx2.AsyncClient) -> None:
    created = (await http.post(DEPLOYMENTS, json=deployment("web", replicas=3))).json()
    # PUT without replicas/strategy (kubectl replace of a hand-written manifest)
    body = deployment("web")
    body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    r = await http.put(f"{DEPLOYMENTS}/web", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["replicas"] == 1
    assert r.json()["spec"]["strategy"]["type"] == "RollingUpdate"
    assert r.json()["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    # merge patch deleting fields
    r = await http.patch(
        f"{DEPLOYMENTS}/web",
        content=json.dumps({"spec": {"replicas": 5, "revisionHistoryLimit": None, "strategy": None}}),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    spec = r.json()["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (5, 10)
    assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": "25%", "maxSurge": "25%"}
    # server-side apply of a new object
    r = await http.patch(
        f"{DEPLOYMENTS}/applied",
        content=json.dumps(deployment("applied")),
        params={"fieldManager": "test"},
        headers={"Content-Type": "application/apply-patch+yaml"},
    )
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["replicas"] == 1 and r.json()["status"] == {}


async def test_jobs_cronjobs_statefulsets_daemonsets_services_leases_secrets(
    http: httpx2.AsyncClient,
) -> None:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    always = {"spec": {**template["spec"], "restartPolicy": "Always"}}  # what sets and daemons run
    job = (
        await http.post(
            "/apis/batch/v1/namespaces/default/jobs",
            json={
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "j"},
                "spec": {"template": template},
            },
        )
    ).json()
    s = job["spec"]
    assert (s["backoffLimit"], s["completions"], s["parallelism"]) == (6, 1, 1)
    assert (s["completionMode"], s["suspend"], s["manualSelector"]) == ("NonIndexed", False, False)
    assert s["template"]["spec"]["containers"][0]["imagePullPolicy"] == "Always"  # no tag: latest
    assert job["status"] == {}
    work_queue = (
        await http.post(
            "/apis/batch/v1/namespaces/default/jobs",
            json={
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "wq"},
                "spec": {"parallelism": 3, "template": template},
            },
        )
    ).json()
    assert "completions" not in work_queue["spec"]  # only defaulted when parallelism is unset too
    cron = (
        await http.post(
            "/apis/batch/v1/namespaces/default/cronjobs",
            json={
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "cj"},
                "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}},
            },
        )
    ).json()
    cs = cron["spec"]
    assert (cs["concurrencyPolicy"], cs["suspend"]) == ("Allow", False)
    assert (cs["successfulJobsHistoryLimit"], cs["failedJobsHistoryLimit"]) == (3, 1)
    assert cs["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert "backoffLimit" not in cs["jobTemplate"]["spec"]  # Job defaults are for Jobs, not templates
    assert cron["status"] == {}
    sts = (
        await http.post(
            "/apis/apps/v1/namespaces/default/statefulsets",
            json={
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "metadata": {"name": "db"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, **always},
                },
            },
        )
    ).json()["spec"]
    assert (sts["replicas"], sts["podManagementPolicy"]) == (1, "OrderedReady")
    assert sts["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"partition": 0, "maxUnavailable": 1},
    }
    ds = (
        await http.post(
            "/apis/apps/v1/namespaces/default/daemonsets",
            json={
                "apiVersion": "apps/v1",
                "kind": "DaemonSet",
                "metadata": {"name": "agent"},
                "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, **always},
                },
            },
        )
    ).json()["spec"]
    assert ds["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    svc = (
        await http.post(
            "/api/v1/namespaces/default/services",
            json={
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]},
            },
        )
    ).json()
    assert svc["spec"]["type"] == "ClusterIP" and svc["spec"]["sessionAffinity"] == "None"
    assert svc["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 80}]
    # a PUT leaving out the allocated clusterIP keeps it, as the real strategy does
    put = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "resourceVersion": svc["metadata"]["resourceVersion"]},
        "spec": {"selector": {"app": "web2"}, "ports": [{"port": 80}]},
    }
    updated = (await http.put("/api/v1/namespaces/default/services/web", json=put)).json()
    assert updated["spec"]["clusterIP"] == svc["spec"]["clusterIP"]
    assert updated["spec"]["ports"][0]["targetPort"] == 80
    lease = (
        await http.post(
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            json={"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}},
        )
    ).json()
    assert lease["spec"] == {}
    secret = (
        await http.post(
            "/api/v1/namespaces/default/secrets",
            json={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}},
        )
    ).json()
    assert secret["type"] == "Opaque"


@pytest.mark.kubectl
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_replace_of_a_deployment_without_replicas_gets_one(
    thread_env: Environment, tmp_path: Path
) -> None:
    manifest = tmp_path / "deploy.json"
    manifest.write_text(json.dumps(deployment("replaced", replicas=4)))

    def kubectl(*args: str) -> str:
        proc = subprocess.run(
            ["kubectl", "--kubeconfig", str(thread_env.kubeconfig_path), *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    kubectl("create", "-f", str(manifest))
    manifest.write_text(json.dumps(deployment("replaced")))
    kubectl("replace", "-f", str(manifest))
    obj = json.loads(kubectl("get", "deployment", "replaced", "-o", "json"))
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == "25%"
    assert obj["spec"]["revisionHistoryLimit"] == 10


async def test_a_replication_controller_takes_labels_and_selector_from_its_template(
    http: httpx2.AsyncClient,
) -> None:
    """SetDefaults_ReplicationController (found by the workload corpus: the cluster's RC had labels)."""
    body = {
        "apiVersion": "v1",
        "kind": "ReplicationController",
        "metadata": {"name": "rc"},
        "spec": {
            "template": {
                "metadata": {"labels": {"app": "rc"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            }
        },
    }
    r = await http.post("/api/v1/namespaces/default/replicationcontrollers", json=body)
    assert r.status_code == 201, r.text
    rc = r.json()
    assert rc["metadata"]["labels"] == {"app": "rc"} and rc["spec"]["selector"] == {"app": "rc"}
    assert rc["spec"]["replicas"] == 1


async def test_init_containers_requests_default_to_their_limits(http: httpx2.AsyncClient) -> None:
    """SetDefaults_Pod defaults requests from limits for init containers too (found by the workload
    corpus: a Pod whose every container had limits was not Guaranteed)."""
    limits = {"cpu": "100m", "memory": "64Mi"}
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "init-limits"},
        "spec": {
            "initContainers": [{"name": "i", "image": "busybox", "resources": {"limits": limits}}],
            "containers": [{"name": "c", "image": "busybox", "resources": {"limits": limits}}],
        },
    }
    r = await http.post("/api/v1/namespaces/default/pods", json=pod)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["initContainers"][0]["resources"]["requests"] == limits


async def test_a_headless_service_gets_clusterips_none(http: httpx2.AsyncClient) -> None:
    """The allocator copies clusterIP into clusterIPs, "None" too (found by the workload corpus)."""
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "headless"},
        "spec": {"clusterIP": "None", "selector": {"app": "x"}, "ports": [{"port": 80}]},
    }
    r = await http.post("/api/v1/namespaces/default/services", json=svc)
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["clusterIPs"] == ["None"]
