"""Per-kind behaviour of built-in resources on create and update (a small part of the real strategies):
status reset and allocation on create, and the few validations that bite. Defaulting, which runs on
every write, is in `defaulting.py`."""

from __future__ import annotations

import itertools
from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry import certificates, podresources, podvolumes
from pyscaffold_op.envtest.registry.podqos import pod_qos
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.status import Cause, cause

_cluster_ips = itertools.count(1)


def prepare_create(info: ServedResource, obj: dict[str, Any]) -> None:
    key = (info.group, info.plural)
    if info.status and not info.custom and key not in (("", "namespaces"),):
        obj.pop("status", None)
    spec = obj.get("spec")
    if key == ("", "pods"):
        spec = obj.setdefault("spec", {})
        podresources.default_pod_level_resources(obj)  # before the QoS class, as PrepareForCreate
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos(obj)}
    elif key == ("", "namespaces"):
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
        meta = obj.setdefault("metadata", {})
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
    elif key == ("", "services") and isinstance(spec, dict):
        # allocation runs before defaulting (envtest/defaulting.py), which sets the same type default
        if spec.get("clusterIP") != "None" and spec.get("type", "ClusterIP") != "ExternalName":
            n = next(_cluster_ips)
            if not obj["metadata"].get("name"):
                # the allocator's IPAddress names its Service as parent: without a name it is
                # invalid, and the real server answers with that before validating the Service
                ip = f"10.96.{n // 250 % 250}.{n % 250 + 1}"
                raise E.invalid(
                    "",
                    "Service",
                    "",
                    [
                        cause(
                            "FieldValueInvalid",
                            "spec.clusterIPs",
                            f'Invalid value: [""]: failed to allocate IP: IPAddress.networking.k8s.io "{ip}" '
                            "is invalid: spec.parentRef.name: Required value",
                        )
                    ],
                )
            spec.setdefault("clusterIP", f"10.96.{n // 250 % 250}.{n % 250 + 1}")
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        obj["status"] = {"loadBalancer": {}}
    elif key == ("batch", "jobs") and isinstance(spec, dict):
        tmpl = spec.get("template")
        if isinstance(tmpl, dict):
            labels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
            uid = obj["metadata"]["uid"]
            labels.setdefault("batch.kubernetes.io/controller-uid", uid)
            labels.setdefault("batch.kubernetes.io/job-name", obj["metadata"].get("name", ""))
            labels.setdefault("controller-uid", uid)
            labels.setdefault("job-name", obj["metadata"].get("name", ""))
            spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
            if not obj["metadata"].get("labels"):  # SetDefaults_Job: the Job's labels are its pods'
                obj["metadata"]["labels"] = dict(labels)
    elif key == ("", "persistentvolumeclaims"):
        obj["status"] = {"phase": "Pending"}  # SetDefaults_PersistentVolumeClaim
    elif key == certificates.GROUP_RESOURCE:
        certificates.prepare_create(obj)


def bumps_generation(info: ServedResource, new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Besides a spec change: a Deployment's annotations bump its generation too (its strategy's
    PrepareForUpdate: they are copied to its ReplicaSets), and an EndpointSlice's labels."""
    key = {("apps", "deployments"): "annotations", ("discovery.k8s.io", "endpointslices"): "labels"}.get(
        info.group_resource
    )
    if key is None:
        return False
    return (new["metadata"].get(key) or {}) != (old["metadata"].get(key) or {})


# the metadata a built-in's /status write takes from the object sent (the rest stays as stored): a
# Deployment's status strategy keeps only its labels, so the deployment controller writes the revision
# annotation with the status, without bumping the generation
_STATUS_TAKES_META = {("apps", "deployments"): ("annotations", "finalizers", "ownerReferences")}


def prepare_status_update(
    info: ServedResource, new: dict[str, Any], old: dict[str, Any], sent: dict[str, Any] | None = None
) -> None:
    """What a built-in's status strategy keeps of the old object (PrepareForUpdate): a Pod's QoS class
    is immutable, so a status that leaves it out keeps it (old kubelets dropped it); a Deployment's
    takes the sent annotations, finalizers and owner references."""
    sent_meta = (sent or {}).get("metadata")
    if isinstance(sent_meta, dict):
        for key in _STATUS_TAKES_META.get(info.group_resource, ()):
            if sent_meta.get(key):
                new["metadata"][key] = sent_meta[key]
            else:
                new["metadata"].pop(key, None)
    if info.group_resource == ("", "pods"):
        status, old_status = new.get("status"), old.get("status")
        kept = old_status.get("qosClass") if isinstance(old_status, dict) else None
        if isinstance(status, dict) and kept and not status.get("qosClass"):
            status["qosClass"] = kept


def validate_status(info: ServedResource, new: dict[str, Any]) -> list[Cause]:
    """The few status validations that bite: a PodDisruptionBudget's counts are never negative
    (ValidatePodDisruptionBudgetStatusUpdate, policy/v1)."""
    out: list[Cause] = []
    if info.group_resource == ("policy", "poddisruptionbudgets") and info.version == "v1":
        status = new.get("status") if isinstance(new.get("status"), dict) else {}
        assert isinstance(status, dict)
        for field in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"):
            value = status.get(field)
            if isinstance(value, int) and value < 0:
                out.append(
                    cause(
                        "FieldValueInvalid",
                        f"status.{field}",
                        f"Invalid value: {value}: must be greater than or equal to 0",
                    )
                )
    return out


