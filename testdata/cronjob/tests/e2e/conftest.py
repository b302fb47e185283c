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

"""The e2e suite's set-up (kubebuilder's test/e2e/e2e_suite_test.go): the manager, run as users run it.

`make test-e2e` runs these tests (`make test` leaves them out: they are marked `e2e`). By default
`make envtest` serves pyop's emulator with this project's CRDs and webhook configurations and
`make run` starts the manager against it, each as a subprocess with its usual flags: the webhook
server with the local CA it writes, metrics over HTTPS behind TokenReview and SubjectAccessReview.
`make test-e2e ENVTEST=real` does the same over the real kube-apiserver + etcd (no kubelet runs Pods
there), `ENVTEST=cluster` over a cluster of real processes whose kwok runs them; `USE_EXISTING_CLUSTER=true make test-e2e` uses the cluster of your kubeconfig instead, as
kubebuilder's e2e does: `make docker-build install deploy` (set KIND_CLUSTER to `kind load` the image;
webhooks need cert-manager there). pyscaffold_op.testing.e2e has the details.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest
from pyscaffold_op.runtime import Client, load_config, new_client
from pyscaffold_op.testing.e2e import Operator, start_operator, target

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def operator(request: pytest.FixtureRequest) -> Iterator[Operator]:
    """The manager running against the server or cluster the suite targets, for the whole session."""
    with start_operator(ROOT, target(request.config.getoption("--envtest", default=None))) as running:
        yield running


@pytest.fixture
async def e2e_client(operator: Operator) -> AsyncIterator[Client]:
    """A client of that server, as the admin of its kubeconfig."""
    client = new_client(load_config(kubeconfig=str(operator.kubeconfig)))
    try:
        yield client
    finally:
        await client.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """On a failure, show what the manager logged (kubebuilder's AfterEach fetches the Pod's logs)."""
    report = yield
    running = item.funcargs.get("operator") if isinstance(item, pytest.Function) else None
    if call.when == "call" and call.excinfo is not None and isinstance(running, Operator):
        report.sections.append(("manager log", running.logs()[-20_000:]))
    return report
