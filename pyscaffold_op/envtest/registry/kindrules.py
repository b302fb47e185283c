"""Per-kind facts of kube-apiserver v1.37.2's registries, as data taken from the Go sources
(`k8s.io/kubernetes/pkg/registry/*/*/{strategy,storage/storage}.go` and
`pkg/apis/*/validation/validation.go`): the name rule of each kind, which kinds a PUT may create,
which DELETEs answer with the object, and which kinds orphan their dependents unless told otherwise.
Kinds not listed take the common case (DNS-1123 subdomain names, no create on update, a Status)."""

from __future__ import annotations

from typing import Literal

from pyscaffold_op.envtest.types import GR

NameRule = Literal["subdomain", "label", "path-segment"]

# ValidateObjectMeta's name function per kind. Every create also passes the generic registry's
# path-segment check (rest.BeforeCreate), which is all the kinds below with "path-segment" get:
# RBAC's ValidateRBACName is IsPathSegmentName, and PodDisruptionBudgets validate no name at all.
NAME_RULES: dict[GR, NameRule] = {
    ("", "namespaces"): "label",  # ValidateNamespaceName
    ("", "services"): "label",  # RelaxedServiceNameValidation (GA in 1.37): NameIsDNSLabel
    ("apps", "statefulsets"): "label",  # ValidateStatefulSetName
    ("rbac.authorization.k8s.io", "roles"): "path-segment",
    ("rbac.authorization.k8s.io", "rolebindings"): "path-segment",
    ("rbac.authorization.k8s.io", "clusterroles"): "path-segment",
    ("rbac.authorization.k8s.io", "clusterrolebindings"): "path-segment",
    ("policy", "poddisruptionbudgets"): "path-segment",
    ("certificates.k8s.io", "certificatesigningrequests"): "path-segment",  # ValidateCertificateRequestName
}

# AllowCreateOnUpdate() true: a PUT of a missing object creates it (201)
CREATE_ON_UPDATE: frozenset[GR] = frozenset(
    {
        ("", "endpoints"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("", "limitranges"),
        ("", "services"),
        ("coordination.k8s.io", "leases"),
        ("coordination.k8s.io", "leasecandidates"),
        ("node.k8s.io", "runtimeclasses"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
    }
)

# ReturnDeletedObject: true in the registry's storage: DELETE answers with the object, not a Status
RETURNS_DELETED_OBJECT: frozenset[GR] = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "namespaces"),
        ("", "serviceaccounts"),
        ("", "persistentvolumes"),
        ("", "persistentvolumeclaims"),
        ("", "resourcequotas"),
        ("", "podtemplates"),
        ("storage.k8s.io", "csidrivers"),
        ("storage.k8s.io", "csinodes"),
        ("storage.k8s.io", "storageclasses"),
        ("storage.k8s.io", "volumeattachments"),
        ("storage.k8s.io", "volumeattributesclasses"),
        ("resource.k8s.io", "resourceclaims"),
        ("resource.k8s.io", "resourceclaimtemplates"),
        ("resource.k8s.io", "resourceslices"),
        ("resource.k8s.io", "deviceclasses"),
        ("resource.k8s.io", "resourcepoolstatusrequests"),
    }
)

# DefaultGarbageCollectionPolicy OrphanDependents (kept for compatibility in these group versions):
# a DELETE without a propagation policy adds the `orphan` finalizer
ORPHAN_BY_DEFAULT: frozenset[tuple[str, str, str]] = frozenset(
    {("batch", "v1", "jobs"), ("", "v1", "replicationcontrollers")}
)

# PrepareForCreate names a nameless object itself (limitrange strategy: a random UUID)
NAMED_BY_STRATEGY: frozenset[GR] = frozenset({("", "limitranges")})

# The deprecation filter's Warning on every request to a deprecated resource, as kube-apiserver
# v1.37.2 words it (deprecation.go: "<group/version> <Kind> is deprecated in v<major>.<minor>+",
# then the replacement)
DEPRECATED: dict[tuple[str, str, str], str] = {
    ("", "v1", "endpoints"): "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
    ("", "v1", "componentstatuses"): "v1 ComponentStatus is deprecated in v1.19+",
}

# Kinds whose objects kube-apiserver v1.37.2 stores without managedFields: its field manager fails
# on them and UpdateNoErrors then clears the entries (observed on create, update, /approval and
# /status of CertificateSigningRequests by the conformance corpus)
UNTRACKED_FIELDS: frozenset[GR] = frozenset({("certificates.k8s.io", "certificatesigningrequests")})
