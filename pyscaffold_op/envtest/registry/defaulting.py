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

from pyscaffold_op.envtest.registry.gozero import EMPTY_WHEN_UNSET, NULL_WHEN_UNSET, ZERO_FIELDS
from pyscaffold_op.envtest.registry.resources import ServedResource
from pyscaffold_op.envtest.types import Obj
from pyscaffold_op.models import spec

_POD_TEMPLATE_MODE = 420  # 0644, the default of secret/configMap/downwardAPI/projected volumes


def apply_types(info: ServedResource, obj: Obj) -> None:
    """Only the per-type defaults (the decoder's, which a status write gets too)."""
    api_version, kind = info.storage_type
    group, _, version = api_version.rpartition("/")
    name = spec.kinds().get((group, version, kind))
    if name is not None:
        _walk_ref(obj, name)


def apply(info: ServedResource, obj: Obj, old: Obj | None) -> None:
    """Default `obj` (about to be stored) in place; `old` is the stored object on updates."""
    api_version, kind = info.storage_type  # the stored form (autoscaling/v1 HPAs are stored as v2)
    group, _, version = api_version.rpartition("/")
    name = spec.kinds().get((group, version, kind))
    if name is not None:  # kinds the models lack (PriorityClass, RuntimeClass, ...) get their kind's only
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
    for time_field in NULL_WHEN_UNSET.get(name, ()):
        value.setdefault(time_field, None)  # Go's zero Time struct marshals to null
    for scalar, zero in ZERO_FIELDS.get(name, {}).items():
        if value.get(scalar) is None:  # no omitempty: Go writes the zero value (null decodes to it)
            value[scalar] = zero
    for struct_field in EMPTY_WHEN_UNSET.get(name, ()):
        if value.get(struct_field) is None:  # a struct, never omitted: null decodes to its zero too
            value[struct_field] = dict(ZERO_FIELDS.get(props.get(struct_field, {}).get("$ref", ""), {}))
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
    # serviceAccount is the deprecated alias of serviceAccountName: the two are kept alike, the
    # new name winning when both are set
    if not spec_.get("serviceAccountName") and spec_.get("serviceAccount"):
        spec_["serviceAccountName"] = spec_["serviceAccount"]
    if spec_.get("serviceAccountName"):
        spec_["serviceAccount"] = spec_["serviceAccountName"]
    else:
        spec_.pop("serviceAccount", None)
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


def _volume(v: Obj) -> None:
    """SetDefaults_Volume: a volume naming no source is an emptyDir."""
    if all(value is None for key, value in v.items() if key != "name"):
        v["emptyDir"] = {}


def _default_mode(v: Obj) -> None:
    v.setdefault("defaultMode", _POD_TEMPLATE_MODE)


def _setter(**defaults: Any) -> Callable[[Obj], None]:
    def apply_defaults(value: Obj) -> None:
        for key, default in defaults.items():
            value.setdefault(key, copy.deepcopy(default))

    return apply_defaults


_WEBHOOK: dict[str, Any] = {
    "failurePolicy": "Fail",
    "matchPolicy": "Equivalent",
    "namespaceSelector": {},
    "objectSelector": {},
    "timeoutSeconds": 10,
}

