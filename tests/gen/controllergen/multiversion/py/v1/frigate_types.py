"""A multiversion kind, v1 the storage version."""

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, Int32, KubeModel

from . import GROUP, VERSION


class FrigateSpec(KubeModel):
    """FrigateSpec defines the desired state of Frigate."""

    schedule: str
    """The schedule in Cron format."""
    crew: Int32 | None = None
    """How many crew members."""


class FrigateStatus(KubeModel):
    """FrigateStatus defines the observed state of Frigate."""

    phase: str | None = None
    """The phase."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:storageversion
# +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
class Frigate(CustomResource):
    """Frigate is the Schema for the frigates API."""

    gvk = GroupVersionKind(GROUP, VERSION, "Frigate")
    spec: FrigateSpec
    status: FrigateStatus | None = None
