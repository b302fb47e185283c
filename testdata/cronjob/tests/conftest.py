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

"""Test set-up: pyop's envtest API server, with this project's CRDs from config/crd/bases.

pyop's pytest plugin (loaded by pytest wherever pyscaffold-op is installed: its `pytest11` entry point)
provides the fixtures `envtest` (a running API server), `kubeconfig` (a kubeconfig file for it),
`client` (a pyscaffold_op.runtime.Client) and `webhook_server`, and for a whole suite `envtest_suite`
(one server for the session), `envtest_namespace` (a namespace of it per test) and `suite_client`;
docs/envtest.md describes each. Like kubebuilder's envtest, it runs no
controller-manager: a Deployment your controller creates gets no ReplicaSet, Pods or status. To have
them, as a cluster would, override the `envtest_workloads` fixture here:

    import pytest
    from pyscaffold_op.envtest import Workloads

    @pytest.fixture
    def envtest_workloads() -> Workloads:
        return Workloads()  # Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs

The kubelet simulator runs Pods (phases, exit codes, logs); override `envtest_kubelet` to change its
rules. Override `envtest_crd_paths` to install CRDs from other folders.
"""
