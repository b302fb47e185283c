"""The top-level fields of the built-in kinds' Go types, and ObjectMeta's.

kube-apiserver decodes a built-in object into its Go struct, so a field the struct lacks is dropped
(reported with `fieldValidation=Warn`, refused with `Strict`). The emulator stores built-ins as
dicts: without this table an unknown field of any size would be kept and served back.
Only the top level and `metadata` are checked; deeper fields of built-ins are kept as sent.
"""

from __future__ import annotations

from typing import Any

from pyscaffold_op.apimachinery.objectmeta import OBJECT_META_FIELDS

_SPEC_STATUS = ("spec", "status")

# (group, kind) -> fields besides apiVersion, kind and metadata (from k8s.io/api, v1.32)
_FIELDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("", "Pod"): _SPEC_STATUS,
    ("", "Service"): _SPEC_STATUS,
    ("", "ConfigMap"): ("immutable", "data", "binaryData"),
    ("", "Secret"): ("immutable", "data", "stringData", "type"),
    ("", "Event"): (
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "series",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ),
    ("", "Namespace"): _SPEC_STATUS,
    ("", "ServiceAccount"): ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    ("", "Endpoints"): ("subsets",),
    ("", "PersistentVolumeClaim"): _SPEC_STATUS,
    ("", "PersistentVolume"): _SPEC_STATUS,
    ("", "Node"): _SPEC_STATUS,
    ("", "ResourceQuota"): _SPEC_STATUS,
    ("", "LimitRange"): ("spec",),
    ("apps", "Deployment"): _SPEC_STATUS,
    ("apps", "StatefulSet"): _SPEC_STATUS,
    ("apps", "ReplicaSet"): _SPEC_STATUS,
    ("apps", "DaemonSet"): _SPEC_STATUS,
    ("apps", "ControllerRevision"): ("data", "revision"),
    ("batch", "Job"): _SPEC_STATUS,
    ("batch", "CronJob"): _SPEC_STATUS,
    ("coordination.k8s.io", "Lease"): ("spec",),
    ("events.k8s.io", "Event"): (
        "eventTime",
        "series",
        "reportingController",
        "reportingInstance",
        "action",
        "reason",
        "regarding",
        "related",
        "note",
        "type",
        "deprecatedSource",
        "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp",
        "deprecatedCount",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _SPEC_STATUS,
    ("rbac.authorization.k8s.io", "Role"): ("rules",),
    ("rbac.authorization.k8s.io", "ClusterRole"): ("rules", "aggregationRule"),
    ("rbac.authorization.k8s.io", "RoleBinding"): ("subjects", "roleRef"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): ("subjects", "roleRef"),
    ("networking.k8s.io", "Ingress"): _SPEC_STATUS,
    ("networking.k8s.io", "NetworkPolicy"): ("spec",),
    ("policy", "PodDisruptionBudget"): _SPEC_STATUS,
    ("autoscaling", "HorizontalPodAutoscaler"): _SPEC_STATUS,
    ("discovery.k8s.io", "EndpointSlice"): ("addressType", "endpoints", "ports"),
    ("storage.k8s.io", "StorageClass"): (
        "provisioner",
        "parameters",
        "reclaimPolicy",
        "mountOptions",
        "allowVolumeExpansion",
        "volumeBindingMode",
        "allowedTopologies",
    ),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): ("webhooks",),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): ("webhooks",),
    ("scheduling.k8s.io", "PriorityClass"): ("value", "globalDefault", "description", "preemptionPolicy"),
}


def prune_unknown(group: str, kind: str, obj: dict[str, Any]) -> list[str]:
    """Drop the top-level and metadata fields the kind's Go type does not have; returns their paths
    (`foo`, `metadata.bar`) in the order sent. Kinds missing from the table are left alone."""
    known = _FIELDS.get((group, kind))
    if known is None:
        return []
    found: list[str] = []
    for key in list(obj):
        if key not in known and key not in ("apiVersion", "kind", "metadata"):
            found.append(key)
            del obj[key]
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        for key in list(meta):
            if key not in OBJECT_META_FIELDS:
                found.append(f"metadata.{key}")
                del meta[key]
    return found
