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

"""Tests of the At controller against pyop's envtest API server (no cluster needed).

They share one API server for the whole session (`envtest_suite`: the CRDs are installed once) and
each gets a namespace of its own (`envtest_namespace`; `suite_client` creates in it by default).
"""

from __future__ import annotations

from pathlib import Path

from pyscaffold_op.envtest import Environment
from pyscaffold_op.runtime import Client, Manager, ManagerOptions, Request, Result
from pyscaffold_op.testing import eventually, load_sample

from programming_kubernetes.api.v1alpha1 import At
from programming_kubernetes.controllers.at_controller import AtReconciler

# The At this test creates is the one `kubectl apply -k config/samples` creates: when you change
# AtSpec, update the sample (the test fails naming it otherwise; `make manifests` checks it too).
SAMPLE = Path(__file__).resolve().parents[1] / "config/samples/programming-kubernetes_v1alpha1_at.yaml"


def new_at(namespace: str) -> At:
    """The At a test creates, in its namespace."""
    at = load_sample(At, SAMPLE)
    at.metadata.namespace = namespace
    return at


async def test_reconcile_runs_for_a_new_at(
    envtest_suite: Environment, suite_client: Client, envtest_namespace: str
) -> None:
    options = ManagerOptions(metrics_bind_address="0", health_probe_bind_address="0", namespace=envtest_namespace)
    mgr = Manager(envtest_suite.config, options)
    reconciler = AtReconciler(
        client=mgr.client,
        recorder=mgr.get_event_recorder("at-controller"),
    )
    seen: list[Request] = []
    reconcile = reconciler.reconcile

    async def counting_reconcile(request: Request) -> Result:
        seen.append(request)
        return await reconcile(request)

    reconciler.reconcile = counting_reconcile  # type: ignore[method-assign]
    reconciler.setup_with_manager(mgr)

    async with mgr.running():
        at = await suite_client.create(new_at(envtest_namespace))

        async def reconciled() -> bool:
            return any(request.name == at.metadata.name for request in seen)

        await eventually(reconciled)

    # TODO(user): create objects as your users would, and check what the controller did with them.
