# Copyright The Kubernetes authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""The CronJob API, v2: v1's, except that the schedule is a structure of its five fields instead of one
string (kubebuilder's multiversion tutorial). Objects are stored as v1 (the hub); the API server calls
the manager's /convert webhook for this version (cronjob_conversion.py).
"""

from enum import StrEnum

from pydantic import Field
from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, Int32, Int64, KubeModel, Time
from pyscaffold_op.models.batch_v1 import JobTemplateSpec
from pyscaffold_op.models.core_v1 import ObjectReference

from project.api.v2.cronjob_conversion import CronJobConversion
from project.api.v2.groupversion_info import GROUP, VERSION

CronField = str
"""represents a Cron field specifier."""


class CronSchedule(KubeModel):
    """describes a Cron schedule."""

    # +optional
    minute: CronField | None = None
    """minute specifies the minutes during which the job executes."""

    # +optional
    hour: CronField | None = None
    """hour specifies the hour during which the job executes."""

    # +optional
    day_of_month: CronField | None = None
    """dayOfMonth specifies the day of the month during which the job executes."""

    # +optional
    month: CronField | None = None
    """month specifies the month during which the job executes."""

    # +optional
    day_of_week: CronField | None = None
    """dayOfWeek specifies the day of the week during which the job executes."""

    def standard(self) -> str:
        """The five-field schedule this stands for; a field left out is `*`."""
        fields = (self.minute, self.hour, self.day_of_month, self.month, self.day_of_week)
        return " ".join(field or "*" for field in fields)


class ConcurrencyPolicy(StrEnum):
    """ConcurrencyPolicy describes how the job will be handled.
    Only one of the following concurrent policies may be specified.
    If none of the following policies is specified, the default one
    is AllowConcurrent."""

    ALLOW = "Allow"
    """Allows CronJobs to run concurrently."""
    FORBID = "Forbid"
    """Forbids concurrent runs, skipping next run if previous hasn't finished yet."""
    REPLACE = "Replace"
    """Cancels currently running job and replaces it with a new one."""


class CronJobSpec(KubeModel):
    """CronJobSpec defines the desired state of CronJob"""

    # +required
    schedule: CronSchedule
    """schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."""

    # +optional
    # +kubebuilder:validation:Minimum=0
    starting_deadline_seconds: Int64 | None = None
    """startingDeadlineSeconds defines in seconds for starting the job if it misses scheduled
    time for any reason.  Missed jobs executions will be counted as failed ones."""

    # +optional
    # +kubebuilder:default:=Allow
    concurrency_policy: ConcurrencyPolicy | None = None
    """concurrencyPolicy defines how to treat concurrent executions of a Job.
    Valid values are:
    - "Allow" (default): allows CronJobs to run concurrently;
    - "Forbid": forbids concurrent runs, skipping next run if previous run hasn't finished yet;
    - "Replace": cancels currently running job and replaces it with a new one"""

    # +optional
    suspend: bool | None = None
    """suspend tells the controller to suspend subsequent executions, it does
    not apply to already started executions.  Defaults to false."""

    # +required
    job_template: JobTemplateSpec
    """jobTemplate defines the job that will be created when executing a CronJob."""

    # +optional
    # +kubebuilder:validation:Minimum=0
    successful_jobs_history_limit: Int32 | None = None
    """successfulJobsHistoryLimit defines the number of successful finished jobs to retain.
    This is a pointer to distinguish between explicit zero and not specified."""

    # +optional
    # +kubebuilder:validation:Minimum=0
    failed_jobs_history_limit: Int32 | None = None
    """failedJobsHistoryLimit defines the number of failed finished jobs to retain.
    This is a pointer to distinguish between explicit zero and not specified."""


class CronJobStatus(KubeModel):
    """CronJobStatus defines the observed state of CronJob."""

    # +optional
    # +listType=atomic
    # +kubebuilder:validation:MinItems=1
    # +kubebuilder:validation:MaxItems=10
    active: list[ObjectReference] | None = None
    """active defines a list of pointers to currently running jobs."""

    # +optional
    last_schedule_time: Time | None = None
    """lastScheduleTime defines the information when was the last time the job was successfully scheduled."""

    # +listType=map
    # +listMapKey=type
    # +optional
    conditions: list[Condition] = Field(default_factory=list[Condition])
    """conditions represent the current state of the CronJob resource.
    Each condition has a unique type and reflects the status of a specific aspect of the resource.

    Standard condition types include:
    - "Available": the resource is fully functional
    - "Progressing": the resource is being created or updated
    - "Degraded": the resource failed to reach or maintain its desired state

    The status of each condition is one of True, False, or Unknown."""


# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
class CronJob(CronJobConversion, CustomResource):
    """CronJob is the Schema for the cronjobs API"""

    gvk = GroupVersionKind(GROUP, VERSION, "CronJob")
    plural = "cronjobs"
    namespaced = True

    # +required
    spec: CronJobSpec
    """spec defines the desired state of CronJob"""

    # +optional
    status: CronJobStatus | None = None
    """status defines the observed state of CronJob"""
