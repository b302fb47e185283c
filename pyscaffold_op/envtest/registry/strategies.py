"""Per-kind behaviour of built-in resources on create and update (a small part of the real strategies):
status reset and allocation on create, and the few validations that bite. Defaulting, which runs on
every write, is in `defaulting.py`."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

from pyscaffold_op.envtest import status as E
from pyscaffold_op.envtest.registry import (
    certificates,
    cronjobs,
    events,
    immutable,
    namespaces,
    podresources,
    podspec,
)
from pyscaffold_op.envtest.registry.podqos import pod_qos
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.status import Cause, cause
from pyscaffold_op.envtest.types import as_obj

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
        namespaces.prepare_create(obj)
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
        elif spec.get("clusterIP") == "None":  # headless: the allocator's initClusterIPs copies it too
            spec.setdefault("clusterIPs", ["None"])
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


def prepare_status_update(info: ServedResource, new: dict[str, Any], old: dict[str, Any]) -> None:
    """What a built-in's status strategy keeps of the old status (PrepareForUpdate; the metadata is
    `statusstrategy`'s): a Pod's QoS class is immutable, so a status that leaves it out keeps it (old
    kubelets dropped it)."""
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
        out.extend(
            podspec.pod_spec_causes(spec if isinstance(spec, dict) else {}, "spec", created=old is None)
        )
        if isinstance(spec, dict):
            out.extend(cause("FieldValueInvalid", f, msg) for f, msg in podresources.consistency_errors(spec))
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
    if key == ("batch", "cronjobs"):
        out.extend(cronjobs.spec_causes(obj, old))
    out.extend(podspec.template_causes(key, obj))
    if key == ("batch", "cronjobs") and old is None:
        out.extend(cronjobs.name_causes(obj))
    if key == ("batch", "jobs") and old is not None:
        if (old.get("spec") or {}).get("template") != (spec or {}).get("template"):
            out.append(cause("FieldValueInvalid", "spec.template", "Invalid value: field is immutable"))
    elif key == ("", "namespaces") and old is None:  # an update keeps the stored spec.finalizers
        out.extend(namespaces.create_causes(obj))
    elif key == ("networking.k8s.io", "ingressclasses"):
        if not (spec or {}).get("controller"):
            out.append(cause("FieldValueRequired", "spec.controller", "Required value"))
    elif key == certificates.GROUP_RESOURCE and old is None:
        out.extend(certificates.create_causes(obj))
    elif key == ("policy", "poddisruptionbudgets"):
        out.extend(_disruption_budget(spec if isinstance(spec, dict) else {}))
    elif key == ("node.k8s.io", "runtimeclasses") and not obj.get("handler"):
        out.append(cause("FieldValueRequired", "handler", "Required value"))
    elif key in (("", "events"), (events.EVENTS_GROUP, "events")):
        if old is None:
            out.extend(events.create_causes(info.group, obj))
        else:
            out.extend(events.update_causes(info.group, obj, old))
    if old is not None:
        out.extend(immutable.update_causes(key, obj, old))
    if key in (("", "configmaps"), ("", "secrets")):
        if old is not None and old.get("immutable"):  # ValidateConfigMapUpdate, ValidateSecretUpdate
            for f in ("immutable", "data", "binaryData"):
                if (not obj.get(f)) if f == "immutable" else old.get(f) != obj.get(f):
                    out.append(
                        cause(
                            "FieldValueForbidden", f, "Forbidden: field is immutable when `immutable` is set"
                        )
                    )
        out.extend(_data_size(key[1], obj))
        if key == ("", "secrets"):
            out.extend(_secret_type_causes(obj))
    return out


# ValidateSecret: the data keys each secret type requires
_SECRET_KEYS: dict[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def _secret_type_causes(obj: dict[str, Any]) -> list[Cause]:
    """The keys a Secret's `type` requires (the JSON of docker configs is not parsed here)."""
    kind = obj.get("type")
    data = as_obj(obj.get("data"))
    if kind == "kubernetes.io/service-account-token":
        annotations = obj["metadata"].get("annotations") or {}
        if not annotations.get("kubernetes.io/service-account.name"):
            return [
                cause(
                    "FieldValueRequired",
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "Required value",
                )
            ]
        return []
    if kind == "kubernetes.io/basic-auth":
        if "username" in data or "password" in data:
            return []
        return [cause("FieldValueRequired", f"data[{k}]", "Required value") for k in ("username", "password")]
    keys = _SECRET_KEYS.get(kind) if isinstance(kind, str) else None
    if keys is None:
        return []
    if kind == "kubernetes.io/ssh-auth":
        return (
            [] if data.get(keys[0]) else [cause("FieldValueRequired", f"data[{keys[0]}]", "Required value")]
        )
    if kind != "kubernetes.io/tls":  # docker configs: the first missing key ends the check
        keys = keys[:1]
    return [cause("FieldValueRequired", f"data[{k}]", "Required value") for k in keys if k not in data]


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


_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_ERROR = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


def _disruption_budget(spec: dict[str, Any]) -> list[Cause]:
    """ValidatePodDisruptionBudgetSpec: minAvailable and maxUnavailable are counts or percents, not both."""
    out: list[Cause] = []
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        shown = json.dumps(  # the internal type, printed without json tags
            {
                "MinAvailable": spec["minAvailable"],
                "Selector": spec.get("selector"),
                "MaxUnavailable": spec["maxUnavailable"],
                "UnhealthyPodEvictionPolicy": spec.get("unhealthyPodEvictionPolicy"),
            },
            separators=(",", ":"),
        )
        why = "minAvailable and maxUnavailable cannot be both set"
        out.append(cause("FieldValueInvalid", "spec", f"Invalid value: {shown}: {why}"))
    for name in ("minAvailable", "maxUnavailable"):
        value = spec.get(name)
        at = f"spec.{name}"
        if isinstance(value, str):
            if not _PERCENT.match(value):
                out.append(cause("FieldValueInvalid", at, f'Invalid value: "{value}": {_PERCENT_ERROR}'))
            elif int(value[:-1]) > 100:
                out.append(
                    cause("FieldValueInvalid", at, f'Invalid value: "{value}": must not be greater than 100%')
                )
        elif isinstance(value, int) and value < 0:
            out.append(
                cause("FieldValueInvalid", at, f"Invalid value: {value}: must be greater than or equal to 0")
            )
    return out
