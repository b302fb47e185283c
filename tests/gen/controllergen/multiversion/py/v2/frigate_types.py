"""A multiversion kind, v2 served beside v1."""

from pyscaffold_op.apimachinery import CustomResource, GroupVersionKind, Int64, KubeModel

from . import GROUP, VERSION


class CronSchedule(KubeModel):
    """CronSchedule is a schedule broken into its fields."""

    minute: str | None = None
    """Minute field."""
    hour: str | None = None
    """Hour field."""


class FrigateSpec(KubeModel):
    """FrigateSpec defines the desired state of Frigate."""

    schedule: CronSchedule
    """The schedule, by field."""
    crew: Int64 | None = None
    """How many crew members."""


class FrigateStatus(KubeModel):
    """FrigateStatus defines the observed state of Frigate."""

    phase: str | None = None
    """The phase."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
class Frigate(CustomResource):
    """Frigate is the Schema for the frigates API."""

    gvk = GroupVersionKind(GROUP, VERSION, "Frigate")
    spec: FrigateSpec
    status: FrigateStatus | None = None
