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

"""End-to-end tests (kubebuilder's test/e2e/e2e_test.go): the manager runs, serves its metrics only
to a token allowed to read them, reconciles the samples and is called for their webhooks.

They read what `pyop create api` and `pyop create webhook` add (PROJECT, config/samples,
config/webhook/manifests.yaml), so they keep up with the project without edits. TODO(user): add
scenarios of your own beside them, e.g. a sample applied and its status checked (pyop's at example
has one in tests/e2e/test_at_e2e.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyscaffold_op.testing import eventually
from pyscaffold_op.testing.e2e import Operator, Sample, metric_value, samples

pytestmark = pytest.mark.e2e

SAMPLES = samples(Path(__file__).resolve().parents[2])


async def test_the_manager_runs(operator: Operator) -> None:
    assert operator.manager_running(), operator.logs()


async def test_metrics_are_served_only_to_a_token_allowed_to_read_them(operator: Operator) -> None:
    status, _ = await operator.scrape(None)
    assert status == 401  # no token: the TokenReview filter refuses
    status, _ = await operator.scrape(await operator.metrics_token(allowed=False))
    assert status == 403  # a token of an account not bound to the metrics-reader ClusterRole
    token = await operator.metrics_token()

    async def served() -> str:
        status, body = await operator.scrape(token)
        assert status == 200, body
        return body

    body = await eventually(served, timeout=60)
    # client-go's request counter (controller-runtime exports it): at least this scrape's TokenReview
    assert metric_value(body, "rest_client_requests_total") > 0


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.path.name for s in SAMPLES])
async def test_a_sample_is_admitted_and_reconciled(operator: Operator, sample: Sample) -> None:
    token = await operator.metrics_token()
    await eventually(lambda: operator.create(sample), timeout=60)  # the webhook server may be starting

    async def handled() -> bool:
        _, body = await operator.scrape(token)
        reconciled = sample.controller is None or any(
            metric_value(body, "controller_runtime_reconcile_total", controller=sample.controller, result=result) > 0
            for result in ("success", "requeue", "requeue_after")
        )
        called = all(
            metric_value(body, "controller_runtime_webhook_requests_total", webhook=path) > 0
            for path in sample.webhooks
        )
        return reconciled and called

    await eventually(handled, timeout=60)
