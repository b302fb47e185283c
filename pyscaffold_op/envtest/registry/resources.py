"""What the server serves: one `ServedResource` per group/version/resource, built-ins plus installed CRDs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyscaffold_op.envtest.registry import crossgroup, kindrules

if TYPE_CHECKING:
    from pyscaffold_op.apiextensions.compiled import CompiledSchema

_CRD_GROUP = "apiextensions.k8s.io"
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass
class ServedResource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True
    singular: str = ""
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    status: bool = False  # has a /status subresource
    scale: dict[str, str] | None = None  # {specReplicasPath, statusReplicasPath, labelSelectorPath}
    generation: bool = False  # metadata.generation tracks spec changes
    custom: bool = False  # served from a CRD: schema validation, pruning, CR semantics
    schema: dict[str, Any] | None = None  # openAPIV3Schema for custom resources
    printer_columns: list[dict[str, Any]] | None = None
    field_selectors: tuple[str, ...] = ()  # extra selectable fields beyond metadata.name/namespace
    storage: bool = True  # the storage version: objects are stored under it
    list_kind: str = ""
    # Served from another resource's storage (events.k8s.io Events live with core Events):
    # (group, plural, apiVersion, kind) of the storage, and the converters both ways.
    stored_as: tuple[str, str, str, str] | None = None
    to_storage: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    from_storage: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    review: bool = False  # create-only and never stored (TokenReview, SubjectAccessReview): reviews.py
    # DELETE answers with the deleted object instead of a Status (the registry's ReturnDeletedObject)
    delete_returns_object: bool = False
    # more subresources in discovery: (name, verbs, group, version, kind) of e.g. pods/log, served
    # by subresources.py
    subresources: tuple[tuple[str, tuple[str, ...], str, str, str], ...] = ()
    # A CRD's spec.conversion when its strategy is Webhook: other versions are converted by calling it.
    conversion_webhook: dict[str, Any] | None = None
    # the verbs served when not all of VERBS (componentstatuses: get, list; namespaces: no
    # deletecollection); other verbs are 405
    verbs: tuple[str, ...] | None = None
    _compiled: CompiledSchema | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.singular = self.singular or self.kind.lower()
        self.list_kind = self.list_kind or self.kind + "List"
        if not self.custom and self.group_resource in kindrules.RETURNS_DELETED_OBJECT:
            self.delete_returns_object = True

    @property
    def name_rule(self) -> kindrules.NameRule:
        """The rule of this kind's names (custom resources: DNS-1123 subdomains)."""
        if self.custom:
            return "subdomain"
        return kindrules.NAME_RULES.get(self.group_resource, "subdomain")

    @property
    def kube_finalizers(self) -> bool:
        """Validated by core's ValidateObjectMeta, whose finalizer names without a domain must be
        standard ones (custom resources, CRDs and admission configurations use apimachinery's)."""
        return not self.custom and self.group not in (_CRD_GROUP, "admissionregistration.k8s.io")

    @property
    def create_on_update(self) -> bool:
        return not self.custom and self.group_resource in kindrules.CREATE_ON_UPDATE

    @property
    def compiled_schema(self) -> CompiledSchema:
        """`schema` compiled for pruning, defaulting and validation: built on the first write, again
        when `schema` is another object (a CRD update serves a new ServedResource anyway)."""
        found = self._compiled
        if found is None or found.schema is not self.schema:
            from pyscaffold_op.apiextensions import schemacache

            # a CRD's schema is the shared instance of its content (`crds.resource_infos`): compiled
            # once per process, whichever environment serves it
            found = self._compiled = schemacache.compiled(self.schema)
        return found

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> tuple[str, str]:
        return (self.group, self.plural)

    @property
    def bucket(self) -> tuple[str, str]:
        """Where the store keeps these objects (and which watchers see them)."""
        return self.stored_as[:2] if self.stored_as else (self.group, self.plural)

    @property
    def storage_type(self) -> tuple[str, str]:
        """(apiVersion, kind) of the stored form."""
        return self.stored_as[2:] if self.stored_as else (self.api_version, self.kind)

    def allows(self, verb: str) -> bool:
        return self.verbs is None or verb in self.verbs

    def discovery(self) -> list[dict[str, Any]]:
        """Entries of this resource (and its subresources) in an APIResourceList."""
        main = {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": ["create"] if self.review else list(self.verbs or VERBS),
        }
        if self.short_names:
            main["shortNames"] = self.short_names
        if self.categories:
            main["categories"] = self.categories
        out = [main]
        if self.status:
            out.append(
                {
                    "name": f"{self.plural}/status",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "kind": self.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        if self.scale:
            out.append(
                {
                    "name": f"{self.plural}/scale",
                    "singularName": "",
                    "namespaced": self.namespaced,
                    "group": "autoscaling",
                    "version": "v1",
                    "kind": "Scale",
                    "verbs": ["get", "patch", "update"],
                }
            )
        for sub, verbs, group, version, kind in self.subresources:
            entry: dict[str, Any] = {
                "name": f"{self.plural}/{sub}",
                "singularName": "",
                "namespaced": self.namespaced,
            }
            if group or version != self.version:
                entry["group"], entry["version"] = group, version
            out.append({**entry, "kind": kind, "verbs": list(verbs)})
        return out


def _r(gv: str, kind: str, plural: str, **kw: Any) -> ServedResource:
    group, _, version = gv.rpartition("/")
    return ServedResource(group=group, version=version, kind=kind, plural=plural, **kw)


_SCALE = {
    "specReplicasPath": ".spec.replicas",
    "statusReplicasPath": ".status.replicas",
    "labelSelectorPath": ".spec.selector",
}
_PROXY = ("create", "delete", "get", "patch", "update")
_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
EVENT_FIELD_SELECTORS = (  # also the server's list of what core/v1 Events select by
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)


def builtin_resources() -> list[ServedResource]:
    """The built-in kinds operators commonly touch (a subset of a real cluster's)."""
    return [
        _r(
            "v1",
            "Pod",
            "pods",
            short_names=["po"],
            categories=["all"],
            status=True,
            generation=True,
            field_selectors=_POD_FIELDS,
            delete_returns_object=True,
            subresources=(
                ("attach", ("create", "get"), "", "v1", "PodAttachOptions"),
                ("binding", ("create",), "", "v1", "Binding"),
                ("ephemeralcontainers", ("get", "patch", "update"), "", "v1", "Pod"),
                ("eviction", ("create",), "policy", "v1", "Eviction"),
                ("exec", ("create", "get"), "", "v1", "PodExecOptions"),
                ("log", ("get",), "", "v1", "Pod"),
                ("portforward", ("create", "get"), "", "v1", "PodPortForwardOptions"),
                ("proxy", _PROXY, "", "v1", "PodProxyOptions"),
                ("resize", ("get", "patch", "update"), "", "v1", "Pod"),
            ),
        ),
        _r(
            "v1",
            "Service",
            "services",
            short_names=["svc"],
            categories=["all"],
            status=True,
            delete_returns_object=True,
            subresources=(("proxy", _PROXY, "", "v1", "ServiceProxyOptions"),),
        ),
        _r("v1", "Binding", "bindings", verbs=("create",)),  # pods/binding by the body's name
        _r(
            "v1",
            "ComponentStatus",
            "componentstatuses",
            namespaced=False,
            short_names=["cs"],
            verbs=("get", "list"),
        ),
        _r("v1", "ConfigMap", "configmaps", short_names=["cm"]),
        _r("v1", "Secret", "secrets", field_selectors=("type",)),
        _r("v1", "Event", "events", short_names=["ev"], field_selectors=EVENT_FIELD_SELECTORS),
        _r(
            "v1",
            "Namespace",
            "namespaces",
            namespaced=False,
            short_names=["ns"],
            status=True,
            field_selectors=("status.phase",),
            verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
            subresources=(("finalize", ("update",), "", "v1", "Namespace"),),
        ),
        _r(
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            short_names=["sa"],
            delete_returns_object=True,
            subresources=(("token", ("create",), "authentication.k8s.io", "v1", "TokenRequest"),),
        ),
        _r("v1", "Endpoints", "endpoints", short_names=["ep"], singular="endpoints"),
        _r(
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            short_names=["pvc"],
            status=True,
            delete_returns_object=True,
        ),
        _r(
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            namespaced=False,
            short_names=["pv"],
            status=True,
            delete_returns_object=True,
        ),
        _r(
            "v1",
            "Node",
            "nodes",
            namespaced=False,
            short_names=["no"],
            status=True,
            field_selectors=("spec.unschedulable",),
            subresources=(("proxy", _PROXY, "", "v1", "NodeProxyOptions"),),
        ),
        _r(
            "v1",
            "ResourceQuota",
            "resourcequotas",
            short_names=["quota"],
            status=True,
            delete_returns_object=True,
        ),
        _r("v1", "LimitRange", "limitranges", short_names=["limits"]),
        _r(
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            short_names=["rc"],
            categories=["all"],
            status=True,
            scale=_SCALE,
            generation=True,
        ),
        _r("v1", "PodTemplate", "podtemplates", generation=True),
        _r(
            "apps/v1",
            "Deployment",
            "deployments",
            short_names=["deploy"],
            categories=["all"],
            status=True,
            scale=_SCALE,
            generation=True,
        ),
        _r(
            "apps/v1",
            "StatefulSet",
            "statefulsets",
            short_names=["sts"],
            categories=["all"],
            status=True,
            scale=_SCALE,
            generation=True,
        ),
        _r(
            "apps/v1",
            "ReplicaSet",
            "replicasets",
            short_names=["rs"],
            categories=["all"],
            status=True,
            scale=_SCALE,
            generation=True,
        ),
        _r(
            "apps/v1",
            "DaemonSet",
            "daemonsets",
            short_names=["ds"],
            categories=["all"],
            status=True,
            generation=True,
        ),
        _r("apps/v1", "ControllerRevision", "controllerrevisions"),
        _r(
            "batch/v1",
            "Job",
            "jobs",
            categories=["all"],
            status=True,
            generation=True,
            field_selectors=("status.successful",),
        ),
        _r(
            "batch/v1",
            "CronJob",
            "cronjobs",
            short_names=["cj"],
            categories=["all"],
            status=True,
            generation=True,
        ),
        _r("coordination.k8s.io/v1", "Lease", "leases"),
        _r(
            "events.k8s.io/v1",
            "Event",
            "events",
            short_names=["ev"],
            field_selectors=("regarding.kind", "regarding.name", "regarding.namespace", "reason", "type"),
            stored_as=("", "events", "v1", "Event"),
            to_storage=crossgroup.v1_event_to_core,
            from_storage=crossgroup.core_event_to_v1,
        ),
        _r(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            namespaced=False,
            short_names=["crd", "crds"],
            categories=["api-extensions"],
            status=True,
            generation=True,
        ),
        _r("rbac.authorization.k8s.io/v1", "Role", "roles"),
        _r("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings"),
        _r("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", namespaced=False),
        _r("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", namespaced=False),
        _r("networking.k8s.io/v1", "Ingress", "ingresses", short_names=["ing"], status=True, generation=True),
        _r(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            "networkpolicies",
            short_names=["netpol"],
            generation=True,
        ),
        _r(
            "policy/v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            short_names=["pdb"],
            status=True,
            generation=True,
        ),
        _r(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            short_names=["hpa"],
            categories=["all"],
            status=True,
            generation=True,
        ),
        _r(
            "autoscaling/v1",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            short_names=["hpa"],
            categories=["all"],
            status=True,
            generation=True,
            storage=False,
            stored_as=(
                "autoscaling",
                "horizontalpodautoscalers",
                "autoscaling/v2",
                "HorizontalPodAutoscaler",
            ),
            to_storage=crossgroup.hpa_v1_to_v2,
            from_storage=crossgroup.hpa_v2_to_v1,
        ),
        # its strategy sets generation 1 and bumps it for any change but metadata's (labels too)
        _r("discovery.k8s.io/v1", "EndpointSlice", "endpointslices", generation=True),
        _r("storage.k8s.io/v1", "StorageClass", "storageclasses", namespaced=False, short_names=["sc"]),
        _r("storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacities"),
        _r("storage.k8s.io/v1", "CSIDriver", "csidrivers", namespaced=False),
        _r("storage.k8s.io/v1", "CSINode", "csinodes", namespaced=False, status=True),
        _r("storage.k8s.io/v1", "VolumeAttachment", "volumeattachments", namespaced=False, status=True),
        _r(
            "storage.k8s.io/v1",
            "VolumeAttributesClass",
            "volumeattributesclasses",
            namespaced=False,
            short_names=["vac"],
        ),
        _r("node.k8s.io/v1", "RuntimeClass", "runtimeclasses", namespaced=False),
        _r("networking.k8s.io/v1", "IngressClass", "ingressclasses", namespaced=False, generation=True),
        _r("networking.k8s.io/v1", "IPAddress", "ipaddresses", namespaced=False, short_names=["ip"]),
        _r("networking.k8s.io/v1", "ServiceCIDR", "servicecidrs", namespaced=False, status=True),
        _r("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "flowschemas", namespaced=False, status=True),
        _r(
            "flowcontrol.apiserver.k8s.io/v1",
            "PriorityLevelConfiguration",
            "prioritylevelconfigurations",
            namespaced=False,
            status=True,
        ),
        _r("resource.k8s.io/v1", "DeviceClass", "deviceclasses", namespaced=False),
        _r("resource.k8s.io/v1", "DeviceTaintRule", "devicetaintrules", namespaced=False, status=True),
        _r("resource.k8s.io/v1", "ResourceClaim", "resourceclaims", status=True),
        _r("resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates"),
        _r("resource.k8s.io/v1", "ResourceSlice", "resourceslices", namespaced=False),
        _r(
            "storagemigration.k8s.io/v1",
            "StorageVersionMigration",
            "storageversionmigrations",
            namespaced=False,
            status=True,
        ),
        _r("certificates.k8s.io/v1", "ClusterTrustBundle", "clustertrustbundles", namespaced=False),
        _r("certificates.k8s.io/v1", "PodCertificateRequest", "podcertificaterequests", status=True),
        _r(
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            "certificatesigningrequests",
            namespaced=False,
            short_names=["csr"],
            status=True,
            subresources=(("approval", ("get", "patch", "update"), "", "v1", "CertificateSigningRequest"),),
        ),
        _r(
            "apiregistration.k8s.io/v1",
            "APIService",
            "apiservices",
            namespaced=False,
            categories=["api-extensions"],
            status=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            namespaced=False,
            categories=["api-extensions"],
            generation=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            namespaced=False,
            categories=["api-extensions"],
            generation=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
            "validatingadmissionpolicies",
            namespaced=False,
            categories=["api-extensions"],
            status=True,
            generation=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding",
            "validatingadmissionpolicybindings",
            namespaced=False,
            categories=["api-extensions"],
            generation=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "MutatingAdmissionPolicy",
            "mutatingadmissionpolicies",
            namespaced=False,
            categories=["api-extensions"],
            generation=True,
        ),
        _r(
            "admissionregistration.k8s.io/v1",
            "MutatingAdmissionPolicyBinding",
            "mutatingadmissionpolicybindings",
            namespaced=False,
            categories=["api-extensions"],
            generation=True,
        ),
        _r(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            "priorityclasses",
            namespaced=False,
            short_names=["pc"],
            generation=True,
        ),
        _r("authentication.k8s.io/v1", "TokenReview", "tokenreviews", namespaced=False, review=True),
        _r(
            "authentication.k8s.io/v1",
            "SelfSubjectReview",
            "selfsubjectreviews",
            namespaced=False,
            review=True,
        ),
        _r("authorization.k8s.io/v1", "LocalSubjectAccessReview", "localsubjectaccessreviews", review=True),
        _r(
            "authorization.k8s.io/v1",
            "SelfSubjectRulesReview",
            "selfsubjectrulesreviews",
            namespaced=False,
            review=True,
        ),
        _r(
            "authorization.k8s.io/v1",
            "SubjectAccessReview",
            "subjectaccessreviews",
            namespaced=False,
            review=True,
        ),
        _r(
            "authorization.k8s.io/v1",
            "SelfSubjectAccessReview",
            "selfsubjectaccessreviews",
            namespaced=False,
            review=True,
        ),
    ]


# Preferred group versions for discovery, in the order kubectl expects core groups.
GROUP_ORDER = [
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "storagemigration.k8s.io",
]


class Registry:
    """Lookup of resources by group/version/plural, kind, and served group versions."""

    def __init__(self) -> None:
        self._by_gvr: dict[tuple[str, str, str], ServedResource] = {}
        for info in builtin_resources():
            self.add(info)

    def add(self, info: ServedResource) -> None:
        self._by_gvr[(info.group, info.version, info.plural)] = info

    def remove_group_resource(self, group: str, plural: str) -> None:
        for key in [k for k in self._by_gvr if k[0] == group and k[2] == plural]:
            del self._by_gvr[key]

    def get(self, group: str, version: str, plural: str) -> ServedResource | None:
        return self._by_gvr.get((group, version, plural))

    def serves_group(self, group: str) -> bool:
        return any(g == group for g, _v, _p in self._by_gvr)

    def all(self) -> list[ServedResource]:
        return list(self._by_gvr.values())

    def storage_for(self, group: str, plural: str) -> ServedResource | None:
        """The storage version's info for a group-resource (any version when none is marked)."""
        found = None
        for (g, _v, p), info in self._by_gvr.items():
            if g == group and p == plural and info.stored_as is None:
                if info.storage:
                    return info
                found = found or info
        return found

    def group_versions(self) -> dict[str, list[str]]:
        """group -> served versions, preferred first (stable before beta before alpha, then higher)."""
        out: dict[str, list[str]] = {}
        for g, v, _p in self._by_gvr:
            if v not in out.setdefault(g, []):
                out[g].append(v)
        for versions in out.values():
            versions.sort(key=version_priority, reverse=True)
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))

    def resources_in(self, group: str, version: str) -> list[ServedResource]:
        return [i for (g, v, _p), i in self._by_gvr.items() if g == group and v == version]


def version_priority(version: str) -> tuple[int, int, int]:
    """Kubernetes version ordering: v2 > v1 > v1beta2 > v1beta1 > v1alpha1; non-matching sort last."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (-1, 0, 0)
    major, stage, minor = int(m[1]), m[2], int(m[3] or 0)
    return ({"alpha": 0, "beta": 1, None: 2}[stage], major, minor)
