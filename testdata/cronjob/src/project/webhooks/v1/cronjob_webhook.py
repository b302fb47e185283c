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

"""Webhooks of the CronJob kind (batch.tutorial.kubebuilder.io/v1): defaults and validation.

The `# +kubebuilder:webhook:` lines are read by `make manifests`, which writes
config/webhook/manifests.yaml from them. `setup_cron_job_webhook_with_manager(mgr)` also serves the
conversion of v2 objects (`with_spokes`), since v1 is the hub.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyscaffold_op.runtime.webhook import FieldError, ValidationError, webhook_managed_by

from project.api.v1 import CronJob
from project.api.v1.cronjob_types import ConcurrencyPolicy
from project.api.v2 import CronJob as CronJobV2
from project.cron import ScheduleError, parse_standard

log = logging.getLogger("project.webhooks")

# Job names are the CronJob's plus "-<unix time>" (11 characters), and a Job's name must fit a
# 63-character DNS-1035 label (the controller-uid label of its Pods): so 52 at most.
MAX_NAME_LENGTH = 63 - 11


# +kubebuilder:webhook:path=/mutate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=mcronjob-v1.kb.io,admissionReviewVersions=v1
@dataclass
class CronJobCustomDefaulter:
    """Sets default values on CronJob objects when they are created or updated."""

    concurrency_policy: ConcurrencyPolicy = ConcurrencyPolicy.ALLOW
    suspend: bool = False
    successful_jobs_history_limit: int = 3
    failed_jobs_history_limit: int = 1

    def default(self, cron_job: CronJob) -> None:
        log.info("defaulting CronJob %s", cron_job.metadata.name)
        spec = cron_job.spec
        if spec.concurrency_policy is None:
            spec.concurrency_policy = self.concurrency_policy
        if spec.suspend is None:
            spec.suspend = self.suspend
        if spec.successful_jobs_history_limit is None:
            spec.successful_jobs_history_limit = self.successful_jobs_history_limit
        if spec.failed_jobs_history_limit is None:
            spec.failed_jobs_history_limit = self.failed_jobs_history_limit


# +kubebuilder:webhook:path=/validate-batch-tutorial-kubebuilder-io-v1-cronjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=create;update,versions=v1,name=vcronjob-v1.kb.io,admissionReviewVersions=v1
class CronJobCustomValidator:
    """Validates the name and the schedule of CronJob objects on create and update."""

    def validate_create(self, cron_job: CronJob) -> list[str]:
        log.info("validating CronJob %s creation", cron_job.metadata.name)
        return self._validate(cron_job)

    def validate_update(self, old: CronJob, new: CronJob) -> list[str]:
        log.info("validating CronJob %s update", new.metadata.name)
        return self._validate(new)

    def validate_delete(self, cron_job: CronJob) -> list[str]:
        return []  # not called: the marker's verbs are create;update

    def _validate(self, cron_job: CronJob) -> list[str]:
        errors: list[FieldError] = []
        name = cron_job.metadata.name or ""
        if len(name) > MAX_NAME_LENGTH:
            errors.append(FieldError.invalid("metadata.name", name, "must be no more than 52 characters"))
        schedule = cron_job.spec.schedule
        try:
            parse_standard(schedule)
        except ScheduleError as err:
            error = str(err)
            errors.append(FieldError.invalid("spec.schedule", schedule, error))
        if errors:
            raise ValidationError(CronJob, name, errors)
        return []


def setup_cron_job_webhook_with_manager(mgr: object) -> None:
    """Register the CronJob webhooks on `mgr.webhook_server` (or on a WebhookServer given directly)."""
    (
        webhook_managed_by(mgr)
        .for_(CronJob)
        .with_defaulter(CronJobCustomDefaulter())
        .with_validator(CronJobCustomValidator())
        .with_spokes(CronJobV2)
        .complete()
    )
