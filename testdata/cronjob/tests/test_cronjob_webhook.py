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

"""The CronJob v1 webhooks: the Go tutorial's unit tests of the defaulter and the validator, then the
same webhooks called over HTTPS by pyop's envtest API server, as a cluster would call them.

The `webhook_server` fixture serves the webhooks on a local port with its own CA, registers it with
the API server as Service system/webhook-service and installs config/webhook/manifests.yaml.
"""

from __future__ import annotations

import asyncio
import importlib.util
import pkgutil
import shutil
from pathlib import Path

import pytest
from pyscaffold_op.apimachinery import ObjectMeta
from pyscaffold_op.runtime import Client, Invalid
from pyscaffold_op.runtime.webhook import ValidationError, WebhookServer
from pyscaffold_op.testing import load_sample

import project.webhooks
from project.api.v1 import CronJob
from project.api.v1.cronjob_types import ConcurrencyPolicy
from project.webhooks.v1.cronjob_webhook import CronJobCustomDefaulter, CronJobCustomValidator

SAMPLE = Path(__file__).resolve().parents[1] / "config/samples/batch_v1_cronjob.yaml"
VALID_NAME = "valid-cronjob-name"
TOO_LONG = "this-name-is-way-too-long-and-should-fail-validation-because-it-is-way-too-long"


def a_cron_job(name: str = VALID_NAME, schedule: str = "*/5 * * * *") -> CronJob:
    cron_job = load_sample(CronJob, SAMPLE)
    cron_job.metadata = ObjectMeta(name=name, namespace="default")
    cron_job.spec.schedule = schedule
    cron_job.spec.concurrency_policy = ConcurrencyPolicy.ALLOW
    cron_job.spec.successful_jobs_history_limit, cron_job.spec.failed_jobs_history_limit = 3, 1
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


def test_defaults_do_not_overwrite_fields_that_are_set() -> None:
    cron_job = a_cron_job()
    spec = cron_job.spec
    spec.concurrency_policy, spec.suspend = ConcurrencyPolicy.FORBID, True
    spec.successful_jobs_history_limit, spec.failed_jobs_history_limit = 5, 2
    CronJobCustomDefaulter().default(cron_job)
    assert (spec.concurrency_policy, spec.suspend) == (ConcurrencyPolicy.FORBID, True)
    assert (spec.successful_jobs_history_limit, spec.failed_jobs_history_limit) == (5, 2)


def test_a_name_longer_than_52_characters_is_denied() -> None:
    with pytest.raises(ValidationError, match="must be no more than 52 characters"):
        CronJobCustomValidator().validate_create(a_cron_job(name=TOO_LONG))
    assert CronJobCustomValidator().validate_create(a_cron_job()) == []


def test_an_invalid_schedule_is_denied() -> None:
    with pytest.raises(ValidationError, match="Expected exactly 5 fields, found 1: invalid-cron-schedule"):
        CronJobCustomValidator().validate_create(a_cron_job(schedule="invalid-cron-schedule"))
    assert CronJobCustomValidator().validate_create(a_cron_job(schedule="*/5 * * * *")) == []


def test_updates_are_validated_like_creates() -> None:
    old = a_cron_job()
    with pytest.raises(ValidationError) as denied:
        CronJobCustomValidator().validate_update(old, a_cron_job(name=TOO_LONG, schedule="invalid-cron-schedule"))
    assert [cause.path for cause in denied.value.errors] == ["metadata.name", "spec.schedule"]
    assert CronJobCustomValidator().validate_update(old, a_cron_job("valid-cronjob-name-updated", "0 0 * * *")) == []


async def test_the_api_server_applies_the_defaults(webhook_server: WebhookServer, client: Client) -> None:
    serve_cron_job_webhooks(webhook_server)
    cron_job = a_cron_job()
    spec = cron_job.spec
    spec.concurrency_policy = spec.suspend = spec.successful_jobs_history_limit = spec.failed_jobs_history_limit = None
    created = await client.create(cron_job)
    assert (created.spec.concurrency_policy, created.spec.suspend) == (ConcurrencyPolicy.ALLOW, False)
    assert (created.spec.successful_jobs_history_limit, created.spec.failed_jobs_history_limit) == (3, 1)


@pytest.mark.parametrize("schedule", ["@hourly", "@every 1h30m", "0 9 * * MON-FRI"])
async def test_the_api_server_admits_what_cron_parses(
    schedule: str, webhook_server: WebhookServer, client: Client
) -> None:
    serve_cron_job_webhooks(webhook_server)  # v2's too: each v1 object is converted for them
    created = await client.create(a_cron_job(schedule=schedule))
    assert created.spec.schedule == schedule


async def test_the_api_server_denies_invalid_objects(webhook_server: WebhookServer, client: Client) -> None:
    serve_cron_job_webhooks(webhook_server)
    with pytest.raises(Invalid) as denied:
        await client.create(a_cron_job(name="x" * 53, schedule="every day"))
    assert 'admission webhook "vcronjob-v1.kb.io" denied the request' in str(denied.value)
    causes = denied.value.details["causes"]
    assert [cause["field"] for cause in causes] == ["metadata.name", "spec.schedule"]
    assert "Expected exactly 5 fields, found 2: every day" in causes[1]["message"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_sees_defaults_and_denials(webhook_server: WebhookServer, kubeconfig: str) -> None:
    serve_cron_job_webhooks(webhook_server)

    async def kubectl(*args: str, stdin: str = "") -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            "kubectl", "--kubeconfig", kubeconfig, *args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate(stdin.encode())
        return proc.returncode or 0, out.decode(), err.decode()

    code, _, err = await kubectl("apply", "-f", str(SAMPLE))
    assert code == 0, err
    resource = "cronjobs.v1.batch.tutorial.kubebuilder.io"
    _, limits, _ = await kubectl(
        "get",
        resource,
        "cronjob-sample",
        "-o",
        "jsonpath={.spec.successfulJobsHistoryLimit}/{.spec.failedJobsHistoryLimit}",
    )
    assert limits == "3/1"
    bad = SAMPLE.read_text().replace('"*/1 * * * *"', '"61 * * * *"')
    code, _, err = await kubectl("apply", "-f", "-", stdin=bad)
    assert code == 1 and "spec.schedule: Invalid value: " in err and "End of range (61) above maximum (59): 61" in err
