"""The generated built-in models (`pyscaffold_op.models`): wire round trips, snake_case, aliases, required."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from typing import Any

import pydantic
import pytest

from pyscaffold_op.apimachinery import KubeObject, ObjectMeta, OwnerReference
from pyscaffold_op.models import MODULES, apps_v1, batch_v1, core_v1
from pyscaffold_op.models.spec import definition

# Objects as a v1.3x API server returns them (every field set is one operators commonly read or write).
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "web-0",
        "namespace": "default",
        "uid": "0d9f4c8e-1",
        "resourceVersion": "1234",
        "generation": 1,
        "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": "web",
                "uid": "5e1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "finalizers": ["example.com/cleanup"],
    },
    "spec": {
        "containers": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "command": ["nginx"],
                "args": ["-g", "daemon off;"],
                "env": [
                    {"name": "MODE", "value": "prod"},
                    {
                        "name": "POD_IP",
                        "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}},
                    },
                    {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                ],
                "envFrom": [{"configMapRef": {"name": "settings"}}],
                "ports": [{"name": "http", "containerPort": 80, "protocol": "TCP", "hostIP": "0.0.0.0"}],
                "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}, "requests": {"cpu": 1}},
                "volumeMounts": [{"name": "data", "mountPath": "/data", "readOnly": True}],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                    "initialDelaySeconds": 3,
                    "periodSeconds": 10,
                    "timeoutSeconds": 1,
                    "successThreshold": 1,
                    "failureThreshold": 3,
                },
                "readinessProbe": {"tcpSocket": {"port": 80}},
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 1000,
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "imagePullPolicy": "IfNotPresent",
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }
        ],
        "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
            {"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}},
            {"name": "tmp", "emptyDir": {"sizeLimit": "1Gi"}},
        ],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "web",
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "securityContext": {"fsGroup": 2000},
        "imagePullSecrets": [{"name": "registry"}],
        "affinity": {
            "podAntiAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "web"}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }
                ]
            }
        },
        "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"}],
        "schedulerName": "default-scheduler",
    },
    "status": {
        "phase": "Running",
        "podIP": "10.244.0.7",
        "hostIP": "172.18.0.2",
        "startTime": "2024-05-01T10:00:01Z",
        "qosClass": "Burstable",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T10:00:05Z"},
        ],
        "containerStatuses": [
            {
                "name": "app",
                "image": "nginx:1.27",
                "imageID": "docker.io/library/nginx@sha256:abc",
                "containerID": "containerd://123",
                "ready": True,
                "started": True,
                "restartCount": 2,
                "state": {"running": {"startedAt": "2024-05-01T10:00:02Z"}},
                "lastState": {
                    "terminated": {
                        "exitCode": 137,
                        "reason": "OOMKilled",
                        "startedAt": "2024-05-01T09:00:00Z",
                        "finishedAt": "2024-05-01T09:59:59Z",
                    }
                },
            }
        ],
    },
}

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default", "generation": 3},
    "spec": {
        "replicas": 3,
        "selector": {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
        },
        "template": {
            "metadata": {"labels": {"app": "web", "tier": "front"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "minReadySeconds": 5,
    },
    "status": {
        "observedGeneration": 3,
        "replicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
        "updatedReplicas": 3,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
                "lastUpdateTime": "2024-05-01T10:00:00Z",
                "lastTransitionTime": "2024-05-01T10:00:00Z",
            }
        ],
    },
}

SERVICE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "type": "ClusterIP",
        "selector": {"app": "web"},
        "ports": [
            {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"},
            {"name": "metrics", "port": 9090, "targetPort": 9090, "protocol": "TCP", "appProtocol": "http"},
        ],
        "clusterIP": "10.96.0.12",
        "clusterIPs": ["10.96.0.12"],
        "sessionAffinity": "None",
        "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    },
    "status": {"loadBalancer": {}},
}

JOB: dict[str, Any] = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "migrate", "namespace": "default"},
    "spec": {
        "backoffLimit": 6,
        "completions": 1,
        "parallelism": 1,
        "completionMode": "NonIndexed",
        "suspend": False,
        "activeDeadlineSeconds": 600,
        "ttlSecondsAfterFinished": 100,
        "template": {
            "metadata": {"labels": {"job-name": "migrate"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "migrate", "image": "migrate:v1", "args": ["up"]}],
            },
        },
    },
    "status": {
        "startTime": "2024-05-01T10:00:00Z",
        "completionTime": "2024-05-01T10:01:00Z",
        "succeeded": 1,
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "lastProbeTime": "2024-05-01T10:01:00Z",
                "lastTransitionTime": "2024-05-01T10:01:00Z",
            }
        ],
    },
}


@pytest.mark.parametrize(
    ("cls", "body"),
    [(core_v1.Pod, POD), (apps_v1.Deployment, DEPLOYMENT), (core_v1.Service, SERVICE), (batch_v1.Job, JOB)],
    ids=["Pod", "Deployment", "Service", "Job"],
)
def test_a_server_object_round_trips_unchanged(cls: type[KubeObject], body: dict[str, Any]) -> None:
    assert cls.model_validate(body).to_dict() == body
    assert cls.model_validate_json(json.dumps(body)).to_dict() == body


def test_attributes_are_snake_case_and_the_wire_is_camel_case() -> None:
    pod = core_v1.Pod.model_validate(POD)
    status = pod.status.container_statuses[0]
    assert status.last_state.terminated.exit_code == 137
    assert status.container_id == "containerd://123"  # containerID: an acronym to_camel would get wrong
    assert pod.status.pod_ip == "10.244.0.7"
    assert pod.metadata.owner_references[0].block_owner_deletion is True
    assert pod.spec.containers[0].ports[0].host_ip == "0.0.0.0"
    assert pod.spec.containers[0].resources.limits == {"cpu": "500m", "memory": "128Mi"}
    built = core_v1.ContainerPort(container_port=8080, host_ip="127.0.0.1")
    assert built.model_dump(exclude_none=True) == {"containerPort": 8080, "hostIP": "127.0.0.1"}
    assert core_v1.ContainerPort.model_validate({"containerPort": 1, "hostIP": "h"}).host_ip == "h"


def test_kinds_are_kube_objects_sharing_pyops_object_meta() -> None:
    assert issubclass(core_v1.Pod, KubeObject)
    assert core_v1.Pod.model_fields["metadata"].annotation is ObjectMeta
    assert (core_v1.Pod.gvk.api_version, core_v1.Pod.plural, core_v1.Pod.namespaced) == ("v1", "pods", True)
    assert (apps_v1.Deployment.gvk.group, apps_v1.Deployment.plural) == ("apps", "deployments")
    assert core_v1.Namespace.namespaced is False
    pod = core_v1.Pod(metadata=ObjectMeta(name="p", owner_references=[]))
    assert pod.to_dict() == {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    from pyscaffold_op.models import meta_v1

    assert meta_v1.ObjectMeta is ObjectMeta and meta_v1.OwnerReference is OwnerReference


def test_required_fields_are_enforced_and_a_wrong_kind_is_rejected() -> None:
    with pytest.raises(pydantic.ValidationError, match="name"):
        core_v1.Container(image="nginx")
    with pytest.raises(pydantic.ValidationError, match="containerPort"):
        core_v1.ContainerPort.model_validate({"name": "http"})
    with pytest.raises(pydantic.ValidationError, match="containers"):
        core_v1.PodSpec()
    with pytest.raises(pydantic.ValidationError, match="does not match"):
        core_v1.Pod.model_validate({"apiVersion": "v1", "kind": "Service"})
    # the Go kinds require nothing at the top: create_or_update fills spec in its mutate function
    assert apps_v1.Deployment(metadata=ObjectMeta(name="d")).spec is None


def test_every_generated_model_builds() -> None:
    count = 0
    for name in MODULES:
        module = importlib.import_module(f"pyscaffold_op.models.{name}")
        for value in (getattr(module, n) for n in dir(module) if not n.startswith("_")):
            own = isinstance(value, type) and value.__module__.split(".")[:3] == module.__name__.split(".")
            if own and issubclass(value, pydantic.BaseModel):
                value.model_rebuild()
                count += 1
    assert count > 400


def test_the_spec_keeps_formats_list_types_gvks_and_the_default_overlay() -> None:
    port = definition("core_v1.ContainerPort")
    assert port["properties"]["containerPort"]["format"] == "int32"
    assert port["properties"]["protocol"]["default"] == "TCP"
    assert port["required"] == ["containerPort"]
    containers = definition("core_v1.PodSpec")["properties"]["containers"]
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["items"] == {"$ref": "core_v1.Container"}
    deployment = definition("apps_v1.Deployment")
    assert deployment["x-kubernetes-group-version-kind"] == {
        "group": "apps",
        "version": "v1",
        "kind": "Deployment",
    }
    assert definition("core_v1.LocalObjectReference")["properties"]["name"]["default"] == ""
    assert definition("io.k8s.apimachinery.pkg.util.intstr.IntOrString") == {
        "x-kubernetes-int-or-string": True
    }


def test_importing_the_cli_or_the_runtime_imports_no_model_module() -> None:
    code = (
        "import sys, pyscaffold_op.cli, pyscaffold_op.runtime, pyscaffold_op.apimachinery; "
        "print(sorted(m for m in sys.modules if m.startswith('pyscaffold_op.models.')))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


_CREATED = """
import json, sys
from pyscaffold_op.models._base import K8sModel, K8sObject
from pyscaffold_op.models.core_v1 import {names}
def subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from subclasses(sub)
core = sorted({{c.__name__ for c in [*subclasses(K8sModel), *subclasses(K8sObject)]
                if c.__module__.startswith("pyscaffold_op.models.core_v1")}})
