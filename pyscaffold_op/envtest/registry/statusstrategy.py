"""What a `/status` write of a built-in kind takes from the object sent and what it keeps from the
stored one, as each kind's status strategy in kube-apiserver v1.37.2 does (`PrepareForUpdate` of the
`*StatusStrategy` types in `pkg/registry/*/*/strategy.go`).

Every one of them keeps the stored spec (everything but metadata and status). What they do with the
metadata sent differs: most keep it, so a status PATCH may change annotations, labels, finalizers
and owner references (a Deployment's keeps its labels, a Pod's its owner references); the newer kinds
call `metav1.ResetObjectMetaForStatus`, which keeps the stored labels, annotations, finalizers and
owner references; FlowSchemas and PriorityLevelConfigurations keep all the stored metadata. Custom
resources keep everything but the status (apiextensions-apiserver's status strategy), done by the
store itself; CertificateSigningRequests have their own merge (`certificates`).
"""

from __future__ import annotations

from pyscaffold_op.envtest.types import GR

# metav1.ResetObjectMetaForStatus (deletionTimestamp, generation and selfLink are kept by every update)
_RESET_FOR_STATUS = ("labels", "annotations", "finalizers", "ownerReferences")
_ALL_META = ("*",)

# group-resource -> metadata fields a status write takes from the stored object; kinds not listed
# keep the metadata sent
STATUS_KEEPS_META: dict[GR, tuple[str, ...]] = {
    ("apps", "deployments"): ("labels",),
    ("", "pods"): ("ownerReferences",),
    ("certificates.k8s.io", "podcertificaterequests"): _RESET_FOR_STATUS,
    ("scheduling.k8s.io", "podgroups"): _RESET_FOR_STATUS,
    ("scheduling.k8s.io", "compositepodgroups"): _RESET_FOR_STATUS,
    ("networking.k8s.io", "servicecidrs"): _RESET_FOR_STATUS,
    ("storagemigration.k8s.io", "storageversionmigrations"): _RESET_FOR_STATUS,
    ("resource.k8s.io", "resourceclaims"): _RESET_FOR_STATUS,
    ("resource.k8s.io", "devicetaintrules"): _RESET_FOR_STATUS,
    ("resource.k8s.io", "resourcepoolstatusrequests"): _RESET_FOR_STATUS,
    ("internal.apiserver.k8s.io", "storageversions"): _RESET_FOR_STATUS,
    ("storage.k8s.io", "volumeattachments"): _RESET_FOR_STATUS,
    ("storage.k8s.io", "csinodes"): _RESET_FOR_STATUS,
    ("admissionregistration.k8s.io", "validatingadmissionpolicies"): _RESET_FOR_STATUS,
    ("flowcontrol.apiserver.k8s.io", "flowschemas"): _ALL_META,
    ("flowcontrol.apiserver.k8s.io", "prioritylevelconfigurations"): _ALL_META,
}


def kept_meta(gr: GR) -> tuple[str, ...]:
    """The metadata fields a status write of `gr` keeps from the stored object (`*`: all of it,
    managedFields aside)."""
    return STATUS_KEEPS_META.get(gr, ())
