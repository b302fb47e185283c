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

"""The At controller: moves the cluster towards the state each At object asks for."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pyscaffold_op.runtime import Client, EventRecorder, Manager, NotFound, Request, Result

from programming_kubernetes.api.v1alpha1 import At

log = logging.getLogger(__name__)


# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats,verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/status,verbs=get;update;patch
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/finalizers,verbs=update
@dataclass
class AtReconciler:
    """Reconciles At objects."""

    client: Client
    recorder: EventRecorder | None = None

    async def reconcile(self, request: Request) -> Result:
        """Compare the state an At object asks for with the cluster, and act to make them match.

        Called whenever an At (or an object the controller watches for it) changes. Return
        `Result(requeue_after=...)` to be called again later; raise to retry with backoff.
        """
        try:
            at = await self.client.get(At, request.name, namespace=request.namespace)
        except NotFound:
            # Deleted after the request was queued: owned objects are garbage-collected, nothing to do.
            return Result()

        # TODO(user): your logic here
        log.info("reconciling At %s", at.metadata.name)
        return Result()

    def setup_with_manager(self, mgr: Manager) -> None:
        """Register the controller with the manager: reconcile At objects as they change."""
        mgr.builder().for_(At).named("at").complete(self)