_BY_TYPE: dict[str, Callable[[Obj], None]] = {
    "core_v1.PodSpec": _pod_spec,
    "core_v1.Container": _container,
    "core_v1.EphemeralContainer": _container,
    "core_v1.Probe": _probe,
    "core_v1.HTTPGetAction": _setter(scheme="HTTP"),
    "core_v1.ObjectFieldSelector": _setter(apiVersion="v1"),
    "core_v1.Volume": _volume,
    "core_v1.SecretVolumeSource": _default_mode,
    "core_v1.ConfigMapVolumeSource": _default_mode,
    "core_v1.DownwardAPIVolumeSource": _default_mode,
    "core_v1.ProjectedVolumeSource": _default_mode,
    "core_v1.PersistentVolumeClaimSpec": _setter(volumeMode="Filesystem"),
    "core_v1.ServiceSpec": _service_spec,
    # admissionregistration/v1 defaults.go
    "admissionregistration_v1.ValidatingWebhook": _setter(**_WEBHOOK),
    "admissionregistration_v1.MutatingWebhook": _setter(**_WEBHOOK, reinvocationPolicy="Never"),
    "admissionregistration_v1.RuleWithOperations": _setter(scope="*"),
    "admissionregistration_v1.NamedRuleWithOperations": _setter(scope="*"),
    "admissionregistration_v1.ServiceReference": _setter(port=443),
    "admissionregistration_v1.ValidatingAdmissionPolicySpec": _setter(failurePolicy="Fail"),
    "admissionregistration_v1.MutatingAdmissionPolicySpec": _setter(failurePolicy="Fail"),
    "admissionregistration_v1.MatchResources": _setter(
        matchPolicy="Equivalent", namespaceSelector={}, objectSelector={}
    ),
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
    if not strategy.get("type"):  # SetDefaults_StatefulSet: rollingUpdate only with a defaulted type
        strategy["type"] = "RollingUpdate"
        strategy.setdefault("rollingUpdate", {})
    rolling = strategy.get("rollingUpdate")
    if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
        rolling.setdefault("partition", 0)
        rolling.setdefault("maxUnavailable", 1)  # MaxUnavailableStatefulSet: on by default since 1.37
    s.setdefault("revisionHistoryLimit", 10)
    policy = s.setdefault("persistentVolumeClaimRetentionPolicy", {})
    policy.setdefault("whenDeleted", "Retain")
    policy.setdefault("whenScaled", "Retain")


_DS_GENERATION = "deprecated.daemonset.template.generation"


def _daemonset(obj: Obj, old: Obj | None) -> None:
    _empty_status(
        obj, old, currentNumberScheduled=0, numberMisscheduled=0, desiredNumberScheduled=0, numberReady=0
    )
    s = _spec(obj)
    if s is None:
        return
    # the strategy's template generation annotation: 1 on create, +1 when the pod template changes
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        before = ((old or {}).get("metadata") or {}).get("annotations") or {}
        generation = before.get(_DS_GENERATION, "0") if old is not None else "0"
        changed = old is None or (old.get("spec") or {}).get("template") != s.get("template")
        if changed and generation.isdigit():
            generation = str(int(generation) + 1)
        annotations = meta.get("annotations")
        if not isinstance(annotations, dict):
            annotations = meta["annotations"] = {}
        annotations[_DS_GENERATION] = generation
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


def _replication_controller(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_ReplicationController: the template's labels are the selector and the labels
    when those are empty; one replica."""
    _empty_status(obj, old, replicas=0)
    s = _spec(obj)
    if s is None:
        return
    template = s.get("template")
    labels = ((template.get("metadata") or {}) if isinstance(template, dict) else {}).get("labels")
    if isinstance(labels, dict):
        if not s.get("selector"):
            s["selector"] = dict(labels)
        meta = obj.setdefault("metadata", {})
        if not meta.get("labels"):
            meta["labels"] = dict(labels)
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
    # JobTemplateSpec and PodTemplateSpec embed ObjectMeta by value: Go writes `metadata: {}`
    template = s.get("jobTemplate")
    if isinstance(template, dict):
        template.setdefault("metadata", {})
        pod_template = (template.get("spec") or {}).get("template")
        if isinstance(pod_template, dict):
            pod_template.setdefault("metadata", {})
    s.setdefault("concurrencyPolicy", "Allow")
    s.setdefault("suspend", False)
    s.setdefault("successfulJobsHistoryLimit", 3)
    s.setdefault("failedJobsHistoryLimit", 1)


def _pod(obj: Obj, old: Obj | None) -> None:
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("enableServiceLinks", True)
    # the Priority admission plugin: no priorityClassName and no global default class
    s.setdefault("priority", 0)
    s.setdefault("preemptionPolicy", "PreemptLowerPriority")
    for c in [*(s.get("containers") or []), *(s.get("initContainers") or [])]:
        resources = c.get("resources") if isinstance(c, dict) else None
        if isinstance(resources, dict) and resources.get("limits"):
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)  # requests default to limits (SetDefaults_Pod)


_ALLOCATED = ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy", "healthCheckNodePort")


def _service(obj: Obj, old: Obj | None) -> None:
    """An update that leaves out what the server allocated keeps it (the strategy's patchAllocatedValues);
    a create gets the single-stack IPv4 families of a default cluster."""
    s, old_spec = _spec(obj), _spec(old or {})
    allocated = s is not None and s.get("type") != "ExternalName"
    if s is not None and old is None and allocated and (s.get("clusterIP") != "None" or s.get("selector")):
        s.setdefault("ipFamilies", ["IPv4"])
        s.setdefault("ipFamilyPolicy", "SingleStack")
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

        current = obj.get("data")
        data: dict[str, Any] = current if isinstance(current, dict) else {}
        for k, v in plain.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _hpa(obj: Obj, old: Obj | None) -> None:
    """autoscaling/v2 SetDefaults_HorizontalPodAutoscaler: minReplicas 1, a CPU target of 80% when
    there are no metrics; a created HPA's status has desiredReplicas and currentMetrics (no omitempty)."""
    if old is None:
        status = obj.setdefault("status", {})
        if isinstance(status, dict):
            status.setdefault("currentMetrics", None)
            status.setdefault("desiredReplicas", 0)
    s = _spec(obj)
    if s is None:
        return
    s.setdefault("minReplicas", 1)
    if not s.get("metrics"):
        s["metrics"] = [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ]


def _csidriver(obj: Obj, old: Obj | None) -> None:
    s = obj.setdefault("spec", {})
    if isinstance(s, dict):
        for key, value in (
            ("attachRequired", True),
            ("podInfoOnMount", False),
            ("volumeLifecycleModes", ["Persistent"]),
            ("storageCapacity", False),
            ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
            ("requiresRepublish", False),
            ("seLinuxMount", False),
            ("preventPodSchedulingIfMissing", False),
        ):
            s.setdefault(key, copy.deepcopy(value))


def _storageclass(obj: Obj, old: Obj | None) -> None:
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")


def _priorityclass(obj: Obj, old: Obj | None) -> None:
    obj.setdefault("preemptionPolicy", "PreemptLowerPriority")


def _match_resources(m: Any) -> None:
    if isinstance(m, dict):
        m.setdefault("namespaceSelector", {})
        m.setdefault("objectSelector", {})
        m.setdefault("matchPolicy", "Equivalent")
        for rule in m.get("resourceRules") or ():
            if isinstance(rule, dict):
                rule.setdefault("scope", "*")


def _admission_policy(obj: Obj, old: Obj | None) -> None:
    _empty_status(obj, old)
    s = _spec(obj)
    if s is not None:
        s.setdefault("failurePolicy", "Fail")
        _match_resources(s.get("matchConstraints"))


def _policy_binding(obj: Obj, old: Obj | None) -> None:
    s = _spec(obj)
    if s is not None:
        _match_resources(s.get("matchResources"))


def _with_status(**fields: Any) -> Callable[[Obj, Obj | None], None]:
    def on_create(obj: Obj, old: Obj | None) -> None:
        _empty_status(obj, old)
        status = obj.get("status")
        if old is None and isinstance(status, dict):
            for key, value in fields.items():
                status.setdefault(key, copy.deepcopy(value))

    return on_create


def _network_policy(obj: Obj, old: Obj | None) -> None:
    s = _spec(obj)
    if s is not None and not s.get("policyTypes"):
        s["policyTypes"] = ["Ingress", "Egress"] if s.get("egress") else ["Ingress"]


def _endpoints(obj: Obj, old: Obj | None) -> None:
    for subset in obj.get("subsets") or ():
        for port in (subset.get("ports") or ()) if isinstance(subset, dict) else ():
            if isinstance(port, dict):
                port.setdefault("protocol", "TCP")


def _namespace(obj: Obj, old: Obj | None) -> None:
    """The namespace strategy labels every namespace with its name, on updates too."""
    meta = obj.get("metadata")
    if isinstance(meta, dict) and meta.get("name"):
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels["kubernetes.io/metadata.name"] = meta["name"]


def _limit_range(obj: Obj, old: Obj | None) -> None:
    """SetDefaults_LimitRangeItem: a Container item's missing default limits are its max, its
    missing default requests the default limits, then its min (an empty map is left out)."""
    for item in (_spec(obj) or {}).get("limits") or ():
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        for key, value in (item.get("max") or {}).items():
            default.setdefault(key, value)
        request = dict(item.get("defaultRequest") or {})
        for source in (default, item.get("min") or {}):
            for key, value in source.items():
                request.setdefault(key, value)
        for field, values in (("default", default), ("defaultRequest", request)):
            if values:
                item[field] = values


_BY_KIND: dict[tuple[str, str], Callable[[Obj, Obj | None], None]] = {
    ("", "LimitRange"): _limit_range,
    ("", "Namespace"): _namespace,
    ("networking.k8s.io", "NetworkPolicy"): _network_policy,
    ("", "Endpoints"): _endpoints,
    ("policy", "PodDisruptionBudget"): _with_status(
        currentHealthy=0, desiredHealthy=0, disruptionsAllowed=0, expectedPods=0
    ),
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("storage.k8s.io", "CSIDriver"): _csidriver,
    ("storage.k8s.io", "StorageClass"): _storageclass,
    ("storage.k8s.io", "CSINode"): _with_status(),
    ("storage.k8s.io", "VolumeAttachment"): _with_status(attached=False),
    ("scheduling.k8s.io", "PriorityClass"): _priorityclass,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _admission_policy,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _policy_binding,
    ("networking.k8s.io", "Ingress"): _with_status(loadBalancer={}),
    ("", "ResourceQuota"): _with_status(),
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ReplicaSet"): _replicaset,
    ("", "ReplicationController"): _replication_controller,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("", "Pod"): _pod,
    ("", "Service"): _service,
    ("", "Secret"): _secret,
    ("coordination.k8s.io", "Lease"): _lease,
}
