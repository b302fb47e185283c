"""Per-kind behaviour of built-in resources on create and update (a small part of the real strategies):
status reset on create, the defaults controllers rely on, and the few validations that bite."""

from __future__ import annotations

import itertools
from typing import Any

from pyscaffold_op.envtest.errors import cause
from pyscaffold_op.envtest.resources import ResourceInfo

_cluster_ips = itertools.count(1)


def prepare_create(info: ResourceInfo, obj: dict[str, Any]) -> None:
    key = (info.group, info.plural)
    if info.status and not info.custom and key not in (("", "namespaces"),):
        obj.pop("status", None)
    spec = obj.get("spec")
    if key == ("", "pods"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("serviceAccountName", "default")
        spec.setdefault("securityContext", {})
        for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
            if isinstance(c, dict):
                image = str(c.get("image", ""))
                tag = image.rsplit("/", 1)[-1]
                latest = ":" not in tag or tag.endswith(":latest")
                c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
                c.setdefault("terminationMessagePath", "/dev/termination-log")
                c.setdefault("terminationMessagePolicy", "File")
                c.setdefault("resources", {})
        obj["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    elif key == ("", "namespaces"):
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
        obj.setdefault("metadata", {}).setdefault("labels", {})["kubernetes.io/metadata.name"] = obj[
            "metadata"
        ]["name"]
    elif key == ("", "services") and isinstance(spec, dict):
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec.get("clusterIP") != "None" and spec["type"] != "ExternalName":
            n = next(_cluster_ips)
            spec.setdefault("clusterIP", f"10.96.{n // 250 % 250}.{n % 250 + 1}")
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
        obj["status"] = {"loadBalancer": {}}
    elif key in (("apps", "deployments"), ("apps", "statefulsets"), ("apps", "replicasets")) and isinstance(
        spec, dict
    ):
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if key == ("apps", "deployments"):
            spec.setdefault(
                "strategy",
                {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            )
            spec.setdefault("progressDeadlineSeconds", 600)
        elif key == ("apps", "statefulsets"):  # kubectl rollout status needs the update strategy
            spec.setdefault("podManagementPolicy", "OrderedReady")
            spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
            spec.setdefault(
                "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"}
            )
    elif key == ("apps", "daemonsets") and isinstance(spec, dict):
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault(
            "updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
        )
    elif key == ("batch", "jobs") and isinstance(spec, dict):
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completions", 1)
        spec.setdefault("parallelism", 1)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        tmpl = spec.get("template")
        if isinstance(tmpl, dict):
            labels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
            uid = obj["metadata"]["uid"]
            labels.setdefault("batch.kubernetes.io/controller-uid", uid)
            labels.setdefault("batch.kubernetes.io/job-name", obj["metadata"]["name"])
            labels.setdefault("controller-uid", uid)
            labels.setdefault("job-name", obj["metadata"]["name"])
            spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    elif key == ("batch", "cronjobs") and isinstance(spec, dict):
        spec.setdefault("concurrencyPolicy", "Allow")
        spec.setdefault("suspend", False)
        spec.setdefault("successfulJobsHistoryLimit", 3)
        spec.setdefault("failedJobsHistoryLimit", 1)
    elif key == ("", "secrets"):
        obj.setdefault("type", "Opaque")
    elif key == ("", "persistentvolumeclaims"):
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolumeClaim


def validate(info: ResourceInfo, obj: dict[str, Any], old: dict[str, Any] | None) -> list[dict[str, str]]:
    """Field validation of built-ins: only the checks most likely to catch operator bugs."""
    key = (info.group, info.plural)
    out: list[dict[str, str]] = []
    spec = obj.get("spec")
    if key == ("", "pods"):
        containers = (spec or {}).get("containers")
        if not containers:
            out.append(cause("FieldValueRequired", "spec.containers", "Required value"))
        for i, c in enumerate(containers or []):
            if not isinstance(c, dict) or not c.get("name"):
                out.append(cause("FieldValueRequired", f"spec.containers[{i}].name", "Required value"))
            if isinstance(c, dict) and not c.get("image") and old is None:
                out.append(cause("FieldValueRequired", f"spec.containers[{i}].image", "Required value"))
        rp = (spec or {}).get("restartPolicy")
        if rp not in (None, "Always", "OnFailure", "Never"):
            out.append(
                cause(
                    "FieldValueNotSupported",
                    "spec.restartPolicy",
                    f'Unsupported value: "{rp}": supported values: "Always", "OnFailure", "Never"',
                )
            )
        if old is not None and _pod_spec_frozen(old.get("spec") or {}) != _pod_spec_frozen(spec or {}):
            out.append(
                cause(
                    "FieldValueForbidden",
                    "spec",
                    "Forbidden: pod updates may not change fields "
                    "other than `spec.containers[*].image`, `spec.initContainers[*].image`, "
                    "`spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing "
                    "tolerations), `spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
                    "it was previously negative)",
                )
            )
    elif key in (
        ("apps", "deployments"),
        ("apps", "statefulsets"),
        ("apps", "replicasets"),
        ("apps", "daemonsets"),
    ):
        if not isinstance(spec, dict) or not spec.get("selector"):
            out.append(cause("FieldValueRequired", "spec.selector", "Required value"))
        elif old is not None and (old.get("spec") or {}).get("selector") != spec.get("selector"):
            out.append(
                cause(
                    "FieldValueInvalid",
                    "spec.selector",
                    f"Invalid value: {spec.get('selector')}: field is immutable",
                )
            )
    elif key == ("batch", "jobs") and old is not None:
        if (old.get("spec") or {}).get("template") != (spec or {}).get("template"):
            out.append(cause("FieldValueInvalid", "spec.template", "Invalid value: field is immutable"))
    elif key in (("", "configmaps"), ("", "secrets")) and old is not None and old.get("immutable"):
        for f in ("data", "binaryData", "stringData"):
            if old.get(f) != obj.get(f):
                out.append(
                    cause("FieldValueForbidden", f, "Forbidden: field is immutable when `immutable` is set")
                )
    return out


def _pod_spec_frozen(spec: dict[str, Any]) -> dict[str, Any]:
    """The part of a pod spec that may not change after creation (everything but images and the
    fields the kubelet/scheduler set)."""
    out = {
        k: v
        for k, v in spec.items()
        if k not in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "nodeName")
    }
    for field in ("containers", "initContainers"):
        if isinstance(out.get(field), list):
            out[field] = [
                {k: v for k, v in c.items() if k != "image"} if isinstance(c, dict) else c for c in out[field]
            ]
    return out
