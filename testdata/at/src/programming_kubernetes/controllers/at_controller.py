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

"""The At reconciler: PENDING until the schedule is due, then RUNNING a Pod, then DONE.

Flow for one At (the seed's design, with its rough edges fixed):
- PENDING: if spec.schedule is in the future, requeue after exactly the time left; when due, move to
  RUNNING and create the Pod in the same pass (no extra round trip through the queue).
- RUNNING: make sure the Pod exists (adopt one left by an earlier run instead of creating a second),
  and move to DONE when it has Succeeded or Failed, recording which and the exit code.
- DONE: nothing left to do.
The Pod is owned by the At (controller reference), so deleting the At garbage-collects it, and the
controller watches owned Pods, so a Pod that finishes wakes its At up at once.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from pyscaffold_op.apimachinery import Condition, ObjectMeta, set_condition
from pyscaffold_op.models.core_v1 import Container, Pod, PodSpec, SecurityContext
from pyscaffold_op.runtime import (
    AlreadyExists,
    Client,
    Conflict,
    EventRecorder,
    Manager,
    NotFound,
    Request,
    Result,
    controllerutil,
)

from programming_kubernetes.api.v1alpha1.at_types import (
    PHASE_DONE,
    PHASE_PENDING,
    PHASE_RUNNING,
    At,
    AtStatus,
    ScheduleError,
)

log = logging.getLogger(__name__)

POD_CONTAINER = "command"
LABEL_AT = "programming-kubernetes.viper.run/at"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"


def pod_name_for(at_name: str) -> str:
    """The one Pod name an At may use: deterministic, so a retry or a restart finds it again."""
    name = f"{at_name}-pod"
    if len(name) <= 253:
        return name
    digest = hashlib.sha256(at_name.encode()).hexdigest()[:10]
    return f"{at_name[: 253 - 15]}-{digest}-pod"


def label_value_for(at_name: str) -> str:
    """Label values are capped at 63 characters; long At names are shortened with a hash."""
    if len(at_name) <= 63:
        return at_name
    return f"{at_name[:52]}-{hashlib.sha256(at_name.encode()).hexdigest()[:10]}"


def _utcnow() -> datetime:
    return datetime.now(UTC)


# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats,verbs=get;list;watch;create;update;patch;delete
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/status,verbs=get;update;patch
# +kubebuilder:rbac:groups=programming-kubernetes.viper.run,resources=ats/finalizers,verbs=update
# +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch
# +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch


@dataclass
class AtReconciler:
    """Reconciles At objects: see the module docstring for the phases."""

    client: Client
    recorder: EventRecorder | None = None
    clock: Callable[[], datetime] = field(default=_utcnow)

    async def reconcile(self, request: Request) -> Result:
        try:
            at = await self.client.get(At, request.name, namespace=request.namespace)
        except NotFound:
            return Result()  # deleted; its Pod goes with it through the owner reference
        if at.metadata.deletion_timestamp is not None:
            return Result()

        before = at.status.model_dump() if at.status else None
        status = at.status or AtStatus()
        at.status = status
        if status.phase is None:
            status.phase = PHASE_PENDING

        result = Result()
        if status.phase == PHASE_PENDING:
            result = await self._pending(at, status)
        if status.phase == PHASE_RUNNING:
            result = await self._running(at, status)

        status.observed_generation = at.metadata.generation
        if status.model_dump() != before:
            try:
                await self.client.status().update(at)
            except Conflict:
                # Someone wrote the At since we read it: read it again on the next pass.
                log.debug("conflict writing status of %s, requeueing", request)
                return Result(requeue=True)
        return result

    async def _pending(self, at: At, status: AtStatus) -> Result:
        try:
            when = at.spec.schedule_time()
        except ScheduleError as err:
            # Only reachable when the CRD's schema was bypassed. A spec edit bumps the generation
            # and wakes us again, so there is nothing to retry until then: no hot loop.
            self._condition(status, at, "Scheduled", "False", "InvalidSchedule", str(err))
            self._event(at, "Warning", "InvalidSchedule", "Schedule", str(err))
            return Result()
        remaining = (when - self.clock()).total_seconds()
        if remaining > 0:
            self._condition(status, at, "Scheduled", "True", "Waiting", f"runs at {when.isoformat()}")
            return Result(requeue_after=remaining)
        status.phase = PHASE_RUNNING
        self._condition(status, at, "Scheduled", "True", "Due", "the schedule is due")
        return Result()

    async def _running(self, at: At, status: AtStatus) -> Result:
        pod = await self._ensure_pod(at, status)
        if pod is None:
            return Result()
        phase = pod.status.phase if pod.status else None
        if phase not in ("Succeeded", "Failed"):
            return Result()  # the owned-Pod watch wakes us when it finishes
        status.phase = PHASE_DONE
        status.outcome = "Succeeded" if phase == "Succeeded" else "Failed"
        status.exit_code = _exit_code(pod)
        status.completion_time = self.clock().replace(microsecond=0)
        message = f"command {'succeeded' if phase == 'Succeeded' else 'failed'}"
        if status.exit_code is not None:
            message += f" with exit code {status.exit_code}"
        self._condition(status, at, "Succeeded", "True" if phase == "Succeeded" else "False", phase, message)
        self._event(at, "Normal" if phase == "Succeeded" else "Warning", phase, "RunCommand", message)
        return Result()

    async def _ensure_pod(self, at: At, status: AtStatus) -> Pod | None:
        name = pod_name_for(at.metadata.name or "")
        namespace = at.metadata.namespace
        try:
            pod = await self.client.get(Pod, name, namespace=namespace)
        except NotFound:
            pod = None
        if pod is not None:
            if not _controlled_by(pod, at):
                if any(ref.controller for ref in pod.metadata.owner_references):
                    message = f"Pod {name} exists and is controlled by another object"
                    self._condition(status, at, "Scheduled", "False", "PodConflict", message)
                    self._event(at, "Warning", "PodConflict", "CreatePod", message)
                    return None
                controllerutil.set_controller_reference(at, pod)  # adopt an orphan, never duplicate
                pod = await self.client.update(pod)
            status.pod_name = name
            if status.start_time is None:
                status.start_time = self.clock().replace(microsecond=0)
            return pod
        pod = self._new_pod(at, name)
        controllerutil.set_controller_reference(at, pod)
        try:
            pod = await self.client.create(pod)
        except AlreadyExists:
            return None  # created by an earlier pass the cache has not seen yet; its event wakes us
        status.pod_name = name
        status.start_time = self.clock().replace(microsecond=0)
        self._event(at, "Normal", "Started", "CreatePod", f"created Pod {name} to run the command")
        return pod

    def _new_pod(self, at: At, name: str) -> Pod:
        return Pod(
            metadata=ObjectMeta(
                name=name,
                namespace=at.metadata.namespace,
                labels={LABEL_AT: label_value_for(at.metadata.name or ""), LABEL_MANAGED_BY: "at-controller"},
            ),
            spec=PodSpec(
                # Never: a failing command must end the At in DONE/Failed, not restart forever.
                restart_policy="Never",
                containers=[
                    Container(
                        name=POD_CONTAINER,
                        image=at.spec.image,
                        # The whole command goes to one shell, so quoting survives intact.
                        command=["/bin/sh", "-c", at.spec.command],
                        security_context=SecurityContext(allow_privilege_escalation=False),
                    )
                ],
            ),
        )

    def _condition(
        self, status: AtStatus, at: At, type_: str, value: Literal["True", "False"], reason: str, message: str
    ) -> None:
        set_condition(
            status.conditions,
            Condition(
                type=type_,
                status=value,
                reason=reason,
                message=message,
                observed_generation=at.metadata.generation,
            ),
        )

    def _event(self, at: At, type_: str, reason: str, action: str, note: str) -> None:
        if self.recorder is not None:
            self.recorder.eventf(at, None, type_, reason, action, note)

    def setup_with_manager(self, mgr: Manager) -> None:
        mgr.builder().for_(At).owns(Pod).named("at").complete(self)


def _controlled_by(pod: Pod, at: At) -> bool:
    return any(ref.controller and ref.uid == at.metadata.uid for ref in pod.metadata.owner_references)


def _exit_code(pod: Pod) -> int | None:
    for container in (pod.status.container_statuses if pod.status else None) or []:
        terminated = container.state.terminated if container.state else None
        if container.name == POD_CONTAINER and terminated is not None:
            return terminated.exit_code
    return None
