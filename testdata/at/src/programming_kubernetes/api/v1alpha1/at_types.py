# Copyright The programming-kubernetes Authors.
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

"""At API types: the "cloud native at" command, run once at a scheduled time.

Edit the Spec and Status below, then run `make manifests` to regenerate the CRD from them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field
from pyscaffold_op.apimachinery import Condition, CustomResource, GroupVersionKind, KubeModel

from programming_kubernetes.api.v1alpha1.groupversion_info import GROUP, VERSION

Phase = Literal["PENDING", "RUNNING", "DONE"]
Outcome = Literal["Succeeded", "Failed"]

PHASE_PENDING: Phase = "PENDING"
PHASE_RUNNING: Phase = "RUNNING"
PHASE_DONE: Phase = "DONE"


class ScheduleError(ValueError):
    """spec.schedule is not an RFC 3339 date-time with a time zone."""


class AtSpec(KubeModel):
    """AtSpec defines the desired state of At: what to run, and when."""

    # +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Schedule",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
    # +kubebuilder:validation:Format=date-time
    # +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`
    schedule: str
    """When to run the command: an RFC 3339 date-time with a time zone, for example
    2026-12-02T15:04:05Z or 2026-12-02T23:04:05+08:00. A time in the past runs at once."""

    # +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Command",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
    command: str = Field(min_length=1)
    """Shell command to run. It runs as `sh -c <command>` in the container, so quotes, pipes,
    redirections and && behave as in a shell."""

    # +optional
    # +operator-sdk:csv:customresourcedefinitions:type=spec,displayName="Image",xDescriptors={"urn:alm:descriptor:com.tectonic.ui:text"}
    image: str = Field(default="busybox", min_length=1)
    """Container image that runs the command; it must provide /bin/sh."""

    def schedule_time(self) -> datetime:
        """spec.schedule as an aware datetime; raises ScheduleError when it has no time zone."""
        try:
            when = datetime.fromisoformat(self.schedule)
        except ValueError as err:
            raise ScheduleError(f"spec.schedule {self.schedule!r} is not an RFC 3339 date-time") from err
        if when.tzinfo is None:
            raise ScheduleError(f"spec.schedule {self.schedule!r} has no time zone (add Z or +HH:MM)")
        return when


class AtStatus(KubeModel):
    """AtStatus defines the observed state of At."""

    # +optional
    # +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Phase",xDescriptors={"urn:alm:descriptor:io.kubernetes.phase"}
    phase: Phase | None = None
    """PENDING until the schedule is due, RUNNING while the command's Pod runs, DONE when it ended."""

    # +optional
    # +listType=map
    # +listMapKey=type
    # +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Conditions",xDescriptors={"urn:alm:descriptor:io.kubernetes.conditions"}
    conditions: list[Condition] = Field(default_factory=list[Condition])
    """Conditions: Scheduled, and Succeeded once the command has finished."""

    # +optional
    # +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Pod",xDescriptors={"urn:alm:descriptor:io.kubernetes:Pod"}
    pod_name: str | None = None
    """Name of the Pod that runs the command."""

    # +optional
    start_time: datetime | None = None
    """When the command's Pod was created."""

    # +optional
    completion_time: datetime | None = None
    """When the command's Pod finished."""

    # +optional
    # +operator-sdk:csv:customresourcedefinitions:type=status,displayName="Outcome"
    outcome: Outcome | None = None
    """Succeeded or Failed, once the phase is DONE."""

    # +optional
    exit_code: int | None = None
    """Exit code of the command, when the kubelet reported it."""

    # +optional
    observed_generation: int | None = None
    """The .metadata.generation this status was computed for."""


# +operator-sdk:csv:customresourcedefinitions:displayName="At",resources={{Pod,v1,""}}
# +kubebuilder:object:root=true
# +kubebuilder:subresource:status
# +kubebuilder:printcolumn:name="Schedule",type="string",JSONPath=".spec.schedule"
# +kubebuilder:printcolumn:name="Command",type="string",JSONPath=".spec.command"
# +kubebuilder:printcolumn:name="Phase",type="string",JSONPath=".status.phase"
# +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
class At(CustomResource):
    """At is the Schema for the ats API: run a command once, at a scheduled time."""

    gvk = GroupVersionKind(GROUP, VERSION, "At")
    plural = "ats"
    namespaced = True

    spec: AtSpec
    status: AtStatus | None = None
