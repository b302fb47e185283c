"""kubebuilder v4's CronJob tutorial (api/v1/cronjob_types.go), as the Go beside it."""

from typing import Literal

from pyscaffold_op.apimachinery import (
    Condition,
    CustomResource,
    GroupVersionKind,
    Int32,
    Int64,
    KubeModel,
    Time,
)
from pyscaffold_op.models.batch_v1 import JobTemplateSpec
from pyscaffold_op.models.core_v1 import ObjectReference

from . import GROUP, VERSION


class CronJobSpec(KubeModel):
    """CronJobSpec defines the desired state of CronJob."""

    # +kubebuilder:validation:MinLength=0
    schedule: str
    """The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."""
    # +kubebuilder:validation:Minimum=0
    starting_deadline_seconds: Int64 | None = None
    """Optional deadline in seconds for starting the job if it misses scheduled time for any reason."""
    # +kubebuilder:default:=Allow
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] | None = None
    """Specifies how to treat concurrent executions of a Job."""
    suspend: bool | None = None
    """This flag tells the controller to suspend subsequent executions."""
    job_template: JobTemplateSpec
    """Specifies the job that will be created when executing a CronJob."""
    # +kubebuilder:validation:Minimum=0
    successful_jobs_history_limit: Int32 | None = None
    """The number of successful finished jobs to retain."""
    # +kubebuilder:validation:Minimum=0
    failed_jobs_history_limit: Int32 | None = None
    """The number of failed finished jobs to retain."""


class CronJobStatus(KubeModel):
    """CronJobStatus defines the observed state of CronJob."""

    # +listType=atomic
    active: list[ObjectReference] | None = None
    """A list of pointers to currently running jobs."""
    last_schedule_time: Time | None = None
    """Information when was the last time the job was successfully scheduled."""
    # +listType=map
    # +listMapKey=type
    conditions: list[Condition] | None = None
    """conditions represent the current state of the CronJob resource."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class CronJob(CustomResource):
    """CronJob is the Schema for the cronjobs API."""

    gvk = GroupVersionKind(GROUP, VERSION, "CronJob")
    spec: CronJobSpec
    """spec defines the desired state of CronJob."""
    status: CronJobStatus | None = None
    """status defines the observed state of CronJob."""
