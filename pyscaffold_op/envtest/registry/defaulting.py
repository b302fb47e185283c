"""Defaulting of built-in objects on every write (create, update, patch, apply), like the API server's.

Two sources, applied where each type appears in the object (a Deployment's pod template gets the
PodSpec and Container defaults exactly like a Pod does):

* the declarative `+default` values of the spec (`pyscaffold_op.models.spec`: ContainerPort.protocol
  "TCP", LocalObjectReference.name "", ...), walked along the compact OpenAPI definitions;
* the defaulting functions of the Go API packages that operators meet every day
  (pkg/apis/{core,apps,batch}/v1/defaults.go: `SetDefaults_PodSpec`, `SetDefaults_Deployment`, ...),
  keyed by definition name below (by kind for the functions Go runs on the top-level object only).

Without this, an update that leaves a field out keeps it empty where the real server fills it in, and
`create_or_update` looks idempotent in tests while it hot-loops against a cluster.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.types import Obj
from pyscaffold_op.models import spec

_POD_TEMPLATE_MODE = 420  # 0644, the default of secret/configMap/downwardAPI/projected volumes


def apply(info: ServedResource, obj: Obj, old: Obj | None) -> None:
    """Default `obj` (about to be stored) in place; `old` is the stored object on updates."""
    name = spec.kinds().get((info.group, info.version, info.kind))
    if name is None:
        return
    _walk_ref(obj, name)
    kind_defaults = _BY_KIND.get((info.group, info.kind))
    if kind_defaults is not None:
        kind_defaults(obj, old)


# -- the walk --------------------------------------------------------------------------------------


def _walk_ref(value: Any, name: str) -> None:
    if not isinstance(value, dict):
        return
    definition = spec.definition(name)
    props = definition.get("properties")
    if not props:
        return
    for prop, sub in props.items():
        if prop not in value and "default" in sub:
            value[prop] = copy.deepcopy(sub["default"])
    defaulter = _BY_TYPE.get(name)
    if defaulter is not None:
        defaulter(value)
    for prop, sub in props.items():
        if prop in value and prop != "metadata":
            _walk_schema(value[prop], sub)


def _walk_schema(value: Any, schema: dict[str, Any]) -> None:
    ref = schema.get("$ref")
    if ref:
        _walk_ref(value, ref)
    elif isinstance(value, list) and "items" in schema:
        for item in value:
            _walk_schema(item, schema["items"])
    elif isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        for item in value.values():
            _walk_schema(item, schema["additionalProperties"])


# -- per type (Go runs these wherever the type appears) ---------------------------------------------


def _pod_spec(spec_: Obj) -> None:
    spec_.setdefault("dnsPolicy", "ClusterFirst")
    spec_.setdefault("restartPolicy", "Always")
    spec_.setdefault("terminationGracePeriodSeconds", 30)
    spec_.setdefault("securityContext", {})
    spec_.setdefault("schedulerName", "default-scheduler")


def _container(c: Obj) -> None:
    image = str(c.get("image") or "")
    name = image.rsplit("/", 1)[-1]
    tag = name.split("@", 1)[0].partition(":")[2]
    latest = tag in ("", "latest") and "@" not in name
    if image:
        c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})  # a struct without a pointer: Go writes it even when empty


def _probe(p: Obj) -> None:
    p.setdefault("timeoutSeconds", 1)
    p.setdefault("periodSeconds", 10)
    p.setdefault("successThreshold", 1)
    p.setdefault("failureThreshold", 3)


def _service_spec(s: Obj) -> None:
    s.setdefault("type", "ClusterIP")
    s.setdefault("sessionAffinity", "None")
    if s["sessionAffinity"] == "ClientIP":
        s.setdefault("sessionAffinityConfig", {"clientIP": {"timeoutSeconds": 10800}})
    if s["type"] != "ExternalName":
        s.setdefault("internalTrafficPolicy", "Cluster")
    if s["type"] in ("NodePort", "LoadBalancer"):
        s.setdefault("externalTrafficPolicy", "Cluster")
    for port in s.get("ports") or []:
        if isinstance(port, dict) and not port.get("targetPort"):
            port["targetPort"] = port.get("port")


def _default_mode(v: Obj) -> None:
    v.setdefault("defaultMode", _POD_TEMPLATE_MODE)


def _setter(**defaults: Any) -> Callable[[Obj], None]:
    def apply_defaults(value: Obj) -> None:
        for key, default in defaults.items():
            value.setdefault(key, copy.deepcopy(default))

    return apply_defaults


_BY_TYPE: dict[str, Callable[[Obj], None]] = {
    "core_v1.PodSpec": _pod_spec,
    "core_v1.Container": _container,
    "core_v1.EphemeralContainer": _container,
    "core_v1.Probe": _probe,
    "core_v1.HTTPGetAction": _setter(scheme="HTTP"),
    "core_v1.ObjectFieldSelector": _setter(apiVersion="v1"),
    "core_v1.SecretVolumeSource": _default_mode,
    "core_v1.ConfigMapVolumeSource": _default_mode,
    "core_v1.DownwardAPIVolumeSource": _default_mode,
    "core_v1.ProjectedVolumeSource": _default_mode,
    "core_v1.PersistentVolumeClaimSpec": _setter(volumeMode="Filesystem"),
    "core_v1.ServiceSpec": _service_spec,
}


# -- per kind (Go runs these on the top-level object only) ------------------------------------------


def _spec(obj: Obj) -> Obj | None:
    value = obj.get("spec")
    return value if isinstance(value, dict) else None


def _empty_status(obj: Obj, old: Obj | None, **zero_fields: int) -> None:
    """A created object's status as the server writes it: the struct is not a pointer (`status: {}`),
    and its fields without `omitempty` are written as zeros (StatefulSetStatus.replicas, ...)."""
    if old is None:
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            for name, value in zero_fields.items():
                status.setdefault(name, value)


def _deployment(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old)
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("replicas", 1)
    strategy = s.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", "25%")
        rolling.setdefault("maxSurge", "25%")
    s.setdefault("revisionHistoryLimit", 10)
    s.setdefault("progressDeadlineSeconds", 600)


def _statefulset(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old, replicas=0, availableReplicas=0)
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("replicas", 1)
    s.setdefault("podManagementPolicy", "OrderedReady")
    strategy = s.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    s.setdefault("revisionHistoryLimit", 10)
    policy = s.setdefault("persistentVolumeClaimRetentionPolicy", {})
    policy.setdefault("whenDeleted", "Retain")
    policy.setdefault("whenScaled", "Retain")


def _daemonset(obj: Obj, old: Obj | None) -> None:
    _empty_status(
        obj, old, currentNumberScheduled=0, numberMisscheduled=0, desiredNumberScheduled=0, numberReady=0
    )
    s = _spec(obj)
    if s is None:
        return
    strategy = s.setdefault("updateStrategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxUnavailable", 1)
        rolling.setdefault("maxSurge", 0)
    s.setdefault("revisionHistoryLimit", 10)


def _replicaset(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old, replicas=0)
    s = _spec(obj)
    if s is not None:
        s.setdefault("replicas", 1)


def _job(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old)
    s = _spec(obj)
    if s is None:
        return
    if "completions" not in s and "parallelism" not in s:
        s["completions"] = 1
    s.setdefault("parallelism", 1)
    s.setdefault("backoffLimit", 2147483647 if "backoffLimitPerIndex" in s else 6)
    s.setdefault("completionMode", "NonIndexed")
    s.setdefault("suspend", False)
    s.setdefault("manualSelector", False)
    s.setdefault("podReplacementPolicy", "Failed" if "podFailurePolicy" in s else "TerminatingOrFailed")


def _cronjob(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old)
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("concurrencyPolicy", "Allow")
    s.setdefault("suspend", False)
    s.setdefault("successfulJobsHistoryLimit", 3)
    s.setdefault("failedJobsHistoryLimit", 1)


def _pod(obj: Obj, old: Obj | None) -> None:
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("enableServiceLinks", True)
    for c in s.get("containers") or []:
        resources = c.get("resources") if isinstance(c, dict) else None
        if isinstance(resources, dict) and resources.get("limits"):
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)  # requests default to limits (SetDefaults_Pod)


_ALLOCATED = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort")


def _service(obj: Obj, old: Obj | None) -> None:
    """An update that leaves out what the server allocated keeps it (the strategy's patchAllocatedValues)."""
    s, old_spec = _spec(obj), _spec(old or {})
    if s is None or old_spec is None or s.get("type") != old_spec.get("type"):
        return
    for key in _ALLOCATED:
        if key not in s and key in old_spec:
            s[key] = copy.deepcopy(old_spec[key])
    old_ports = {(p.get("port"), p.get("protocol")): p for p in old_spec.get("ports") or []}
    for port in s.get("ports") or []:
        previous = old_ports.get((port.get("port"), port.get("protocol")))
        if previous and "nodePort" in previous and "nodePort" not in port:
            port["nodePort"] = previous["nodePort"]


def _lease(obj: Obj, old: Obj | None) -> None:
    obj.setdefault("spec", {})


def _secret(obj: Obj, old: Obj | None) -> None:
    """The Secret strategy's PrepareForCreate/Update: stringData is written into data (base64) and
    never stored."""
    plain = obj.pop("stringData", None)
    if isinstance(plain, dict) and plain:
        import base64

        given = obj.get("data")
        data: dict[str, Any] = given if isinstance(given, dict) else {}
        for k, v in plain.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data
    obj.setdefault("type", "Opaque")


_BY_KIND: dict[tuple[str, str], Callable[[Obj, Obj | None], None]] = {
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ReplicaSet"): _replicaset,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("", "Pod"): _pod,
    ("", "Service"): _service,
    ("", "Secret"): _secret,
    ("coordination.k8s.io", "Lease"): _lease,
}
