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

"""Conversion of CronJob v2 (a spoke) to and from the hub, CronJob v1.

The API server calls the manager's /convert webhook to serve v2 objects, which are stored as v1. Only
the schedule differs: v1's string, v2's five fields. Both directions are total, unlike the Go
tutorial's `ConvertFrom`, which fails on every schedule that is not five fields, so that a v1 CronJob
scheduled `@hourly` can neither be read as v2 nor created at all once v2 has webhooks (the API server
converts it for them). Descriptors become their five fields; `@every <duration>`, which five fields
cannot say, travels in an annotation and comes back unchanged. Every other field, status conditions
included (which Go's rote copy drops), is carried over as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self, cast

from project.api.v1 import CronJob

if TYPE_CHECKING:
    from project.api.v2.cronjob_types import CronJob as CronJobV2

# The v1 schedule of a v2 object whose schedule five fields cannot hold (`@every 1h30m`).
V1_SCHEDULE = "batch.tutorial.kubebuilder.io/v1-schedule"

DESCRIPTORS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
FIELDS = ("minute", "hour", "dayOfMonth", "month", "dayOfWeek")


class CronJobConversion:
    """Mixed into CronJob v2: `convert_to()` gives the hub, `convert_from(hub)` a v2 object."""

    def convert_to(self) -> CronJob:
        spoke = cast("CronJobV2", self)
        data = spoke.to_dict()
        annotations: dict[str, str] = data["metadata"].pop("annotations", {})
        kept = annotations.pop(V1_SCHEDULE, None)
        if annotations:
            data["metadata"]["annotations"] = annotations
        schedule = data["spec"]["schedule"]
        unchanged = kept is not None and not schedule  # a v2 client that sets a field replaces it
        data["spec"]["schedule"] = kept if unchanged else spoke.spec.schedule.standard()
        return CronJob.model_validate({**data, "apiVersion": CronJob.gvk.api_version})

    @classmethod
    def convert_from(cls, hub: CronJob) -> Self:
        data: dict[str, Any] = hub.to_dict()
        schedule = DESCRIPTORS.get(hub.spec.schedule, hub.spec.schedule)
        parts = schedule.split()
        if len(parts) == len(FIELDS):
            data["spec"]["schedule"] = {name: part for name, part in zip(FIELDS, parts, strict=True) if part != "*"}
        else:
            data["spec"]["schedule"] = {}
            data["metadata"].setdefault("annotations", {})[V1_SCHEDULE] = hub.spec.schedule
        return cls.model_validate({**data, "apiVersion": cls.gvk.api_version})  # type: ignore[attr-defined]