print(json.dumps(core))
"""


def _closure(kinds: list[str]) -> set[str]:
    """The core/v1 definitions the spec says these reach (the spec, not the models, decides)."""
    seen: set[str] = set()
    todo = [f"core_v1.{k}" for k in kinds]
    while todo:
        name = todo.pop()
        if name in seen or not name.startswith("core_v1."):
            continue
        seen.add(name)
        todo.extend(re.findall(r'"\$ref": "([^"]+)"', json.dumps(definition(name))))
    return {n.removeprefix("core_v1.") for n in seen}


@pytest.mark.parametrize(
    "names", [["ConfigMap"], ["Pod"], ["Container", "Pod", "PodSpec", "SecurityContext"]]
)
def test_importing_a_kind_builds_only_the_classes_it_needs(names: list[str]) -> None:
    code = _CREATED.format(names=", ".join(names))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert set(json.loads(out)) == _closure(names)


def test_micro_times_always_carry_six_fractional_digits() -> None:
    """kube-apiserver parses metav1.MicroTime with Go's RFC3339Micro layout alone: a Lease renewed on a
    whole second (`...:05Z`, pydantic's plain ISO form) was refused with a 400, so a FakeClock on whole
    seconds, or one real renewal in a million, failed leader election and sharding."""
    from datetime import UTC, datetime, timedelta, timezone

    from pyscaffold_op.models.coordination_v1 import Lease, LeaseSpec

    whole = datetime(2026, 12, 7, 14, 47, 51, tzinfo=UTC)
    lease = Lease(
        metadata={"name": "l"},
        spec=LeaseSpec(renew_time=whole, acquire_time=whole.astimezone(timezone(timedelta(hours=2)))),
    )
    spec = lease.to_dict()["spec"]
    assert spec == {"renewTime": "2026-12-07T14:47:51.000000Z", "acquireTime": "2026-12-07T14:47:51.000000Z"}
    assert Lease.model_validate(lease.to_dict()).spec is not None
