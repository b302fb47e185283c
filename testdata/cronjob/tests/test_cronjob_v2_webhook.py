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

"""The CronJob v2 webhooks: v1's defaults and checks on v2's schedule structure, called directly and over
HTTPS by pyop's envtest API server (the Go tutorial scaffolds v2's tests and leaves them empty).
"""

from __future__ import annotations

import importlib.util
import pkgutil
from pathlib import Path

import pytest
from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.runtime import Client, Invalid
from pyscaffold_op.runtime.webhook import ValidationError, WebhookServer
from pyscaffold_op.testing import load_sample

import project.webhooks
from project.api.v2 import CronJob
from project.api.v2.cronjob_types import ConcurrencyPolicy, CronSchedule
from project.webhooks.v2.cronjob_webhook import CronJobCustomDefaulter, CronJobCustomValidator

SAMPLE = Path(__file__).resolve().parents[1] / "config/samples/batch_v2_cronjob.yaml"


def a_cron_job(name: str = "valid-cronjob-name", schedule: CronSchedule | None = None) -> CronJob:
    cron_job = load_sample(CronJob, SAMPLE)
    cron_job.metadata = ObjectMeta(name=name, namespace="default")
    cron_job.spec.schedule = schedule or CronSchedule(minute="*/5")
    return cron_job


def serve_cron_job_webhooks(webhook_server: WebhookServer) -> None:
    """The CronJob webhooks of every version, served as the manager serves them: the API server calls
    each version's webhooks for a CronJob of any version (matchPolicy Equivalent)."""
    for version in pkgutil.iter_modules(project.webhooks.__path__):
        module = f"project.webhooks.{version.name}.cronjob_webhook"
        if version.ispkg and importlib.util.find_spec(module) is not None:
            importlib.import_module(module).setup_cron_job_webhook_with_manager(webhook_server)


def test_defaults_are_applied_to_fields_left_empty() -> None:
    cron_job = a_cron_job()
    spec = cron_job.spec
    spec.concurrency_policy = spec.suspend = spec.successful_jobs_history_limit = spec.failed_jobs_history_limit = None
    CronJobCustomDefaulter().default(cron_job)
    assert (spec.concurrency_policy, spec.suspend) == (ConcurrencyPolicy.ALLOW, False)
    assert (spec.successful_jobs_history_limit, spec.failed_jobs_history_limit) == (3, 1)


def test_the_schedule_fields_are_checked_as_one_cron_line() -> None:
    assert (
        CronJobCustomValidator().validate_create(a_cron_job(schedule=CronSchedule(hour="9", day_of_week="MON-FRI")))
        == []
    )
    with pytest.raises(ValidationError) as denied:
        CronJobCustomValidator().validate_create(a_cron_job(schedule=CronSchedule(minute="60")))
    [cause] = denied.value.errors
    assert str(cause) == (
        'spec.schedule: Invalid value: "60 * * * *": invalid cron schedule format: End of range (60) above maximum (59): 60'
    )


async def test_the_api_server_defaults_and_denies_v2_objects(webhook_server: WebhookServer, client: Client) -> None:
    serve_cron_job_webhooks(webhook_server)
    cron_job = a_cron_job()
    cron_job.spec.concurrency_policy = cron_job.spec.suspend = None
    created = await client.create(cron_job)
    assert (created.spec.concurrency_policy, created.spec.suspend) == (ConcurrencyPolicy.ALLOW, False)
    with pytest.raises(Invalid) as denied:
        await client.create(a_cron_job("x" * 53, CronSchedule(day_of_month="32")))
    # v1's validating webhook sees the object converted (and judges it first: its name sorts first)
    assert "must be no more than 52 characters" in str(denied.value)
    assert "End of range (32) above maximum (31): 32" in str(denied.value)
