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

"""Conversion between CronJob v1 (the hub, stored) and v2: the schedule string and its five fields, both
ways, by hand and through the API server's /convert calls to the webhook server.
"""

from __future__ import annotations

import importlib.util
import pkgutil
from pathlib import Path

import pytest
from pyscaffold_op.apimachinery import Condition, ObjectMeta
from pyscaffold_op.runtime import Client
from pyscaffold_op.runtime.webhook import WebhookServer
from pyscaffold_op.testing import load_sample

import project.webhooks
from project.api.v1 import CronJob, CronJobStatus
from project.api.v2 import CronJob as CronJobV2
from project.api.v2.cronjob_conversion import V1_SCHEDULE
from project.api.v2.cronjob_types import CronSchedule

SAMPLES = Path(__file__).resolve().parents[1] / "config/samples"


def serve_cron_job_webhooks(webhook_server: WebhookServer) -> None:
    """The CronJob webhooks of every version, served as the manager serves them: the API server calls
    each version's webhooks for a CronJob of any version (matchPolicy Equivalent)."""
    for version in pkgutil.iter_modules(project.webhooks.__path__):
        module = f"project.webhooks.{version.name}.cronjob_webhook"
        if version.ispkg and importlib.util.find_spec(module) is not None:
            importlib.import_module(module).setup_cron_job_webhook_with_manager(webhook_server)


def v1_cron_job(schedule: str) -> CronJob:
    cron_job = load_sample(CronJob, SAMPLES / "batch_v1_cronjob.yaml")
    cron_job.metadata = ObjectMeta(name="converted", namespace="default")
    cron_job.spec.schedule = schedule
    return cron_job


@pytest.mark.parametrize(
    ("v1", "v2"),
    [
        ("*/1 * * * *", CronSchedule(minute="*/1")),
        ("0 9 1-7 * MON", CronSchedule(minute="0", hour="9", day_of_month="1-7", day_of_week="MON")),
        ("* * * * *", CronSchedule()),
    ],
)
def test_five_fields_convert_both_ways(v1: str, v2: CronSchedule) -> None:
    spoke = CronJobV2.convert_from(v1_cron_job(v1))
    assert spoke.spec.schedule == v2
    assert spoke.convert_to().spec.schedule == v1


def test_everything_else_is_carried_over() -> None:
    hub = v1_cron_job("0 0 * * *")
    hub.metadata.labels = {"team": "a"}
    hub.status = CronJobStatus(conditions=[Condition(type="Available", status="True", reason="AllJobsCompleted")])
    back = CronJobV2.convert_from(hub).convert_to()
    assert back.model_dump(exclude={"status"}) == hub.model_dump(exclude={"status"})
    assert back.status and [c.reason for c in back.status.conditions] == ["AllJobsCompleted"]


def test_descriptors_become_their_five_fields() -> None:
    assert CronJobV2.convert_from(v1_cron_job("@hourly")).spec.schedule == CronSchedule(minute="0")
    assert CronJobV2.convert_from(v1_cron_job("@weekly")).convert_to().spec.schedule == "0 0 * * 0"


def test_a_schedule_five_fields_cannot_hold_survives_the_round_trip() -> None:
    spoke = CronJobV2.convert_from(v1_cron_job("@every 1h30m"))
    assert spoke.spec.schedule == CronSchedule()
    assert (spoke.metadata.annotations or {})[V1_SCHEDULE] == "@every 1h30m"
    back = spoke.convert_to()
    assert back.spec.schedule == "@every 1h30m" and not back.metadata.annotations
    spoke.spec.schedule = CronSchedule(minute="5")  # a v2 client that sets the schedule replaces it
    assert spoke.convert_to().spec.schedule == "5 * * * *"


async def test_the_api_server_serves_each_version_converted(webhook_server: WebhookServer, client: Client) -> None:
    serve_cron_job_webhooks(webhook_server)
    await client.create(load_sample(CronJob, SAMPLES / "batch_v1_cronjob.yaml").model_copy(
        update={"metadata": ObjectMeta(name="cronjob-sample", namespace="default")}
    ))  # fmt: skip
    as_v2 = await client.get(CronJobV2, "cronjob-sample", namespace="default")
    assert as_v2.spec.schedule == CronSchedule(minute="*/1")
    as_v2.spec.schedule = CronSchedule(minute="0", hour="*/2")
    await client.update(as_v2)
    as_v1 = await client.get(CronJob, "cronjob-sample", namespace="default")
    assert as_v1.spec.schedule == "0 */2 * * *"
    [listed] = await client.list(CronJobV2, "default")
    assert listed.spec.schedule == CronSchedule(minute="0", hour="*/2")