def validate(info: ServedResource, obj: dict[str, Any], old: dict[str, Any] | None) -> list[Cause]:
    """Field validation of built-ins: only the checks most likely to catch operator bugs."""
    key = (info.group, info.plural)
    out: list[Cause] = []
    spec = obj.get("spec")
    if key == ("", "pods"):
        volumes, volume_errors = podvolumes.volume_causes(spec if isinstance(spec, dict) else {}, "spec")
        out.extend(volume_errors)
        containers = (spec or {}).get("containers")
        if not containers:
            out.append(cause("FieldValueRequired", "spec.containers", "Required value"))
        for i, c in enumerate(containers or []):
            if not isinstance(c, dict) or not c.get("name"):
                out.append(cause("FieldValueRequired", f"spec.containers[{i}].name", "Required value"))
            if isinstance(c, dict) and not c.get("image") and old is None:
                out.append(cause("FieldValueRequired", f"spec.containers[{i}].image", "Required value"))
            if isinstance(c, dict):
                out.extend(podvolumes.mount_causes(c, volumes, f"spec.containers[{i}]"))
        out.extend(_init_mounts(spec if isinstance(spec, dict) else {}, volumes, "spec"))
        if isinstance(spec, dict):
            out.extend(cause("FieldValueInvalid", f, msg) for f, msg in podresources.consistency_errors(spec))
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
    if key in _TEMPLATED:
        out.extend(_template_volumes(obj, _TEMPLATED[key]))
    if key == ("batch", "jobs") and old is not None:
        if (old.get("spec") or {}).get("template") != (spec or {}).get("template"):
            out.append(cause("FieldValueInvalid", "spec.template", "Invalid value: field is immutable"))
    elif key in (("", "configmaps"), ("", "secrets")):
        out.extend(_data_size(key[1], obj))
    elif key == ("networking.k8s.io", "ingressclasses"):
        if not (spec or {}).get("controller"):
            out.append(cause("FieldValueRequired", "spec.controller", "Required value"))
    elif key == certificates.GROUP_RESOURCE and old is None:
        out.extend(certificates.create_causes(obj))
    elif key == ("node.k8s.io", "runtimeclasses") and not obj.get("handler"):
        out.append(cause("FieldValueRequired", "handler", "Required value"))
    if key in (("", "configmaps"), ("", "secrets")) and old is not None and old.get("immutable"):
        for f in ("data", "binaryData", "stringData"):
            if old.get(f) != obj.get(f):
                out.append(
                    cause("FieldValueForbidden", f, "Forbidden: field is immutable when `immutable` is set")
                )
    return out


MAX_DATA = 1024 * 1024  # api.MaxSecretSize: a ConfigMap's or Secret's data together


def _data_size(plural: str, obj: dict[str, Any]) -> list[Cause]:
    """ValidateConfigMap/ValidateSecret: keys and values together at most 1 MiB (binaryData and a
    Secret's data count decoded bytes; base64 is 4 characters for 3 bytes)."""
    total = 0
    for f in ("data", "binaryData"):
        values = obj.get(f)
        if isinstance(values, dict):
            encoded = f == "binaryData" or plural == "secrets"
            for k, v in values.items():
                n = len(v) if isinstance(v, str) else 0
                total += len(k) + (n * 3 // 4 if encoded else n)
    if total <= MAX_DATA:
        return []
    where = "[]" if plural == "configmaps" else "data"
    return [cause("FieldValueTooLong", where, f"Too long: may not be more than {MAX_DATA} bytes")]


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


# the workloads whose pod template is validated as a pod spec: where the template's spec is
_TEMPLATED: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "deployments"): ("spec", "template", "spec"),
    ("apps", "statefulsets"): ("spec", "template", "spec"),
    ("apps", "daemonsets"): ("spec", "template", "spec"),
    ("apps", "replicasets"): ("spec", "template", "spec"),
    ("", "replicationcontrollers"): ("spec", "template", "spec"),
    ("", "podtemplates"): ("template", "spec"),
    ("batch", "jobs"): ("spec", "template", "spec"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template", "spec"),
}


def _template_volumes(obj: dict[str, Any], where: tuple[str, ...]) -> list[Cause]:
    """The volume and mount causes of a workload's pod template."""
    spec: Any = obj
    for step in where:
        spec = spec.get(step) if isinstance(spec, dict) else None
    if not isinstance(spec, dict):
        return []
    path = ".".join(where)
    volumes, out = podvolumes.volume_causes(spec, path)
    for i, c in enumerate(spec.get("containers") or []):
        if isinstance(c, dict):
            out.extend(podvolumes.mount_causes(c, volumes, f"{path}.containers[{i}]"))
    return out + _init_mounts(spec, volumes, path)


def _init_mounts(spec: dict[str, Any], volumes: set[str], path: str) -> list[Cause]:
    out: list[Cause] = []
    for i, c in enumerate(spec.get("initContainers") or []):
        if isinstance(c, dict):
            out.extend(podvolumes.mount_causes(c, volumes, f"{path}.initContainers[{i}]"))
    return out
